/**
 * The initial sync on a Worker pool is observationally identical to a serial walk
 * (docs/design/webhook.md#the-initial-sync): both run over one 40-target fleet (one target missing) and the registries are diffed.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/engine/mod.ts";
import {
  batchSize,
  compileInline,
  CompilePool,
  defaultPoolSize,
  MAX_BATCH,
  slicedInline,
  SYNC_BREAK_EVEN,
  syncPlan,
} from "../../src/webhook/compile_pool.ts";
import { decodePlans } from "../../src/webhook/plan_codec.ts";
import type { CompileResult, ConfigKind } from "../../src/webhook/compiled.ts";
import {
  type CachedConfig,
  type ClusterView,
  initialSyncPass,
  RegistryController,
  type RegistryWriter,
} from "../../src/webhook/registry_controller.ts";

const LEAVES = 20;

function crd(i: number): JsonObject {
  const props = (prefix: string) =>
    Object.fromEntries(
      Array.from(
        { length: LEAVES },
        (_, j) => [`${prefix}${j}`, { type: j % 2 ? "integer" : "string" }],
      ),
    );
  const schema = (prefix: string) => ({
    openAPIV3Schema: {
      type: "object",
      properties: { spec: { type: "object", properties: props(prefix) } },
    },
  });
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `things${i}.fleet.example.com`, generation: 3 },
    spec: {
      group: "fleet.example.com",
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
      targetCRD: { name: `things${i}.fleet.example.com` },
      hubVersion: "v2",
      // Every fifth config is invalid (an unknown path): a business failure in the registry.
      spokes: [{
        version: "v1",
        rules: Array.from({ length: LEAVES }, (_, j) => ({
          strategy: "FieldRename",
          fieldRename: {
            hubPath: `spec.new${j}`,
            spokePath: i % 5 === 4 && j === 0 ? "spec.missing" : `spec.old${j}`,
          },
        })),
      }],
    },
  };
}

/** 40 configs; the target of cfg7 does not exist. */
function fleet(): ClusterView {
  const configs = Array.from({ length: 40 }, (_, i) => config(i));
  const targets = new Map(
    Array.from({ length: 40 }, (_, i) => i).filter((i) => i !== 7).map((i) => [
      `things${i}.fleet.example.com`,
      crd(i),
    ]),
  );
  return {
    getConfig: (_kind: ConfigKind, name: string) => configs.find((c) => c.metadata.name === name),
    listConfigs: () => configs,
    listServers: () => [{ name: "dco", default: true }],
    getTarget: (_kind: ConfigKind, name: string) => targets.get(name),
  };
}

class RecordingRegistry implements RegistryWriter {
  readonly entries = new Map<string, CompileResult>();
  install(result: CompileResult): void {
    this.entries.set(result.target, result);
  }
  remove(target: string): void {
    this.entries.delete(target);
  }
  has(target: string): boolean {
    return this.entries.has(target);
  }
  /** Sorted by target, so completion order does not matter. */
  sorted(): CompileResult[] {
    return [...this.entries.values()].sort((a, b) => (a.target < b.target ? -1 : 1));
  }
  /**
   * {@link sorted} with each result's plans decoded: the encoding's bytes depend on how the
   * compiled objects happen to share structure, the plans they decode to do not.
   */
  decoded(): unknown[] {
    return this.sorted().map((r) => r.ok ? { ...r, plans: decodePlans(r.plans) } : r);
  }
}

async function sync(compile: typeof compileInline, concurrency: number) {
  const view = fleet();
  const registry = new RecordingRegistry();
  const controller = new RegistryController({ serverName: "dco", view, registry, compile });
  const result = await initialSyncPass(controller, view, ["crd"], concurrency);
  return { result, registry };
}

Deno.test("a parallel initial sync on Workers equals a serial walk", async () => {
  const serial = await sync(compileInline, 1);
  using pool = new CompilePool(4);
  const parallel = await sync(pool.compile, pool.size);
  assert.equal(serial.result.targets, 40);
  assert.equal(parallel.result.targets, 40);
  assert.deepEqual(parallel.registry.decoded(), serial.registry.decoded());

  const entries = serial.registry.sorted();
  assert.equal(entries.length, 40);
  const missing = entries.find((e) => e.target === "things7.fleet.example.com")!;
  assert.equal(missing.ok, false);
  assert.equal(!missing.ok && missing.reason, "CRDNotFound");
  const invalid = entries.filter((e) => !e.ok && e.reason === "ValidationErrors");
  assert.deepEqual(
    invalid.map((e) => e.target).sort(),
    [4, 9, 14, 19, 24, 29, 34, 39].map((i) => `things${i}.fleet.example.com`).sort(),
  );
  const good = entries.filter((e) => e.ok);
  assert.equal(good.length, 31);
  assert.equal(good[0].ok && decodePlans(good[0].plans)[0].hubToSpoke.length > LEAVES, true);
});

Deno.test("infrastructure errors are aggregated over the whole pass", async () => {
  const view = fleet();
  let reads = 0;
  const flaky: ClusterView = {
    ...view,
    getTarget: (kind, name) => {
      if (++reads % 10 === 0) throw new Error(`read ${name} failed`);
      return view.getTarget(kind, name);
    },
  };
  const registry = new RecordingRegistry();
  const controller = new RegistryController({
    serverName: "dco",
    view: flaky,
    registry,
    compile: compileInline,
  });
  await assert.rejects(
    initialSyncPass(controller, flaky, ["crd"], 3),
    (e: unknown) =>
      e instanceof AggregateError && e.errors.length === 4 && /4 of 40/.test(e.message),
  );
  assert.equal(registry.entries.size, 36, "the other configs were still processed");
});

Deno.test("pool size follows a cgroup CPU quota when one is visible", async () => {
  const cores = navigator.hardwareConcurrency;
  assert.equal(await defaultPoolSize(() => Promise.resolve("max 100000\n")), cores);
  assert.equal(await defaultPoolSize(() => Promise.resolve("50000 100000\n")), 1);
  assert.equal(await defaultPoolSize(() => Promise.reject(new Error("no cgroup"))), cores);
  assert.equal(
    await defaultPoolSize(() => Promise.resolve("800000 100000")),
    Math.min(cores, 8),
  );
});

Deno.test("a worker that throws fails its job, and the pool keeps working", async () => {
  using pool = new CompilePool(2);
  const view = fleet();
  const bad = { metadata: { name: "broken" }, spec: null } as unknown as CachedConfig;
  await assert.rejects(pool.compile("crd", bad, crd(1)), /compile worker/);
  const ok = await pool.compile("crd", view.getConfig("crd", "cfg1")!, crd(1));
  assert.equal(ok.ok, true);
});

Deno.test("below the break-even a pass compiles inline, one at a time; at it, on the pool", () => {
  using pool = new CompilePool(SYNC_BREAK_EVEN.workers);
  const small = syncPlan(pool, SYNC_BREAK_EVEN.configs - 1);
  assert.equal(small.mode, "serial");
  assert.equal(small.lanes, 1);
  const large = syncPlan(pool, SYNC_BREAK_EVEN.configs);
  assert.equal(large.mode, "pool");
  assert.equal(large.compile, pool.compile);
  assert.equal(large.lanes, SYNC_BREAK_EVEN.configs, "every config in flight, so the pool batches");
  assert.equal(syncPlan(undefined, 10_000).mode, "serial", "no pool: inline");
  using fewWorkers = new CompilePool(SYNC_BREAK_EVEN.workers - 1);
  assert.equal(syncPlan(fewWorkers, 10_000).mode, "serial", "too few Workers to pay: inline");
  assert.equal(syncPlan(fewWorkers, 5, { configs: 0, workers: 0 }).mode, "pool", "parameters");
});

Deno.test("a pass with a chooser runs the chosen plan and equals a serial walk", async () => {
  const serial = await sync(compileInline, 1);
  using pool = new CompilePool(2);
  for (const serialBelow of [1_000, 0]) {
    const view = fleet();
    const registry = new RecordingRegistry();
    const controller = new RegistryController({
      serverName: "dco",
      view,
      registry,
      compile: () => Promise.reject(new Error("the chosen compiler is used, not this one")),
    });
    const result = await initialSyncPass(
      controller,
      view,
      ["crd"],
      (n) => syncPlan(pool, n, { configs: serialBelow, workers: 0 }),
    );
    assert.equal(result.mode, serialBelow === 0 ? "pool" : "serial");
    assert.deepEqual(registry.decoded(), serial.registry.decoded());
  }
});

Deno.test("an inline pass lets the event loop run between slices", async () => {
  const compile = slicedInline(0);
  const view = fleet();
  let timerRan = false;
  setTimeout(() => timerRan = true, 0);
  const result = await compile("crd", view.getConfig("crd", "cfg1")!, crd(1));
  assert.equal(result.ok, true);
  assert.equal(timerRan, true, "a timer queued before the compile ran before its result");
  // Within a slice no macrotask runs: the compiles of one slice hold the loop only that long.
  const unsliced = slicedInline(60_000);
  let later = false;
  setTimeout(() => later = true, 0);
  await unsliced("crd", view.getConfig("crd", "cfg2")!, crd(2));
  assert.equal(later, false);
  await new Promise((r) => setTimeout(r, 0));
});

Deno.test("batches: about four per Worker, at most MAX_BATCH jobs each", () => {
  assert.equal(batchSize(1, 2), 1);
  assert.equal(batchSize(100, 2), 13);
  assert.equal(batchSize(10_000, 2), MAX_BATCH);
  assert.equal(batchSize(0, 2), 1);
});

Deno.test("jobs queued in one turn go out in batches, each answered as its own job", async () => {
  using pool = new CompilePool(1, new URL("./_batch_echo_worker.ts", import.meta.url));
  await pool.ready();
  const names = Array.from({ length: 20 }, (_, i) => `cfg${i}`);
  const results = await Promise.all(
    names.map((name) =>
      pool.compile("crd", { metadata: { name }, spec: { hubVersion: "v2", spokes: [] } }, undefined)
    ),
  );
  assert.deepEqual(results.map((r) => r.config), names, "every job gets its own answer");
  const sizes = results.map((r) => Number(!r.ok && r.message.replace("batch of ", "")));
  assert.equal(sizes[0], batchSize(20, 1), "the first batch is sized from the whole queue");
  // The batches partition the queue in order: a run of n jobs each reporting a batch of n.
  let i = 0;
  while (i < sizes.length) {
    const n = sizes[i];
    assert.ok(n >= 1 && n <= MAX_BATCH);
    assert.deepEqual(sizes.slice(i, i + n), Array(n).fill(n), `batch at job ${i}`);
    i += n;
  }
  assert.equal(i, names.length);
});
