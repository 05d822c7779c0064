/**
 * A compile Worker: receives batches of (kind, config, target manifest), runs the pure
 * `compileConfig` on each, and posts the `CompileResult`s back with every result's encoded plans
 * transferred (src/webhook/plan_codec.ts) — the main isolate installs them without cloning or
 * linking anything. Its first message says the module is loaded.
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

self.postMessage({ ready: true } satisfies CompileResponse);
