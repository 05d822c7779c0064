/**
 * The webhook-server container's environment: the downward-API identity, the V8 heap limit derived
 * from the memory limit (docs/design/server-children.md#heap-limit), the OpenTelemetry settings
 * the `--otel-*` flags of `spec.extraArgs` imply (docs/observability.md#tracing), then
 * `spec.extraEnv`.
 */
import type { IntOrString } from "../../api/mod.ts";
import { quantityToMillis } from "../../engine/units.ts";
import { otelEnv } from "../../obs/tracing.ts";
import { scanFlags } from "./container_args.ts";
import type { Spec } from "./settings.ts";
import type { EnvVar } from "./types.ts";

/**
 * Share of the container memory limit given to V8's old generation. Not Go's soft 90 %:
 * `--max-old-space-size` is a *hard* ceiling on the old generation only (young generation, code
 * space, ArrayBuffers and Rust-side memory come on top), so a quarter of the limit stays free. 256 Mi → 192 MiB, 512 Mi → 384 MiB.
 */
export const V8_HEAP_LIMIT_FRACTION = 0.75;
export const V8_FLAGS_ENV = "DENO_V8_FLAGS";
const MAX_OLD_SPACE = "--max-old-space-size";

/**
 * `--max-old-space-size` in MiB for a memory limit: `floor(bytes × 0.75 / 2^20)`. Undefined
 * without a (parseable, positive) limit or when the result is below 1 MiB.
 */
export function heapLimitMiB(memoryLimit: IntOrString | undefined): number | undefined {
  if (memoryLimit === undefined) return undefined;
  const millis = quantityToMillis(String(memoryLimit));
  if (millis === undefined || millis <= 0n) return undefined;
  const bytes = millis / 1000n;
  // The fraction in thousandths: integer arithmetic, no float rounding on large limits.
  const permille = BigInt(Math.round(V8_HEAP_LIMIT_FRACTION * 1000));
  const mib = (bytes * permille) / (1000n * 1048576n);
  return mib >= 1n ? Number(mib) : undefined;
}

/**
 * The container env, in order: downward-API identity (`POD_NAME`, `POD_NAMESPACE`, `POD_UID`, all
 * needed to publish the replica Lease), the derived `DENO_V8_FLAGS`, then `extraEnv`.
 *
 * A user `DENO_V8_FLAGS` always wins and is never duplicated (Kubernetes would let the later
 * entry silently replace ours): with `--max-old-space-size` in it, or set through `valueFrom`,
 * nothing is derived; a literal value without it keeps its position and gets the derived flag
 * appended (the user's other V8 flags stay, and the pod still knows its limit).
 */
export function containerEnv(spec: Spec): EnvVar[] {
  const fieldRef = (fieldPath: string) => ({ fieldRef: { apiVersion: "v1", fieldPath } });
  const env: EnvVar[] = [
    { name: "POD_NAME", valueFrom: fieldRef("metadata.name") },
    { name: "POD_NAMESPACE", valueFrom: fieldRef("metadata.namespace") },
    { name: "POD_UID", valueFrom: fieldRef("metadata.uid") },
  ];
  const mib = heapLimitMiB(spec.resources?.limits?.memory);
  const derived = mib === undefined ? undefined : `${MAX_OLD_SPACE}=${mib}`;
  const extra: EnvVar[] = (spec.extraEnv ?? []).map((e) => ({ ...e }));
  const user = extra.filter((e) => e.name === V8_FLAGS_ENV);
  if (derived !== undefined) {
    if (user.length === 0) env.push({ name: V8_FLAGS_ENV, value: derived });
    else {
      // Kubernetes uses the last entry of a repeated name: that is the one to extend.
      const last = user[user.length - 1];
      const hasLimit = (last.value ?? "").split(/[\s,]+/).some((f) =>
        f === MAX_OLD_SPACE || f.startsWith(`${MAX_OLD_SPACE}=`) ||
        f === "--max_old_space_size" || f.startsWith("--max_old_space_size=")
      );
      if (last.valueFrom === undefined && !hasLimit) {
        // Commas: Deno splits DENO_V8_FLAGS on them, and a space would make one unknown flag.
        last.value = last.value ? `${last.value},${derived}` : derived;
      }
    }
  }
  const named = new Set(extra.map((e) => e.name));
  for (const [name, value] of Object.entries(tracingEnvOf(spec.extraArgs))) {
    if (!named.has(name)) env.push({ name, value });
  }
  return [...env, ...extra];
}

/**
 * What Deno's OpenTelemetry needs at process start for the `--otel-*` flags among `args` (the
 * last occurrence of a flag wins, as in the flag parser); nothing without an endpoint. A user
 * `extraEnv` entry of the same name replaces the derived one.
 */
export function tracingEnvOf(args: readonly string[] | undefined): Record<string, string> {
  let endpoint = "";
  let insecure = false;
  for (const f of scanFlags(args ?? [])) {
    if (f.name === "otel-exporter-otlp-endpoint") endpoint = f.value ?? "";
    if (f.name === "otel-exporter-otlp-insecure") {
      insecure = f.value === undefined || f.value === "true" || f.value === "1";
    }
  }
  return otelEnv({ endpoint, insecure, sampleRatio: 0 });
}
