/**
 * `e2e-scale`: a scale run on a fresh control plane of the test harness (kube-apiserver + etcd +
 * kube-controller-manager + the test kubelet, dco's manager as a host process, the `default`
 * ConversionWebhookServer's replicas as real webhook-server Pods behind a Service). Generates the
 * fleet (hack/scale/generate.ts), applies it, creates the instances, rolls the webhook-server
 * Deployment (cold start against the fleet), benchmarks List/Get at v1 and v2, observes the
 * replicas and writes the result JSON — also when the run had errors.
 *
 *   sudo -E bash hack/deno.sh run --allow-all hack/e2e_scale.ts --targets 100 --instances 20 \
 *     --result-json /tmp/scale-result.json [--baseline previous.json]
 *   ... hack/e2e_scale.ts --targets 1000 --sync-only            # initial sync and memory only
 *   ... hack/e2e_scale.ts --list-bench [--objects 1500 --object-bytes 10240]
 *
 * Needs root (the pod network) and the control-plane binaries (hack/testenv.sh). Exit 0 when the
 * run had no Get/List error, no setup failure, an observation, and (with --baseline) no
 * regression; 1 otherwise; 2 on bad flags. Prints `scale-summary <json>` (the cold start's peaks
 * and every replica's figures) as its last line of output.
 */
import { FlagError, type FlagSpec, parseFlags } from "../src/lib/flags.ts";
import { parseGoDuration } from "../src/engine/units.ts";
import { startControlPlane } from "../tests/support/control_plane.ts";
import { adminHttpClient } from "../tests/support/watch_recorder.ts";
import { Api } from "./scale/api.ts";
import { fleetOptionsError } from "./scale/generate.ts";
import { fillListBench, runListBench, setUpListBench } from "./scale/list_bench.ts";
import { TokenBucket } from "./scale/limiter.ts";
import { baselineOf, compareScaleResults, renderMarkdown } from "./scale/report.ts";
import { scaleRun, type ScaleRunOptions } from "./scale/scale_run.ts";
import type { ColdStartReplica } from "./scale/cold_start_trace.ts";
import type { ReplicaObservation } from "./scale/observe.ts";
import { scaleKubelet, startScaleStack } from "./scale/stack.ts";

const FLAGS: FlagSpec[] = [
  { name: "namespace", kind: "string", default: "dco-scale", help: "namespace of the instances" },
  { name: "targets", kind: "string", default: "4", help: "generated CRDs" },
  { name: "instances", kind: "string", default: "5", help: "instances per CRD" },
  { name: "strategies-min", kind: "string", default: "3", help: "fewest slots per spoke" },
  { name: "strategies-max", kind: "string", default: "10", help: "most slots per spoke" },
  { name: "seed", kind: "string", default: "1", help: "seed of the generator" },
  { name: "parallel", kind: "string", default: "8", help: "workers of creates and reads" },
  { name: "timeout", kind: "string", default: "30m", help: "deadline of the whole run" },
  { name: "list-repeats", kind: "string", default: "3", help: "LISTs per CRD and version" },
  { name: "get-repeats", kind: "string", default: "1", help: "GETs per instance and version" },
  { name: "qps", kind: "string", default: "100", help: "client rate limit" },
  { name: "burst", kind: "string", default: "200", help: "client burst" },
  { name: "replicas", kind: "string", default: "2", help: "webhook-server replicas" },
  {
    name: "memory-limit",
    kind: "string",
    default: "",
    help: "replicas' memory limit (the manager derives the V8 heap limit from it)",
  },
  {
    name: "then-memory-limit",
    kind: "string",
    default: "",
    help: "after the run, set this memory limit and measure a second cold start under it",
  },
  { name: "settle", kind: "string", default: "10s", help: "wait before observing the replicas" },
  { name: "sync-only", kind: "bool", help: "no instances and no benchmark: initial sync, memory" },
  { name: "result-json", kind: "string", default: "scale-result.json", help: "where to write" },
  { name: "baseline", kind: "string", default: "", help: "a previous result to compare with" },
  { name: "threshold", kind: "string", default: "1.5", help: "regression threshold (> 1.0)" },
  { name: "list-bench", kind: "bool", help: "the LIST question instead of a fleet" },
  { name: "objects", kind: "string", default: "1500", help: "--list-bench: objects" },
  { name: "object-bytes", kind: "string", default: "10240", help: "--list-bench: bytes each" },
  { name: "bench-repeats", kind: "string", default: "20", help: "--list-bench: LISTs/version" },
  { name: "gets", kind: "string", default: "300", help: "--list-bench: GETs per version" },
];

function log(msg: string): void {
  console.log(`[e2e-scale ${new Date().toISOString().slice(11, 23)}] ${msg}`);
}

function integer(name: string, raw: string, min: number): number {
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min) {
    throw new FlagError(`invalid argument "${raw}" for --${name}: an integer >= ${min}`);
  }
  return Number(raw);
}

interface Parsed {
  run: Omit<ScaleRunOptions, "log">;
  replicas: number;
  memoryLimit?: string;
  resultJSON: string;
  baseline?: string;
  threshold: number;
  listBench?: { objects: number; objectBytes: number; listRepeats: number; gets: number };
}

function parse(args: string[]): Parsed {
  const flags = parseFlags(args, FLAGS);
  if (flags.positionals.length > 0) throw new FlagError(`unexpected ${flags.positionals[0]}`);
  const str = (name: string) => flags.string(name) ?? FLAGS.find((f) => f.name === name)!.default!;
  const int = (name: string, min = 1) => integer(name, str(name), min);
  const ns = parseGoDuration(str("timeout"));
  const timeoutMs = ns === undefined ? 0 : Number(ns / 1_000_000n);
  if (timeoutMs <= 0) {
    throw new FlagError(`invalid argument "${str("timeout")}" for --timeout: a duration`);
  }
  const settleNs = parseGoDuration(str("settle"));
  if (settleNs === undefined || settleNs < 0n) {
    throw new FlagError(`invalid argument "${str("settle")}" for --settle: a duration`);
  }
  const threshold = Number(str("threshold"));
  if (!(threshold > 1)) throw new FlagError("--threshold must be > 1.0");
  const run = {
    namespace: str("namespace"),
    targets: int("targets"),
    instances: int("instances", 0),
    strategiesMin: int("strategies-min"),
    strategiesMax: int("strategies-max"),
    seed: int("seed", 0),
    parallel: int("parallel"),
    listRepeats: int("list-repeats", 0),
    getRepeats: int("get-repeats", 0),
    qps: int("qps"),
    burst: int("burst"),
    timeoutMs,
    syncOnly: flags.bool("sync-only"),
    settleMs: Number(settleNs / 1_000_000n),
    thenMemoryLimit: str("then-memory-limit") || undefined,
  };
  const invalid = fleetOptionsError(run);
  if (invalid !== undefined) throw new FlagError(invalid);
  return {
    run,
    replicas: int("replicas"),
    memoryLimit: str("memory-limit") || undefined,
    resultJSON: str("result-json"),
    baseline: str("baseline") || undefined,
    threshold,
    listBench: flags.bool("list-bench")
      ? {
        objects: int("objects"),
        objectBytes: int("object-bytes"),
        listRepeats: int("bench-repeats"),
        gets: int("gets"),
      }
      : undefined,
  };
}

async function main(args: string[]): Promise<number> {
  let p: Parsed;
  try {
    p = parse(args);
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    console.error(`e2e-scale: ${e.message}`);
    return 2;
  }
  if (Deno.uid?.() !== 0) {
    console.error("hack/e2e_scale.ts needs root: the test kubelet's pod network");
    return 2;
  }
  const started = performance.now();
  await using cp = await startControlPlane({ name: "scale", kubelet: scaleKubelet() });
  await using stack = await startScaleStack(cp, {
    replicas: p.replicas,
    memoryLimit: p.memoryLimit,
  });
  log(
    `control plane and ${p.replicas} webhook-server replicas ready in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s` +
      (p.memoryLimit ? ` (memory limit ${p.memoryLimit})` : ""),
  );

  if (p.listBench) {
    const client = adminHttpClient(cp);
    const api = new Api({
      server: cp.server,
      client,
      limiter: new TokenBucket(p.run.qps, p.run.burst),
    });
    const opts = { namespace: p.run.namespace, parallel: p.run.parallel, ...p.listBench };
    await setUpListBench(api, opts);
    const t0 = performance.now();
    const bytes = await fillListBench(api, opts);
    log(
      `${opts.objects} objects of ${bytes} bytes created in ` +
        `${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const bench = await runListBench(new Api({ server: cp.server, client }), opts, stack.namespace);
    client.close();
    await Deno.writeTextFile(p.resultJSON, JSON.stringify(bench, null, 2) + "\n");
    const f = (n: number) => n.toFixed(1);
    log(
      `LIST ${opts.objects} × ${bench.objectBytes} B (${
        (bench.listBytes.v1 / 2 ** 20).toFixed(1)
      } MiB): ` +
        `v1 (storage) p50 ${f(bench.list.v1.p50Ms)} ms p99 ${f(bench.list.v1.p99Ms)} ms; ` +
        `v2 (converted) p50 ${f(bench.list.v2.p50Ms)} ms p99 ${f(bench.list.v2.p99Ms)} ms; ` +
        `ratio p50 ${bench.list.p50Ratio.toFixed(2)}× p99 ${bench.list.p99Ratio.toFixed(2)}×`,
    );
    log(
      `GET v1 p50 ${f(bench.get.v1.p50Ms)} p99 ${f(bench.get.v1.p99Ms)} ms; ` +
        `v2 p50 ${f(bench.get.v2.p50Ms)} p99 ${f(bench.get.v2.p99Ms)} ms`,
    );
    log(
      `conversion calls per v2 LIST ${bench.conversion.lists.callsPerRequest}, per v2 GET ` +
        `${bench.conversion.gets.callsPerRequest} (apiserver ${
          f(bench.conversion.gets.apiserverCallMs)
        } ms ` +
        `per call, replica ${f(bench.conversion.gets.replicaReviewMs)} ms per review)`,
    );
    console.log(`list-bench-summary ${JSON.stringify(bench)}`);
    return 0;
  }

  const out = await scaleRun(cp, stack, { ...p.run, log });
  await Deno.writeTextFile(p.resultJSON, JSON.stringify(out.result, null, 2) + "\n");
  log(`wrote ${p.resultJSON}`);
  for (const [phase, samples] of Object.entries(out.errorSamples)) {
    for (const s of samples) console.error(`${phase} error: ${s}`);
  }
  for (const problem of out.problems) console.error(`problem: ${problem}`);
  const mib = (b?: number) => (b === undefined ? "?" : (b / 2 ** 20).toFixed(1));
  const describe = (
    label: string,
    c: { coldStart: ColdStartReplica[]; replicas: ReplicaObservation[] },
  ) => {
    for (const c0 of c.coldStart) {
      log(
        `${label} cold start ${c0.pod}: peak heap ${mib(c0.peakHeapUsedBytes)} MiB ` +
          `(${c0.samples} samples), peak RSS ${mib(c0.peakRssBytes)} MiB`,
      );
    }
    for (const r of c.replicas) {
      log(
        `${label} steady ${r.pod}: initial sync ${r.initialSyncSeconds} s for ` +
          `${r.initialSyncTargets} targets, heap ${mib(r.heapUsedBytes)} MiB, ` +
          `working set ${mib(r.workingSetBytes)} MiB (peak ${mib(r.peakWorkingSetBytes)} MiB)`,
      );
    }
  };
  describe(p.memoryLimit ? `[limit ${p.memoryLimit}]` : "[no limit]", out);
  if (out.limited) describe(`[limit ${p.run.thenMemoryLimit}]`, out.limited);
  let failed = out.problems.length > 0;
  const report = compareScaleResults(
    out.result,
    p.baseline
      ? baselineOf(JSON.parse(await Deno.readTextFile(p.baseline)), p.baseline)
      : undefined,
    p.threshold,
  );
  console.log(renderMarkdown(report, out.result));
  for (const line of report.failures) console.error(line);
  // Without a baseline only the absolute failures count (a sync-only run issues no requests).
  if (report.failures.length > 0 && !(p.run.syncOnly && !p.baseline)) failed = true;
  console.log(`scale-summary ${
    JSON.stringify({
      totalSeconds: (performance.now() - started) / 1000,
      setup: out.setup,
      rollSeconds: out.rollSeconds,
      coldStart: out.coldStart,
      replicas: out.replicas,
      memoryLimit: p.memoryLimit ?? null,
    })
  }`);
  return failed ? 1 : 0;
}

if (import.meta.main) {
  let code = 1;
  try {
    code = await main(Deno.args);
  } catch (e) {
    console.error(`e2e-scale: ${(e as Error).stack ?? e}`);
  }
  Deno.exit(code);
}
