/**
 * Versioned plan sets: how registry writes reach the converting Workers atomically
 * (docs/design/webhook.md#plan-set-swaps).
 *
 * The registry (src/webhook/registry.ts) is the writer's view: it changes the moment a compile
 * result is installed. Conversions do not read it. They read a **plan set**: the registry's
 * entries as of one version number. Every registry change lands in the *head* set; the fanout
 * (src/webhook/convert/plan_fanout.ts) takes the head as version N+1, sends its changes to every
 * Worker, and only when every live Worker has acknowledged N+1 does {@link PlanSets.commit} make it
 * the version new requests read — in the listener Workers and in the pool. A request reads one
 * version only, so no request sees part of one set and part of another, and once any request was
 * served from N+1, no request that starts later is served from N. Workers keep older versions
 * until told no request reads them any more.
 *
 * What crosses to a Worker is plan data ({@link WireEntry}: the encoded plans of
 * src/webhook/plan_codec.ts plus the entry's metadata); each Worker builds its entries with the
 * registry's own `linkedEntry` and links a target's plans on its first conversion there. The
 * ledger keeps, per target of each set it holds, the registry entry and the encoded plans — the
 * bytes a restarted Worker is sent — and nothing linked.
 */
import type { Lossless } from "../../engine/mod.ts";
import type { CompileFailureReason, ConfigKind } from "../compiled.ts";
import type { EncodedPlans } from "../plan_codec.ts";
import type { RegistryChange, RegistryEntry } from "../registry.ts";
import type { PlanLookup } from "./context.ts";

/** One registry entry as plan data: what a Worker needs to rebuild it. */
export interface WireEntry {
  target: string;
  kind: ConfigKind;
  config: string;
  hubVersion: string;
  /** The entry's `boundedCost` (whether its plans may convert on the thread that read a review). */
  boundedCost: boolean;
  /** The spoke version of each encoded plan, in order. */
  spokeVersions: string[];
  reviewVersions: string[];
  lossless: Record<string, Lossless>;
  planHash: string;
  /** Epoch ms; null while never compiled. */
  compiledAt: number | null;
  lastError: string;
  lastErrorReason: CompileFailureReason | null;
  lastErrorAt: number | null;
  /**
   * The plans to link; null = no plan (an error-only placeholder); `"keep"` (only in a delta) =
   * the entry keeps the plan it had in the previous version (a failed compile of a working one).
   */
  plans: EncodedPlans | null | "keep";
}

/** One target's change in a delta: the new entry, or null for a removal. */
export interface WireChange {
  target: string;
  entry: WireEntry | null;
}

/** A whole plan set (a Worker's starting state). */
export interface FullPlanSet {
  version: number;
  entries: WireEntry[];
}

/** The changes from the previous version to `version`. */
export interface PlanSetDelta {
  version: number;
  changes: WireChange[];
}

/** The committed set, as the main thread reads it (the Lease, `/debug/registry`, stamping). */
export interface PlanSetView {
  readonly version: number;
  readonly entries: ReadonlyMap<string, RegistryEntry>;
}

interface SetState {
  version: number;
  entries: Map<string, RegistryEntry>;
  /** Each entry's encoded plans (null: none): with `entries`, what a new Worker is sent. */
  plans: Map<string, EncodedPlans | null>;
}

function wireMeta(e: RegistryEntry): Omit<WireEntry, "plans"> {
  return {
    target: e.target,
    kind: e.kind,
    config: e.config,
    hubVersion: e.hubVersion,
    boundedCost: e.boundedCost,
    spokeVersions: e.router === null ? [] : e.router.versions().slice(1),
    reviewVersions: [...e.reviewVersions],
    lossless: { ...e.lossless },
    planHash: e.planHash,
    compiledAt: e.compiledAt === null ? null : e.compiledAt.getTime(),
    lastError: e.lastError,
    lastErrorReason: e.lastErrorReason,
    lastErrorAt: e.lastErrorAt === null ? null : e.lastErrorAt.getTime(),
  };
}

/**
 * The main thread's ledger of plan-set versions: the committed set, at most one set being
 * installed in the Workers, and the head collecting registry changes meanwhile. It implements
 * {@link PlanLookup} over the committed set, which is what every Worker converts from.
 */
export class PlanSets implements PlanLookup {
  #committed: SetState = { version: 0, entries: new Map(), plans: new Map() };
  #installing: SetState | undefined;
  /** The head: its maps are copied on the first write after a version was taken from it. */
  #head: SetState = this.#committed;
  #headShared = true;
  #delta = new Map<string, WireChange>();
  readonly #onPending = new Set<() => void>();
  readonly #onCommit = new Set<(view: PlanSetView) => void>();

  /**
   * Follows a registry: every change lands in the head. Call it before the registry's first
   * install (the plan data of earlier installs is not kept anywhere). Returns the unsubscribe
   * function.
   */
  follow(registry: { onChange(l: (c: RegistryChange) => void): () => void }): () => void {
    return registry.onChange((c) => this.observe(c));
  }

  /** One registry change into the head set. */
  observe(change: RegistryChange): void {
    const head = this.#writableHead();
    if (change.type === "remove") {
      head.entries.delete(change.target);
      head.plans.delete(change.target);
      this.#delta.set(change.target, { target: change.target, entry: null });
    } else {
      const { outcome, result } = change;
      const entry = outcome.entry;
      let plans: EncodedPlans | null;
      let sent: WireEntry["plans"];
      if (outcome.ok && result.ok) {
        plans = sent = result.plans;
      } else if (!outcome.ok && outcome.stale) {
        plans = head.plans.get(change.target) ?? null;
        sent = plans === null ? null : "keep";
      } else {
        plans = sent = null;
      }
      const meta = wireMeta(entry);
      head.entries.set(change.target, entry);
      head.plans.set(change.target, plans);
      // A later change of the same target in the same delta replaces the earlier one; "keep"
      // after a not-yet-sent install would refer to a plan the Workers never had.
      const pending = this.#delta.get(change.target);
      if (sent === "keep" && pending !== undefined) sent = plans;
      this.#delta.set(change.target, { target: change.target, entry: { ...meta, plans: sent } });
    }
    for (const l of this.#onPending) l();
  }

  #writableHead(): SetState {
    if (this.#headShared) {
      const h = this.#head;
      this.#head = { version: -1, entries: new Map(h.entries), plans: new Map(h.plans) };
      this.#headShared = false;
    }
    return this.#head;
  }

  /** The committed version (stamped on requests dispatched now). */
  get version(): number {
    return this.#committed.version;
  }

  /** The committed set. */
  get current(): PlanSetView {
    return this.#committed;
  }

  /** {@link PlanLookup} over the committed set. */
  get(target: string): RegistryEntry | undefined {
    return this.#committed.entries.get(target);
  }

  /** Every committed entry, sorted by target. */
  snapshot(): RegistryEntry[] {
    return [...this.#committed.entries.values()].sort((a, b) =>
      a.target < b.target ? -1 : a.target > b.target ? 1 : 0
    );
  }

  /** Whether head changes wait to be installed, or a version is being installed. */
  get pending(): boolean {
    return this.#delta.size > 0 || this.#installing !== undefined;
  }

  /** The version being installed, if any. */
  get installing(): number | undefined {
    return this.#installing?.version;
  }

  /**
   * Takes the head's changes as the next version to install, unless one is being installed
   * already or there is nothing to send.
   */
  takeDelta(): PlanSetDelta | undefined {
    if (this.#installing !== undefined || this.#delta.size === 0) return undefined;
    const version = this.#committed.version + 1;
    const head = this.#writableHead();
    head.version = version;
    this.#installing = head;
    this.#headShared = true;
    const changes = [...this.#delta.values()];
    this.#delta = new Map();
    return { version, changes };
  }

  /** Every Worker holds `version`: it becomes the version stamped on requests. */
  commit(version: number): void {
    const installing = this.#installing;
    if (installing === undefined || installing.version !== version) {
      throw new Error(`plan set ${version} is not being installed`);
    }
    this.#committed = installing;
    this.#installing = undefined;
    for (const l of this.#onCommit) l(installing);
  }

  /** What a Worker starting now is sent: the committed set and the one being installed. */
  startingState(): { committed: FullPlanSet; installing: FullPlanSet | undefined } {
    const full = (s: SetState): FullPlanSet => ({
      version: s.version,
      entries: [...s.entries.values()].map((e) => ({
        ...wireMeta(e),
        plans: s.plans.get(e.target) ?? null,
      })),
    });
    return {
      committed: full(this.#committed),
      installing: this.#installing === undefined ? undefined : full(this.#installing),
    };
  }

  /** `listener` runs whenever the head gains a change. */
  onPending(listener: () => void): () => void {
    this.#onPending.add(listener);
    return () => this.#onPending.delete(listener);
  }

  /** `listener` runs after every commit. */
  onCommit(listener: (view: PlanSetView) => void): () => void {
    this.#onCommit.add(listener);
    return () => this.#onCommit.delete(listener);
  }
}
