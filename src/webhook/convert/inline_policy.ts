/**
 * Which reviews a listener Worker converts on the thread that read them
 * (docs/design/webhook.md#inline-or-in-the-pool): only when the body is at most
 * `--conversion-inline-max-bytes` **and** the target's plans have a cost bounded by their input:
 * no `cel` op (up to a million cost units per evaluation) and no `regexSplit` op (a configured
 * pattern may backtrack). Such a conversion takes time linear in a body that is small, so the
 * other connections of that thread never wait long behind it; every other review goes to the
 * conversion pool. Entries without a plan are answered without converting and stay inline.
 */
import type { PlanData } from "../../engine/mod.ts";
import type { RegistryEntry } from "../registry.ts";

/**
 * `--conversion-inline-max-bytes auto`: a list of ten 10 KB objects or a hundred 2 KB ones converts
 * on the listener Worker that read it, in about a millisecond, so the other connections of that
 * Worker never wait long behind one; larger bodies go to the pool (measured, see the design).
 */
export const DEFAULT_INLINE_MAX_BYTES = 256 * 1024;

/** What `--conversion-inline-max-bytes auto` means (the same for any number of CPUs). */
export function autoInlineMaxBytes(_cpus: number): number {
  return DEFAULT_INLINE_MAX_BYTES;
}

/** Ops whose run time is not bounded by the size of their input. */
export const UNBOUNDED_OPS: ReadonlySet<string> = new Set(["cel", "regexSplit"]);

/** Whether any map within `v`, at any depth, has an `op` naming an unbounded op. */
function hasUnboundedOp(v: unknown): boolean {
  if (typeof v !== "object" || v === null) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasUnboundedOp(v[i])) return true;
    return false;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    const x = o[k];
    if (k === "op" && typeof x === "string" && UNBOUNDED_OPS.has(x)) return true;
    if (hasUnboundedOp(x)) return true;
  }
  return false;
}

/** Whether every op of the plans runs in time linear in its input. */
export function boundedCost(plans: readonly PlanData[]): boolean {
  return !plans.some((p) => hasUnboundedOp(p.hubToSpoke) || hasUnboundedOp(p.spokeToHub));
}

export class InlinePolicy {
  /** `maxBytes` is `--conversion-inline-max-bytes`; 0 = every conversion goes to the pool. */
  constructor(readonly maxBytes: number) {}

  /** Whether a body of `bytes` for `entry` (as the request's plan set holds it) stays here. */
  inline(entry: RegistryEntry | undefined, bytes: number): boolean {
    return bytes <= this.maxBytes && (entry === undefined || entry.boundedCost);
  }
}
