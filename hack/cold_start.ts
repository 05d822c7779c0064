/**
 * Measures a webhook-server cold start's CPU part and the plan memory it leaves, for fleets of
 * 10/100/1000 targets. Every run is a fresh process (a cold isolate, as in a new Pod), and the
 * modes are interleaved and repeated, because the machines this runs on are shared: read ranges.
 *
 *   deno run --allow-read=src,hack --allow-run --allow-env --allow-sys=loadavg \
 *     hack/cold_start.ts [--repeat N] [sizes...]
 *
 * Modes, each timing one `initialSyncPass` (compile, install in the registry, and the plan-set
 * ledger that follows it, as in the role):
 *
 * - `serial`: every config compiled inline, one at a time (the role's inline pass, which lets the
 *   event loop run every 20 ms);
 * - `pool`: every config queued on the compile Worker pool (batched), the Workers already
 *   started — the role starts them before the cache sync, which takes longer than their start;
 * - `pool+start`: the same, with the Workers' start counted.
 *
 * Memory, read after `gc()` (`--expose-gc` is passed to each run) as V8 heap used plus external
 * memory (the encoded plans live in `ArrayBuffer`s, which count as external), per target:
 *
 * - `main`: what the main thread holds for the plans — the registry and the plan-set ledger (the
 *   encoded plans a restarted Worker is sent);
 * - `worker`: one conversion Worker's copy: the committed set as the Worker receives it (a
 *   structured clone), built into its `PlanReplica` — measured in this isolate, with the same code
 *   the Worker runs;
 * - `used`: the same two after every target converted one object on that side (its plans linked
 *   and their generated code built): the cost of a target that is actually served there.
 *
 * Each target: a two-version CRD with 50 leaves per version and one FieldRename per leaf (the
 * reference's measurement shape). `WORKERS=n` sets the pool size (default: the CPUs available).
 */
import { cpuUsage } from "node:process";
import { convertObject, type JsonObject } from "../src/engine/mod.ts";
import {
  compileInline,
  CompilePool,
  defaultPoolSize,
  syncPlan,
} from "../src/webhook/compile_pool.ts";
import { PlanReplica } from "../src/webhook/convert/plan_replica.ts";
import { PlanSets } from "../src/webhook/convert/plan_sets.ts";
import { PlanRegistry, type RegistryEntry } from "../src/webhook/registry.ts";
import {
  type CachedConfig,
  type ClusterView,
  initialSyncPass,
  RegistryController,
} from "../src/webhook/registry_controller.ts";

const LEAVES = 50;
const GROUP = "fleet.example.com";
type Mode = "serial" | "pool" | "pool+start";
const MODES: readonly Mode[] = ["serial", "pool", "pool+start"];

function crd(i: number): JsonObject {
  const schema = (prefix: string) => ({
    openAPIV3Schema: {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: Object.fromEntries(
            Array.from({ length: LEAVES }, (_, j) => [`${prefix}${j}`, { type: "string" }]),
          ),
        },
      },
    },
  });
  return {
    metadata: { name: `things${i}.${GROUP}`, generation: 1 },
    spec: {
      group: GROUP,
      names: { kind: `Thing${i}`, plural: `things${i}` },
      versions: [
        { name: "v1", served: true, storage: false, schema: schema("old") },
        { name: "v2", served: true, storage: true, schema: schema("new") },
      ],
    },
  };
}

function config(i: number): CachedConfig {
  return {
    metadata: { name: `cfg${i}`, generation: 1 },
    spec: {
      targetCRD: { name: `things${i}.${GROUP}` },
      hubVersion: "v2",
      spokes: [{
        version: "v1",
        rules: Array.from({ length: LEAVES }, (_, j) => ({
          strategy: "FieldRename",
          fieldRename: { hubPath: `spec.new${j}`, spokePath: `spec.old${j}` },
        })),
      }],
    },
  };
}

function fleet(n: number): ClusterView {
  const configs = Array.from({ length: n }, (_, i) => config(i));
  const byName = new Map(configs.map((c) => [c.metadata.name, c]));
  const targets = new Map(Array.from({ length: n }, (_, i) => [`things${i}.${GROUP}`, crd(i)]));
  return {
    getConfig: (_k, name) => byName.get(name),
    listConfigs: () => configs,
    listServers: () => [{ name: "dco", default: true }],
    getTarget: (_k, name) => targets.get(name),
  };
}

/** One v1 object of target `i`, converted to v2 through `entry` (links its plans). */
function convertOnce(entry: RegistryEntry | undefined, i: number): void {
  if (entry?.router == null) throw new Error(`target ${i} has no plan`);
  const spec = Object.fromEntries(Array.from({ length: LEAVES }, (_, j) => [`old${j}`, `v${j}`]));
  const out = convertObject(entry.router, {
    apiVersion: `${GROUP}/v1`,
    kind: `Thing${i}`,
    metadata: { name: "x" },
    spec,
  }, `${GROUP}/v2`);
  if ((out.spec as JsonObject).new0 !== "v0") throw new Error("wrong conversion");
}

const gc = (globalThis as { gc?: () => void }).gc;

/** Heap used plus external memory after full collections. */
async function settled(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 10));
    gc?.();
  }
  const m = Deno.memoryUsage();
  return m.heapUsed + m.external;
}

interface RunResult {
  mode: Mode;
  n: number;
  syncMs: number;
  /** CPU time of the whole process (every thread) during the sync. */
  cpuMs: number;
  startMs: number;
  mainKiB: number;
  mainUsedKiB: number;
  workerKiB: number;
  workerUsedKiB: number;
  resetMs: number;
}

async function child(mode: Mode, n: number, workers: number): Promise<RunResult> {
  if (gc === undefined) throw new Error("run with --v8-flags=--expose-gc");
  const view = fleet(n);
  let pool: CompilePool | undefined;
  let startMs = 0;
  if (mode === "pool") {
    const t = performance.now();
    pool = new CompilePool(workers);
    await pool.ready();
    startMs = performance.now() - t;
  }
  let registry: PlanRegistry | undefined = new PlanRegistry();
  let sets: PlanSets | undefined = new PlanSets();
  sets.follow(registry);
  const controller = new RegistryController({
    serverName: "dco",
    view,
    registry,
    compile: compileInline,
  });
  const base = await settled();
  const cpu = cpuUsage();
  const started = performance.now();
  if (mode === "pool+start") pool = new CompilePool(workers);
  const pass = await initialSyncPass(
    controller,
    view,
    ["crd"],
    // Serial: the role's inline pass (no pool), which yields to the event loop every 20 ms.
    (configs) => syncPlan(pool, configs, { configs: 0, workers: 0 }),
  );
  const syncMs = performance.now() - started;
  const used = cpuUsage(cpu);
  pool?.close();
  if (registry.size !== n || pass.targets !== n) throw new Error(`expected ${n} entries`);
  // As the conversion pool does once every Worker holds the set.
  sets.commit(sets.takeDelta()!.version);
  const steady = await settled();

  // One conversion Worker's copy: the committed set as it arrives (a structured clone).
  let replica: PlanReplica | undefined = new PlanReplica();
  const t = performance.now();
  replica.reset(structuredClone([sets.startingState().committed]));
  const resetMs = performance.now() - t;
  const withReplica = await settled();
  const version = replica.latest;
  for (let i = 0; i < n; i++) convertOnce(replica.lookup(version)?.get(`things${i}.${GROUP}`), i);
  const replicaUsed = await settled();
  replica = undefined;
  const beforeMainUse = await settled();
  for (let i = 0; i < n; i++) convertOnce(sets.get(`things${i}.${GROUP}`), i);
  const mainUsed = await settled();
  registry = undefined;
  sets = undefined;
  const kib = (b: number) => b / 1024 / n;
  return {
    mode,
    n,
    syncMs,
    cpuMs: (used.user + used.system) / 1000,
    startMs,
    mainKiB: kib(steady - base),
    mainUsedKiB: kib(mainUsed - beforeMainUse + steady - base),
    workerKiB: kib(withReplica - steady),
    workerUsedKiB: kib(replicaUsed - steady),
    resetMs,
  };
}

function range(xs: number[], digits = 0): string {
  const lo = Math.min(...xs).toFixed(digits);
  const hi = Math.max(...xs).toFixed(digits);
  return lo === hi ? lo : `${lo}–${hi}`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function parent(args: string[]): Promise<void> {
  let repeat = 3;
  const sizes: number[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--repeat") repeat = Number(args[++i]);
    else sizes.push(Number(args[i]));
  }
  if (sizes.length === 0) sizes.push(10, 100, 1000);
  const workers = Number(Deno.env.get("WORKERS") ?? 0) || await defaultPoolSize();
  console.log(
    `pool of ${workers} Workers; ${LEAVES} leaves per version, one rename per leaf; ` +
      `${repeat} runs per cell, interleaved; load average ${Deno.loadavg().join(" ")}`,
  );
  const results: RunResult[] = [];
  for (let r = 0; r < repeat; r++) {
    for (const n of sizes) {
      // Interleaved, the order rotating per round, so a burst of load does not hit one mode.
      const order = MODES.map((_, k) => MODES[(k + r) % MODES.length]);
      for (const mode of order) {
        const out = await new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "--v8-flags=--expose-gc",
            "--allow-read=src,hack",
            "--allow-env",
            import.meta.filename ?? "hack/cold_start.ts",
            "--child",
            mode,
            String(n),
            String(workers),
          ],
          stderr: "inherit",
        }).output();
        if (!out.success) throw new Error(`run ${mode} ${n} failed`);
        results.push(JSON.parse(new TextDecoder().decode(out.stdout)));
      }
    }
  }
  console.log(
    "| targets | mode | sync ms (median) | CPU ms, all threads (median) | Worker start ms | main KiB/target | main, all used | Worker KiB/target | Worker, all used | Worker set up ms |",
  );
  console.log("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const n of sizes) {
    for (const mode of MODES) {
      const rs = results.filter((x) => x.n === n && x.mode === mode);
      const col = (f: (x: RunResult) => number, d = 0) => range(rs.map(f), d);
      const withMedian = (f: (x: RunResult) => number) =>
        `${col(f)} (${median(rs.map(f)).toFixed(0)})`;
      const cells = [
        String(n),
        mode,
        withMedian((x) => x.syncMs),
        withMedian((x) => x.cpuMs),
        mode === "pool" ? col((x) => x.startMs) : "—",
        col((x) => x.mainKiB, 1),
        col((x) => x.mainUsedKiB, 1),
        col((x) => x.workerKiB, 1),
        col((x) => x.workerUsedKiB, 1),
        col((x) => x.resetMs),
      ];
      console.log(`| ${cells.join(" | ")} |`);
    }
  }
  for (const n of sizes) {
    const med = (m: Mode) =>
      median(results.filter((x) => x.n === n && x.mode === m).map((x) => x.syncMs));
    const cpu = (m: Mode) =>
      median(results.filter((x) => x.n === n && x.mode === m).map((x) => x.cpuMs));
    console.log(
      `${n} targets: serial / pool = ${(med("serial") / med("pool")).toFixed(2)}×, ` +
        `serial / (pool+start) = ${(med("serial") / med("pool+start")).toFixed(2)}× (medians); ` +
        `pool CPU / serial CPU = ${(cpu("pool") / cpu("serial")).toFixed(2)} ` +
        `(bound on ${workers} idle cores: serial / ${
          (cpu("serial") / (cpu("pool") / workers)).toFixed(2)
        })`,
    );
  }
}

if (Deno.args[0] === "--child") {
  const [, mode, n, workers] = Deno.args;
  console.log(JSON.stringify(await child(mode as Mode, Number(n), Number(workers))));
} else {
  await parent(Deno.args);
}
