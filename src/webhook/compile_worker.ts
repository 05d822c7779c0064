/**
 * A compile Worker: receives (kind, config, target manifest), runs the pure `compileConfig`, and
 * posts back the `CompileResult` — plain data; the main isolate links it and owns the registry.
 */
/// <reference lib="deno.worker" />
import { compileConfig, type ConfigObject } from "./compile.ts";
import type { CompileResult, ConfigKind } from "./compiled.ts";
import type { JsonObject } from "../engine/mod.ts";

export interface CompileRequest {
  id: number;
  kind: ConfigKind;
  config: ConfigObject;
  target: JsonObject | undefined;
}

export type CompileResponse =
  | { id: number; result: CompileResult }
  | { id: number; error: string };

self.onmessage = (event: MessageEvent<CompileRequest>) => {
  const { id, kind, config, target } = event.data;
  let response: CompileResponse;
  try {
    response = { id, result: compileConfig(kind, config, target) };
  } catch (e) {
    response = { id, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
  }
  self.postMessage(response);
};
