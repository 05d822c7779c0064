/**
 * The soak: reads and writes at the converted version of a CRD for `--duration` while the
 * webhook-server Deployment is `kubectl rollout restart`ed `--restarts` times at even intervals,
 * on the test harness (real kube-apiserver, etcd, kube-controller-manager, the test kubelet running
 * real webhook-server Pods behind their Service, the manager as a host process). It counts reads,
 * writes, failures and wrong values (each write read back digit for digit, int64s beyond 2^53
 * included), and samples every Ready replica's own /metrics (RSS, V8 heap, event-loop lag) and its
 * open file descriptors over the run; the heap samples go through the leak rule of
 * hack/soak/leak.ts.
 *
 *   deno run --allow-all hack/e2e_soak.ts [--duration 480] [--restarts 4] [--hold 240]
 *     [--out soak-result.json] [--replicas 2] [--workers 4] [--sample-interval 2]
 *     [--leak-warmup 20] [--leak-window 10] [--leak-drop 0.15] [--leak-min-span 60]
 *     [--leak-max-slope 16384] [--require-leak-verdict true]
 *
 * `--duration` and `--hold` are seconds (`480`, `480s` or `8m`); the restarts fall within
 * `--duration`, the hold is more of the same traffic without one (so the last replicas live
 * through full collections). Needs root (the pod network) and the control-plane binaries
 * (hack/testenv.sh). Prints progress and a summary; writes the result JSON (hack/soak/result.ts)
 * to `--out` once the stack was up, failed run or not. Exit 0 only when every check held: a clean
 * 5 s self-check, ≥ 100 reads and ≥ 100 writes, 0 failed reads or writes, 0 wrong values, every
 * restart rolled out, samples collected, no judged replica leaking, and (unless
 * `--require-leak-verdict false`) at least one replica judged. Exit 2: bad flags.
 */
import { OBJECTS_PER_WORKER, parseSoakArgs, type SoakOptions } from "./soak/flags.ts";
import { type HeapSample, judgeLeak } from "./soak/leak.ts";
import {
  seed,
  type Sequence,
  Tally,
  type Target,
  type Value,
  verifyAll,
  worker,
} from "./soak/load.ts";
import { SOAK_RESULT_SCHEMA_VERSION, type SoakResult, SoakResultSchema } from "./soak/result.ts";
import { ReplicaSampler } from "./soak/sampler.ts";
import { renderSummary, spread, steadySamples } from "./soak/summary.ts";
import { type ControlPlane, startControlPlane, waitFor } from "../tests/support/control_plane.ts";
import {
  fieldRenameConfig,
  getJSON,
  type Obj,
  readyWebhookServer,
  rolloutRestart,
  startDcoStack,
  twoVersionCRD,
  WEBHOOK_SERVER_SA,
  webhookServer,
  webhookServerKubelet,
} from "../tests/support/dco_stack.ts";
import { adminHttpClient } from "../tests/support/watch_recorder.ts";

const GROUP = "soak.dco.test";
const PLURAL = "widgets";
const KIND = "Widget";
const TARGET = `${PLURAL}.${GROUP}`;
const IMAGE = "dco.test/webhook-server:soak";
const CWS = "soak";
const DEPLOYMENT = `${CWS}-webhook-server`;
const SELF_CHECK_MS = 5_000;

function log(msg: string): void {
  console.log(`[soak ${new Date().toISOString().slice(11, 23)}] ${msg}`);
}

/** The CRD: v1 (`size`, storage) and v2 (`capacity`), a number `ratio` and a string `owner`. */
function crd(): Obj {
  return twoVersionCRD({
    group: GROUP,
    plural: PLURAL,
    kind: KIND,
    stringFields: ["owner"],
    specFields: { ratio: { type: "number" } },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Runs the soak; resolves to the result (also written to `opts.out`). */
export async function runSoak(opts: SoakOptions): Promise<SoakResult> {
  const { envelope: env } = opts;
  await using cp: ControlPlane = await startControlPlane({
    name: "soak",
    kubelet: webhookServerKubelet(IMAGE),
  });
  await using manager = await startDcoStack(cp, {
    caName: "dco-soak-ca",
    webhookServerImage: IMAGE,
    features: { xrd: false },
  });
  const { namespace: ns, failing } = manager;
  await cp.apply(webhookServer(CWS, {
    default: true,
    replicas: env.replicas,
    serviceAccountName: WEBHOOK_SERVER_SA,
    certificate: { issuerRef: { name: "unused" } },
  }));
  await cp.apply(crd());
  await cp.waitForCRD(TARGET);
  await cp.apply(fieldRenameConfig({
    kind: "CRDConversionConfig",
    name: PLURAL,
    target: TARGET,
    spokePath: "spec.capacity",
  }));
  await waitFor("the server ready", () => readyWebhookServer(cp, CWS, env.replicas), {
    timeoutMs: 180_000,
  }).catch(failing);
  await waitFor("the config Applied", async () => {
    const c = await getJSON(cp, `crdconversionconfigs.terasky.com`, PLURAL);
    return c.status?.phase === "Applied";
  }, { timeoutMs: 120_000 }).catch(failing);

  const objNs = await cp.createNamespace("objects");
  const client = adminHttpClient(cp);
  const target: Target = {
    server: cp.server,
    client,
    group: GROUP,
    plural: PLURAL,
    kind: KIND,
    namespace: objNs,
  };
  const seq: Sequence = { next: 0 };
  const names = Array.from(
    { length: env.objects },
    (_, i) => `w${Math.floor(i / OBJECTS_PER_WORKER)}-${i % OBJECTS_PER_WORKER}`,
  );
  const values = await seed(target, names, seq);
  // One map per worker: the objects it owns.
  const owned = Array.from({ length: env.workers }, (_, w) =>
    new Map<string, Value>(
      names.slice(w * OBJECTS_PER_WORKER, (w + 1) * OBJECTS_PER_WORKER).map((
        n,
      ) => [n, values.get(n)!]),
    ));
  await waitFor("the first converted read", async () => {
    const r = await fetch(
      `${cp.server}/apis/${GROUP}/v2/namespaces/${objNs}/${PLURAL}/${names[0]}`,
      {
        client,
      },
    );
    await r.body?.cancel();
    return r.ok;
  }, { timeoutMs: 60_000 }).catch(failing);
  log(`${env.replicas} replicas ready, config Applied, ${names.length} objects seeded at v1`);

  // The clock: 0 is the end of the self-check (samples during it have t < 0).
  const origin = performance.now() + SELF_CHECK_MS;
  const clock = () => (performance.now() - origin) / 1000;
  const podsPath =
    `/api/v1/namespaces/${ns}/pods?labelSelector=app.kubernetes.io%2Finstance%3D${CWS}`;
  const sampler = new ReplicaSampler({
    clock,
    listPods: async () => {
      const r = await fetch(`${cp.server}${podsPath}`, { client });
      if (!r.ok) throw new Error(`listing pods: ${r.status}`);
      return (await r.json()).items;
    },
  });
  const samplerStop = new AbortController();
  const sampling = (async () => {
    while (!samplerStop.signal.aborted) {
      const next = performance.now() + env.sampleIntervalSeconds * 1000;
      await sampler.round();
      await sleep(next - performance.now());
    }
  })();

  const problems: string[] = [];
  const restarts: SoakResult["restarts"] = [];
  const selfCheck = new Tally();
  const traffic = new Tally();
  let elapsedSeconds = 0;
  try {
    // The self-check: the same load for 5 s before anything restarts must be clean, or the
    // checker (or the stack) is broken and the soak would measure nothing.
    {
      const stop = new AbortController();
      const running = owned.map((o) => worker(target, o, seq, stop.signal, selfCheck));
      await sleep(origin - performance.now());
      stop.abort();
      await Promise.all(running);
      log(
        `self-check: ${selfCheck.reads} reads, ${selfCheck.writes} writes, ` +
          `${selfCheck.failures} failed, ${selfCheck.wrongValues} wrong`,
      );
      if (selfCheck.failures > 0 || selfCheck.wrongValues > 0 || selfCheck.writes === 0) {
        problems.push(`self-check not clean: ${JSON.stringify(selfCheck.snapshot())}`);
      }
    }
    if (problems.length === 0) {
      const stop = new AbortController();
      const started = performance.now();
      const running = owned.map((o) => worker(target, o, seq, stop.signal, traffic));
      try {
        for (let i = 1; i <= env.restarts; i++) {
          await sleep(
            started + (i * env.durationSeconds * 1000) / (env.restarts + 1) - performance.now(),
          );
          const at = clock();
          await rolloutRestart(cp, ns, DEPLOYMENT, 300_000);
          const rolloutSeconds = clock() - at;
          restarts.push({ at, rolloutSeconds });
          log(
            `restart ${i}/${env.restarts} at ${at.toFixed(1)} s rolled out in ` +
              `${rolloutSeconds.toFixed(1)} s (reads ${traffic.reads}, writes ${traffic.writes}, ` +
              `failed ${traffic.failures}, wrong ${traffic.wrongValues})`,
          );
        }
        // The rest of the duration, then the hold: the same traffic and no restart, so the last
        // replicas live through full collections for the leak rule.
        await sleep(
          started + (env.durationSeconds + env.holdSeconds) * 1000 - performance.now(),
        );
      } finally {
        stop.abort();
        await Promise.all(running);
        elapsedSeconds = (performance.now() - started) / 1000;
      }
      for (const o of owned) await verifyAll(target, o, traffic);
    }
  } catch (e) {
    problems.push(`the run stopped: ${(e as Error).message}`);
  } finally {
    samplerStop.abort();
    await sampling;
    client.close();
  }

  const t = traffic.snapshot();
  if (t.failedReads > 0) problems.push(`${t.failedReads} failed reads`);
  if (t.failedWrites > 0) problems.push(`${t.failedWrites} failed writes`);
  if (t.wrongValues > 0) problems.push(`${t.wrongValues} wrong values`);
  if (problems.length === 0 && (t.reads < 100 || t.writes < 100)) {
    problems.push(`too little traffic: ${t.reads} reads, ${t.writes} writes (want ≥ 100 each)`);
  }
  if (restarts.length < env.restarts && problems.length === 0) {
    problems.push(`${restarts.length} of ${env.restarts} restarts rolled out`);
  }
  const soakSamples = sampler.samples.filter((s) => s.t >= 0);
  const series = new Map<string, HeapSample[]>();
  for (const s of sampler.samples) {
    const list = series.get(s.pod) ?? [];
    list.push({ t: s.t, heapUsedBytes: s.heapUsedBytes });
    series.set(s.pod, list);
  }
  const leak = judgeLeak(series, opts.leak);
  if (soakSamples.length === 0) problems.push("no metrics samples");
  if (leak.judged === 0 && opts.requireLeakVerdict) {
    problems.push(
      "leak rule: no replica went through a full collection late enough to be judged " +
        "(a longer --hold gives the last replicas more time)",
    );
  }
  if (leak.judged > 0 && !leak.pass) {
    const worst = leak.replicas.filter((r) => r.leaking).map((r) =>
      `${r.pod} ${(r.slopeBytesPerSecond / 1024).toFixed(1)} KiB/s`
    );
    problems.push(
      `leak rule: post-GC heap rising faster than ` +
        `${(opts.leak.maxSlopeBytesPerSecond / 1024).toFixed(1)} KiB/s: ${worst.join(", ")}`,
    );
  }
  const result: SoakResult = SoakResultSchema.parse({
    schemaVersion: SOAK_RESULT_SCHEMA_VERSION,
    recordedAt: new Date().toISOString(),
    envelope: env,
    elapsedSeconds,
    selfCheck: selfCheck.snapshot(),
    traffic: t,
    restarts,
    samples: sampler.samples,
    scrapeErrors: sampler.scrapeErrors,
    summary: {
      replicasSampled: new Set(soakSamples.map((s) => s.pod)).size,
      samples: soakSamples.length,
      rssBytes: spread(soakSamples.map((s) => s.rssBytes)),
      heapUsedBytes: spread(soakSamples.map((s) => s.heapUsedBytes)),
      openFds: spread(soakSamples.flatMap((s) => s.openFds === null ? [] : [s.openFds])),
      eventLoopLagSeconds: spread(soakSamples.map((s) => s.eventLoopLagSeconds)),
      eventLoopLagSteadySeconds: spread(
        steadySamples(sampler.samples).filter((s) => s.t >= 0)
          .map((s) => s.eventLoopLagSeconds),
      ),
    },
    leak,
    leakVerdictRequired: opts.requireLeakVerdict,
    problems,
  });
  if (opts.out) await Deno.writeTextFile(opts.out, JSON.stringify(result, null, 2) + "\n");
  return result;
}

if (import.meta.main) {
  let opts: SoakOptions;
  try {
    opts = parseSoakArgs(Deno.args);
  } catch (e) {
    console.error(`e2e-soak: ${(e as Error).message}`);
    Deno.exit(2);
  }
  if (Deno.uid?.() !== 0) {
    console.error("hack/e2e_soak.ts needs root: the test kubelet's pod network");
    Deno.exit(2);
  }
  let code = 1;
  try {
    const result = await runSoak(opts);
    console.log(renderSummary(result));
    code = result.problems.length === 0 ? 0 : 1;
  } catch (e) {
    console.error(`e2e-soak: ${(e as Error).stack ?? e}`);
  }
  Deno.exit(code);
}
