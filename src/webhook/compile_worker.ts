/**
 * A compile Worker: receives batches of (kind, config, target manifest), runs the pure
 * `compileConfig` on each, and posts the `CompileResult`s back with every result's encoded plans
 * transferred (src/webhook/plan_codec.ts) — the main isolate installs them without cloning or
 * linking anything. Its first message says it is ready: the module is loaded and its JIT primed.
 */
/// <reference lib="deno.worker" />
import { compileConfig, type ConfigObject } from "./compile.ts";
import type { CompileResult, ConfigKind } from "./compiled.ts";
import type { JsonObject } from "../engine/mod.ts";

export interface CompileJob {
  kind: ConfigKind;
  config: ConfigObject;
  target: JsonObject | undefined;
}

export interface CompileRequest {
  id: number;
  jobs: CompileJob[];
}

/** One outcome per job, in order: a result, or the error that escaped `compileConfig`. */
export type CompileOutcome = { result: CompileResult } | { error: string };

export type CompileResponse =
  | { ready: true }
  | { id: number; outcomes: CompileOutcome[] };

self.onmessage = (event: MessageEvent<CompileRequest>) => {
  const { id, jobs } = event.data;
  const transfer: ArrayBuffer[] = [];
  const outcomes = jobs.map(({ kind, config, target }): CompileOutcome => {
    try {
      const result = compileConfig(kind, config, target);
      if (result.ok) transfer.push(result.plans.buffer);
      return { result };
    } catch (e) {
      return { error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
    }
  });
  self.postMessage({ id, outcomes } satisfies CompileResponse, transfer);
};

/** Leaves of the priming config, and how many times it is compiled. */
const PRIME_LEAVES = 16;
const PRIME_RUNS = 12;

/**
 * Compiles a small built-in config (renames between two versions of a CRD) a few times, so the
 * first real batch does not run the analyzer cold: each Worker is a new isolate with its own JIT,
 * and the role starts the pool before the cache sync, while the Workers would otherwise idle.
 */
function prime(): void {
  const props = (prefix: string) =>
    Object.fromEntries(
      Array.from({ length: PRIME_LEAVES }, (_, i) => [`${prefix}${i}`, { type: "string" }]),
    );
  const version = (name: string, storage: boolean, prefix: string) => ({
    name,
    served: true,
    storage,
    schema: {
      openAPIV3Schema: {
        type: "object",
        properties: { spec: { type: "object", properties: props(prefix) } },
      },
    },
  });
  const target: JsonObject = {
    metadata: { name: "primes.dco.internal", generation: 1 },
    spec: {
      group: "dco.internal",
      names: { kind: "Prime", plural: "primes" },
      versions: [version("v1", false, "old"), version("v2", true, "new")],
    },
  };
  const config: ConfigObject = {
    metadata: { name: "prime", generation: 1 },
    spec: {
      targetCRD: { name: "primes.dco.internal" },
      hubVersion: "v2",
      spokes: [{
        version: "v1",
        rules: Array.from({ length: PRIME_LEAVES }, (_, i) => ({
          strategy: "FieldRename",
          fieldRename: { hubPath: `spec.new${i}`, spokePath: `spec.old${i}` },
        })),
      }],
    },
  };
  for (let i = 0; i < PRIME_RUNS; i++) compileConfig("crd", config, target);
}

try {
  prime();
} catch {
  // Priming only saves time; a config it cannot compile changes nothing for the real ones.
}
self.postMessage({ ready: true } satisfies CompileResponse);
