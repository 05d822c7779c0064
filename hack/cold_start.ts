/**
 * Measures a webhook-server cold start's CPU part for fleets of 10/100/1000 targets: the initial
 * sync (compile + link + install) serially and on the Worker pool, and the V8 heap's peak during
 * the sync against its steady size afterwards. Prints a table; asserts nothing.
 *
 *   deno run --allow-read=src --allow-env hack/cold_start.ts [sizes...]
 *   DENO_V8_FLAGS=--max-old-space-size=256 deno run ...   # the heap limit a Pod would set
 *
 * Each target: a two-version CRD with 50 leaves per version and one FieldRename per leaf (the
 * reference's measurement shape).
 */
import type { JsonObject } from "../src/engine/mod.ts";
import { compileInline, CompilePool, defaultPoolSize } from "../src/webhook/compile_pool.ts";
import { PlanRegistry } from "../src/webhook/registry.ts";
import {
  type CachedConfig,
  type ClusterView,
  initialSyncPass,
  RegistryController,
} from "../src/webhook/registry_controller.ts";

const LEAVES = 50;

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
    metadata: { name: `things${i}.fleet.example.com`, generation: 1 },
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
  const targets = new Map(
    Array.from({ length: n }, (_, i) => [`things${i}.fleet.example.com`, crd(i)]),
  );
  return {
    getConfig: (_k, name) => byName.get(name),
    listConfigs: () => configs,
    listServers: () => [{ name: "dco", default: true }],
    getTarget: (_k, name) => targets.get(name),
  };
}

const mib = (b: number) => (b / 1024 / 1024).toFixed(1);

async function measure(n: number, pool: CompilePool | undefined) {
  const view = fleet(n);
  const registry = new PlanRegistry();
  const controller = new RegistryController({
    serverName: "dco",
    view,
    registry,
    compile: pool?.compile ?? compileInline,
  });
  let peak = Deno.memoryUsage().heapUsed;
  const sampler = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().heapUsed), 5);
  const before = Deno.memoryUsage().heapUsed;
  const started = performance.now();
  await initialSyncPass(controller, view, ["crd"], (pool?.size ?? 1) * 8);
  const elapsed = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, Deno.memoryUsage().heapUsed);
  // Let the transient garbage of the pass go, then read the steady heap (registry retained).
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 20));
  const steady = Deno.memoryUsage().heapUsed;
  if (registry.size !== n) throw new Error(`expected ${n} entries, got ${registry.size}`);
  return { elapsed, before, peak, steady, rss: Deno.memoryUsage().rss };
}

const sizes = Deno.args.length > 0 ? Deno.args.map(Number) : [10, 100, 1000];
const workers = Number(Deno.env.get("WORKERS") ?? 0) || await defaultPoolSize();
console.log(`pool size ${workers}; ${LEAVES} leaves per version, one rename per leaf`);
console.log(
  "| targets | mode | sync ms | heap before MiB | heap peak MiB | heap steady MiB | rss MiB |",
);
console.log("|---:|---|---:|---:|---:|---:|---:|");
for (const n of sizes) {
  for (const mode of ["serial", "pool"] as const) {
    const pool = mode === "pool" ? new CompilePool(workers) : undefined;
    try {
      const r = await measure(n, pool);
      console.log(
        `| ${n} | ${mode} | ${r.elapsed.toFixed(0)} | ${mib(r.before)} | ${mib(r.peak)} | ${
          mib(r.steady)
        } | ${mib(r.rss)} |`,
      );
    } finally {
      pool?.close();
    }
  }
}
