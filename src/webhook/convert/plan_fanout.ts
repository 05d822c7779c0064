/**
 * Plan-set swaps across every Worker that converts (docs/design/webhook.md#plan-set-swaps): the
 * conversion pool's Workers and the listener Workers each hold the plan sets, and a version is
 * committed only when every live one of them has acknowledged it.
 *
 * Registry changes collect in the head of {@link PlanSets}; the fanout takes the head as version
 * N+1, sends its delta to every live holder of every group, and when the last acknowledgement
 * arrives commits it: the main thread's ledger moves, the committed version is stored in a shared
 * cell that every listener Worker reads at the start of a conversion (so once any request anywhere
 * was served from N+1, no request that starts later, on any thread, reads N), and each group is
 * told, so that it can let its holders drop the versions no request holds any more.
 */
import type { PlanSetDelta, PlanSets } from "./plan_sets.ts";

/** One Worker that holds plan sets. */
export interface PlanSetHolder {
  /** False once it died or was stopped: it no longer holds a swap up. */
  readonly live: boolean;
  /** Highest version it acknowledged; -1 before the acknowledgement of its starting sets. */
  readonly acked: number;
  /** Sends it the next version's delta. */
  install(delta: PlanSetDelta): void;
}

/** Workers of one kind (the pool's, the listeners'). */
export interface PlanSetGroup {
  holders(): Iterable<PlanSetHolder>;
  /** `version` is committed: new requests read it. */
  committed(version: number): void;
}

export class PlanSetFanout {
  readonly planSets: PlanSets;
  /** `[0]`: the committed version, for threads that read it without a message. */
  readonly version: Int32Array;
  readonly #groups = new Set<PlanSetGroup>();
  #settledWaiters: (() => void)[] = [];
  #closed = false;
  readonly #unsubscribe: () => void;

  /** `version` is where the committed version is published (default: a cell of its own). */
  constructor(planSets: PlanSets, version: Int32Array = new Int32Array(1)) {
    this.planSets = planSets;
    this.version = version;
    Atomics.store(version, 0, planSets.version);
    this.#unsubscribe = planSets.onPending(() => queueMicrotask(() => this.#pump()));
    queueMicrotask(() => this.#pump());
  }

  /** Adds a group; returns the function that removes it. */
  join(group: PlanSetGroup): () => void {
    this.#groups.add(group);
    return () => {
      this.#groups.delete(group);
      this.acknowledged();
    };
  }

  /** A holder acknowledged a version, started, died or was stopped: a commit may be due. */
  acknowledged(): void {
    const installing = this.planSets.installing;
    if (installing === undefined || this.#closed) return;
    for (const group of this.#groups) {
      for (const h of group.holders()) {
        if (h.live && h.acked < installing) return;
      }
    }
    this.planSets.commit(installing);
    Atomics.store(this.version, 0, installing);
    for (const group of this.#groups) group.committed(installing);
    this.#pump();
  }

  /** Resolves once every registry change so far is committed in every live holder. */
  settled(): Promise<void> {
    if (!this.planSets.pending) return Promise.resolve();
    return new Promise((resolve) => this.#settledWaiters.push(resolve));
  }

  /** Starts installing the head's changes when no install is in progress. */
  #pump(): void {
    if (this.#closed) return;
    const delta = this.planSets.takeDelta();
    if (delta === undefined) {
      if (!this.planSets.pending) {
        for (const w of this.#settledWaiters.splice(0)) w();
      }
      return;
    }
    for (const group of this.#groups) {
      for (const h of group.holders()) if (h.live) h.install(delta);
    }
    this.acknowledged();
  }

  /** Stops following the plan sets; `settled()` waiters are released. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    for (const w of this.#settledWaiters.splice(0)) w();
  }
}
