/**
 * The compact form of a target's plans: what a compile Worker transfers back, what the main
 * thread keeps and sends on, and what is linked where the plans are used (the main thread only
 * for the reviews it converts inline, each conversion Worker for its own reviews).
 *
 * The bytes are V8's value serialization of the `PlanData[]` — the very format `postMessage`
 * uses, so a plan decodes to exactly what a structured clone would have delivered (`bigint`
 * constants, `undefined` and `-0` included), which JSON text would not. One `ArrayBuffer` per
 * target moves between threads by transfer (no copy, no per-object clone on the receiving side)
 * and costs the holder its byte length, about 8 KiB for 50 renamed leaves, instead of the op
 * objects and linked closures (≈ 30 KiB).
 */
import { deserialize, serialize } from "node:v8";
import { type DeferredPlans, type LinkedPlan, linkPlan, type PlanData } from "../engine/mod.ts";
import type { LinkOptions } from "../engine/strategy.ts";

/** A target's encoded plans, in a buffer of their own (ready to transfer). */
export type EncodedPlans = Uint8Array<ArrayBuffer>;

/** How the registry and every conversion Worker link plans (the handler discards each request). */
export const LINK_OPTIONS: LinkOptions = { shareInput: true };

export function encodePlans(plans: readonly PlanData[]): EncodedPlans {
  const b = serialize(plans);
  // Node's serialize may hand out a view into a larger pooled buffer: own it, so a transfer moves
  // exactly these bytes.
  return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength &&
      b.buffer instanceof ArrayBuffer
    ? new Uint8Array(b.buffer)
    : new Uint8Array(b);
}

export function decodePlans(bytes: Uint8Array): PlanData[] {
  const plans = deserialize(bytes) as unknown;
  if (!Array.isArray(plans)) throw new Error("encoded plans are not a plan list");
  return plans as PlanData[];
}

/** Links every plan now (throws what linking throws: unknown op codes, malformed op data). */
export function linkPlans(plans: readonly PlanData[]): LinkedPlan[] {
  return plans.map((p) => linkPlan(p, LINK_OPTIONS));
}

/**
 * Deferred plans for a `Router`: decoded and linked on first use. `spokeVersions` must be the
 * plans' spoke versions, in order (the compile result carries them beside the bytes).
 */
export function deferredPlans(
  bytes: Uint8Array,
  spokeVersions: readonly string[],
): DeferredPlans {
  return { spokeVersions, link: () => linkPlans(decodePlans(bytes)) };
}
