/**
 * The webhook-server container's environment: the downward-API identity, the V8 heap limit and
 * garbage-collector sizing derived from the memory limit (docs/design/server-children.md#heap-limit),
 * the OpenTelemetry settings
 * the `--otel-*` flags of `spec.extraArgs` imply (docs/observability.md#tracing), then
 * `spec.extraEnv`.
 */
import type { IntOrString } from "../../api/mod.ts";
import { quantityToMillis } from "../../engine/units.ts";
import { otelEnv } from "../../obs/tracing.ts";
import { defaultWorkers } from "../../lib/worker_budget.ts";
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
 * Young-generation semi-space ceiling, MiB. V8's default (32 MiB) makes the new space of a small
 * heap larger than the old generation's headroom, so V8 keeps starting full collections; 4 MiB
 * cut the 8-connection p99 of small reviews by half and lowered peak memory
 * (docs/operations.md#garbage-collection-and-the-tail).
 */
export const V8_SEMI_SPACE_MIB = 4;
/**
 * The old generation's first allocation limit as a share of its ceiling, split over the listener
 * Workers that convert beside each other. Every isolate gets the flag (the main thread, each
 * listener and pool Worker): a half gave one busy isolate the best tail but ~100 MiB more peak
 * memory than a 256 Mi pod has; a quarter kept the peak where the ceiling alone had it; with two
 * listener Workers a quarter each raised the peak by ~100 MiB again, an eighth each kept it.
 */
export const V8_INITIAL_OLD_SPACE_FRACTION = 0.25;

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
 * The V8 flags derived for a heap ceiling of `mib` and `listeners` listener Workers: the ceiling,
 * the young-generation size and the old generation's first limit, comma-separated as
 * `DENO_V8_FLAGS` takes them.
 */
export function derivedV8Flags(mib: number, listeners = 1): string[] {
  const initial = Math.floor((mib * V8_INITIAL_OLD_SPACE_FRACTION) / Math.max(1, listeners));
  return [
    `${MAX_OLD_SPACE}=${mib}`,
    `--max-semi-space-size=${V8_SEMI_SPACE_MIB}`,
    `--initial-old-space-size=${Math.max(1, initial)}`,
  ];
}

/**
 * The listener Workers a webhook server will run: `--conversion-listeners` of `extraArgs` when it
 * names a count, else its default for the container's CPU limit (none set: the heap decides
 * alone, src/lib/worker_budget.ts) and the heap ceiling `mib`.
 */
export function expectedListeners(spec: Spec, mib: number): number {
  let flag: number | undefined;
  for (const f of scanFlags(spec.extraArgs ?? [])) {
    if (f.name === "conversion-listeners") flag = Number(f.value);
  }
  if (flag !== undefined && Number.isInteger(flag) && flag > 0) return flag;
  const cpu = spec.resources?.limits?.cpu;
  const millis = cpu === undefined ? undefined : quantityToMillis(String(cpu));
  const cpus = millis === undefined || millis <= 0n ? undefined : Number(millis) / 1000;
  return defaultWorkers(cpus, mib);
}

/** The name of a V8 flag (`--a-b=1` and `--a_b` both name `a-b`). */
function v8FlagName(flag: string): string {
  return flag.replace(/^--?/, "").split("=")[0].replaceAll("_", "-");
}

/**
 * The container env, in order: downward-API identity (`POD_NAME`, `POD_NAMESPACE`, `POD_UID`, all
 * needed to publish the replica Lease), the derived `DENO_V8_FLAGS`, then `extraEnv`.
 *
 * A user `DENO_V8_FLAGS` always wins and is never duplicated (Kubernetes would let the later
 * entry silently replace ours): with `--max-old-space-size` in it, or set through `valueFrom`,
 * nothing is derived; a literal value without it keeps its position and gets the derived flags it
 * does not name appended (the user's other V8 flags stay, and the pod still knows its limit).
 */
export function containerEnv(spec: Spec): EnvVar[] {
  const fieldRef = (fieldPath: string) => ({ fieldRef: { apiVersion: "v1", fieldPath } });
  const env: EnvVar[] = [
    { name: "POD_NAME", valueFrom: fieldRef("metadata.name") },
    { name: "POD_NAMESPACE", valueFrom: fieldRef("metadata.namespace") },
    { name: "POD_UID", valueFrom: fieldRef("metadata.uid") },
  ];
  const mib = heapLimitMiB(spec.resources?.limits?.memory);
  const derived = mib === undefined ? undefined : derivedV8Flags(mib, expectedListeners(spec, mib));
  const extra: EnvVar[] = (spec.extraEnv ?? []).map((e) => ({ ...e }));
  const user = extra.filter((e) => e.name === V8_FLAGS_ENV);
  if (derived !== undefined) {
    if (user.length === 0) env.push({ name: V8_FLAGS_ENV, value: derived.join(",") });
    else {
      // Kubernetes uses the last entry of a repeated name: that is the one to extend.
      const last = user[user.length - 1];
      const named = new Set(
        (last.value ?? "").split(/[\s,]+/).filter((f) => f !== "").map(v8FlagName),
      );
      if (last.valueFrom === undefined && !named.has(v8FlagName(MAX_OLD_SPACE))) {
        const added = derived.filter((f) => !named.has(v8FlagName(f)));
        // Commas: Deno splits DENO_V8_FLAGS on them, and a space would make one unknown flag.
        last.value = [...(last.value ? [last.value] : []), ...added].join(",");
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
