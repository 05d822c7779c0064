/**
 * Which requests are converted on the main thread (docs/design/webhook.md#inline-or-in-a-worker).
 * A request is converted inline only when its body is at most `--conversion-inline-max-bytes`
 * **and** its target's plans have a cost bounded by their input: no `cel` op (up to a million
 * cost units per evaluation) and no `regexSplit` op (a configured pattern may backtrack). Such a
 * conversion takes time linear in a body that is small, so it cannot hold the event loop that
 * answers the probes for long; every other request goes to a Worker. Entries without a plan are
 * answered without converting and stay inline.
 */
import type { PlanData } from "../../engine/mod.ts";
import type { RegistryChange, RegistryEntry } from "../registry.ts";

/**
 * `--conversion-inline-max-bytes auto` with more than one CPU: one object of a few KB; lists go to
 * the Workers and convert beside the main thread (measured, see the design).
 */
export const DEFAULT_INLINE_MAX_BYTES = 16 * 1024;

/**
 * `--conversion-inline-max-bytes auto` on one CPU, where a Worker converts on the same core as
 * the main thread and the hand-off only costs: a list of ten 10 KB objects answered twice as many
 * reviews per second inline. The bound keeps any one inline conversion under about a millisecond,
 * so other reviews and the probes never wait long behind one.
 */
export const ONE_CPU_INLINE_MAX_BYTES = 256 * 1024;

/** What `--conversion-inline-max-bytes auto` means for a process that may use `cpus` CPUs. */
export function autoInlineMaxBytes(cpus: number): number {
  return cpus <= 1 ? ONE_CPU_INLINE_MAX_BYTES : DEFAULT_INLINE_MAX_BYTES;
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
  /** Per installed entry (entries are immutable: a new plan is a new entry). */
  readonly #bounded = new WeakMap<RegistryEntry, boolean>();
  /** The verdict of each target's current plan (a failed compile keeps the plan and its verdict). */
  readonly #byTarget = new Map<string, boolean>();

  /** `maxBytes` is `--conversion-inline-max-bytes`; 0 = every conversion runs in a Worker. */
  constructor(readonly maxBytes: number) {}

  /** Follows a registry: every installed entry gets its verdict. */
  follow(registry: { onChange(l: (c: RegistryChange) => void): () => void }): () => void {
    return registry.onChange((c) => this.observe(c));
  }

  observe(change: RegistryChange): void {
    if (change.type === "remove") {
      this.#byTarget.delete(change.target);
      return;
    }
    const { outcome, result } = change;
    let bounded: boolean;
    if (outcome.ok && result.ok) bounded = result.boundedCost;
    else if (!outcome.ok && outcome.stale) bounded = this.#byTarget.get(change.target) ?? false;
    else bounded = true; // no plan: answered without converting
    this.#byTarget.set(change.target, bounded);
    this.#bounded.set(outcome.entry, bounded);
  }

  /** Whether a body of `bytes` for `entry` (as the request's plan set holds it) stays inline. */
  inline(entry: RegistryEntry | undefined, bytes: number): boolean {
    if (bytes > this.maxBytes) return false;
    if (entry === undefined || entry.router === null) return true;
    return this.#bounded.get(entry) === true;
  }
}
