/**
 * A conversion Worker's copy of the plan sets (docs/design/webhook.md#plan-set-swaps): every
 * version the main thread may still stamp on a request, each a frozen `target → RegistryEntry`
 * map built here from plan data ({@link WireEntry}) with the registry's own `linkedEntry`: a
 * target's plans are linked on its first conversion in this Worker, and an entry carried from
 * one version to the next keeps its router (linked or not). A new version is built from the
 * previous one plus a delta (only changed targets get new entries);
 * older versions are dropped when the main thread says no request holds them any more.
 */
import type { CompiledTarget } from "../compiled.ts";
import { linkedEntry, type RegistryEntry } from "../registry.ts";
import type { FullPlanSet, PlanSetDelta, WireEntry } from "./plan_sets.ts";

type EntryMap = ReadonlyMap<string, RegistryEntry>;

function entryOf(w: WireEntry, previous: RegistryEntry | undefined): RegistryEntry {
  const errorFields = {
    lastError: w.lastError,
    lastErrorReason: w.lastErrorReason,
    lastErrorAt: w.lastErrorAt === null ? null : new Date(w.lastErrorAt),
  };
  const compiledAt = w.compiledAt === null ? null : new Date(w.compiledAt);
  const meta = {
    target: w.target,
    kind: w.kind,
    config: w.config,
    hubVersion: w.hubVersion,
    boundedCost: w.boundedCost,
    reviewVersions: Object.freeze([...w.reviewVersions]),
    lossless: Object.freeze({ ...w.lossless }),
    planHash: w.planHash,
    compiledAt,
    ...errorFields,
  };
  if (w.plans === "keep") {
    return Object.freeze({ ...meta, router: previous?.router ?? null });
  }
  if (w.plans === null) return Object.freeze({ ...meta, router: null });
  if (
    previous !== undefined && previous.router !== null && previous.planHash === w.planHash &&
    previous.compiledAt?.getTime() === w.compiledAt
  ) {
    // The same install seen again (a starting Worker gets the committed and the next set).
    return Object.freeze({ ...meta, router: previous.router });
  }
  const compiled: CompiledTarget = {
    ok: true,
    target: w.target,
    kind: w.kind,
    config: w.config,
    hubVersion: w.hubVersion,
    plans: w.plans,
    spokeVersions: w.spokeVersions,
    boundedCost: w.boundedCost,
    reviewVersions: w.reviewVersions,
    lossless: w.lossless,
    planHash: w.planHash,
  };
  // Compiling checked that these plans link; a link error on first use here would be version
  // skew or a bug, answered as an internal error of that review.
  return Object.freeze({ ...linkedEntry(compiled, compiledAt ?? new Date()), ...errorFields });
}

export class PlanReplica {
  #versions = new Map<number, EntryMap>();
  #latest = -1;

  /** The versions held, ascending. */
  get versions(): number[] {
    return [...this.#versions.keys()].sort((a, b) => a - b);
  }

  /** The newest version held; -1 before the first reset. */
  get latest(): number {
    return this.#latest;
  }

  /** Replaces everything with the sets a starting Worker is sent. */
  reset(sets: readonly FullPlanSet[]): void {
    this.#versions = new Map();
    for (const s of sets) {
      const previous = this.#versions.get(this.#latest);
      const m = new Map<string, RegistryEntry>();
      for (const w of s.entries) m.set(w.target, entryOf(w, previous?.get(w.target)));
      this.#versions.set(s.version, m);
      this.#latest = s.version;
    }
  }

  /** Builds `delta.version` from the newest version held. */
  install(delta: PlanSetDelta): void {
    if (delta.version <= this.#latest) return; // already held (sent again after a reset)
    const base = this.#versions.get(this.#latest) ?? new Map<string, RegistryEntry>();
    const next = new Map(base);
    for (const c of delta.changes) {
      if (c.entry === null) next.delete(c.target);
      else next.set(c.target, entryOf(c.entry, base.get(c.target)));
    }
    this.#versions.set(delta.version, next);
    this.#latest = delta.version;
  }

  /** Drops every version below `below` (never the newest). */
  retire(below: number): void {
    for (const v of this.#versions.keys()) {
      if (v < below && v !== this.#latest) this.#versions.delete(v);
    }
  }

  /** The set a request stamped with `version` reads. */
  lookup(version: number): EntryMap | undefined {
    return this.#versions.get(version);
  }
}

/** The plan-set messages every converting Worker takes from the main thread. */
export type PlanMessage =
  | { t: "reset"; sets: FullPlanSet[] }
  | { t: "install"; delta: PlanSetDelta }
  | { t: "retire"; below: number };

/**
 * Applies `m` when it is a plan-set message, acknowledging the version a reset or an install left;
 * returns whether it was one.
 */
export function takePlanMessage(
  replica: PlanReplica,
  m: { t: string },
  ack: (version: number) => void,
): boolean {
  const p = m as PlanMessage;
  switch (p.t) {
    case "reset":
      replica.reset(p.sets);
      ack(replica.latest);
      return true;
    case "install":
      replica.install(p.delta);
      ack(replica.latest);
      return true;
    case "retire":
      replica.retire(p.below);
      return true;
    default:
      return false;
  }
}
