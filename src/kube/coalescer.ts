/**
 * A per-key coalescing window in front of a queue: the first add of a key arms a timer of
 * `windowMs`; adds of the same key until it fires change nothing; when it fires the key reaches
 * the sink once. Unlike a delayed add that each new add re-arms, a steady stream of events cannot
 * postpone the key forever: it is passed on at most `windowMs` after the first event of a burst.
 * For fan-ins whose consumer is costly and only needs the latest state (a server's status over
 * every config: one reconcile per window instead of one per config change).
 */
import { type Clock, realClock } from "./clock.ts";
import type { KeySink } from "./enqueue.ts";

export class Coalescer implements KeySink {
  readonly windowMs: number;
  #sink: KeySink;
  #clock: Clock;
  #armed = new Map<string, number>();
  #stopped = false;

  constructor(sink: KeySink, windowMs: number, clock: Clock = realClock) {
    if (!(windowMs > 0)) throw new Error(`Coalescer: windowMs must be > 0, got ${windowMs}`);
    this.#sink = sink;
    this.windowMs = windowMs;
    this.#clock = clock;
  }

  add(key: string): void {
    if (this.#stopped || this.#armed.has(key)) return;
    this.#armed.set(
      key,
      this.#clock.setTimeout(() => {
        this.#armed.delete(key);
        if (!this.#stopped) this.#sink.add(key);
      }, this.windowMs),
    );
  }

  /** Keys waiting for their window to close. */
  get pending(): number {
    return this.#armed.size;
  }

  /** Drops every armed key. */
  stop(): void {
    this.#stopped = true;
    for (const t of this.#armed.values()) this.#clock.clearTimeout(t);
    this.#armed.clear();
  }
}
