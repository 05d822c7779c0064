/**
 * Time source of the workqueue, the controller and the wake classifier, injectable so tests can
 * drive backoff, delayed adds and the 15 s wake tolerance without sleeping.
 */

/** Milliseconds since the epoch plus timers; the only time source the framework uses. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): number;
  clearTimeout(id: number): void;
}

/** The process clock (`Date.now`, global timers). */
export const realClock: Clock = {
  now: () => Date.now(),
  // Deno's timer ids are numbers (node's typings, present through npm packages, say otherwise).
  setTimeout: (fn, ms) => setTimeout(fn, ms) as unknown as number,
  clearTimeout: (id) => clearTimeout(id),
};

/**
 * A manual clock for tests: time moves only through {@link FakeClock.advance}, which fires due
 * timers in due order (ties in creation order), each at its own due time.
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #timers = new Map<number, { due: number; fn: () => void }>();

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): number {
    const id = ++this.#seq;
    this.#timers.set(id, { due: this.#now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(id: number): void {
    this.#timers.delete(id);
  }

  /** Number of timers not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that comes due on the way. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      let nextId: number | undefined;
      let next: { due: number; fn: () => void } | undefined;
      for (const [id, t] of this.#timers) {
        if (t.due <= end && (!next || t.due < next.due)) [nextId, next] = [id, t];
      }
      if (!next || nextId === undefined) break;
      this.#timers.delete(nextId);
      this.#now = Math.max(this.#now, next.due);
      next.fn();
    }
    this.#now = end;
  }
}
