/**
 * The wake-cause metric (docs/design/kube.md#wake-causes): `dco_operator_wake_total{controller, cause}` with
 * `cause` ∈ `watch` | `backstop`, one increment per reconcile, so "watches carry the load" is
 * measured rather than believed.
 *
 * Mechanism (the controller calls it around every reconcile; reconcilers never see it):
 * - on **exit**, when the run armed a timer (a `requeueAfter` d > 0, or — this project's choice,
 *   see below — a rate-limited retry with computed delay d): `armed[key] = {armedAt: now,
 *   armedFor: d}`, overwriting;
 * - on **entry**: take and always delete `armed[key]`; with a record and
 *   `now ≥ armedAt + armedFor − 15 s` the cause is `backstop` (a timer came due; late
 *   arrivals too), otherwise — no record, or more than 15 s early — `watch`.
 *   Every backstop logs `controller`, `key` and `armed_for` (Go duration format).
 *
 * **Error retries arm too** (a deliberate choice): a failed reconcile's
 * rate-limited retry is a timer, so it is armed with the computed backoff delay and its wake is
 * counted as `backstop` — conservative, the watch share is never flattered by retries. The
 * reference arms only from `requeueAfter`, which counts retries as `watch`.
 */
import type { Registry } from "prom-client";
import { Counter } from "prom-client";
import { createLogger, formatDuration, type Logger } from "../obs/log.ts";
import { type Clock, realClock } from "./clock.ts";

/** Why a reconcile ran. */
export type WakeCause = "watch" | "backstop";

/** A timer armed by a reconcile exit. */
export interface WakeRecord {
  readonly armedAt: number;
  readonly armedFor: number;
}

/** Arrivals this close to (or after) the due time resolve to `backstop`. */
export const WAKE_TOLERANCE_MS = 15_000;

const counters = new WeakMap<Registry, Counter<"controller" | "cause">>();

function wakeCounter(registry: Registry): Counter<"controller" | "cause"> {
  let c = counters.get(registry);
  if (!c) {
    c = new Counter({
      name: "dco_operator_wake_total",
      help: "Reconciles by wake cause: watch (an event) or backstop (a timed requeue came due).",
      labelNames: ["controller", "cause"] as const,
      registers: [registry],
    });
    counters.set(registry, c);
  }
  return c;
}

/** Options of a {@link WakeClassifier}. */
export interface WakeClassifierOptions {
  controller: string;
  registry: Registry;
  clock?: Clock;
  logger?: Logger;
  toleranceMs?: number;
}

/** Per-controller wake accounting (see the module doc). */
export class WakeClassifier {
  readonly controller: string;
  #armed = new Map<string, WakeRecord>();
  #counter: Counter<"controller" | "cause">;
  #clock: Clock;
  #log: Logger;
  #tolerance: number;

  constructor(opts: WakeClassifierOptions) {
    this.controller = opts.controller;
    this.#counter = wakeCounter(opts.registry);
    this.#clock = opts.clock ?? realClock;
    this.#log = opts.logger ?? createLogger("kube.wake");
    this.#tolerance = opts.toleranceMs ?? WAKE_TOLERANCE_MS;
    // Both series exist from the start, so rate()/increase() see the first increment.
    this.#counter.inc({ controller: this.controller, cause: "watch" }, 0);
    this.#counter.inc({ controller: this.controller, cause: "backstop" }, 0);
  }

  /**
   * Reconcile entry: consumes the key's record, classifies, counts once. Returns the cause and
   * the consumed record (if any).
   */
  enter(key: string): { cause: WakeCause; record: WakeRecord | undefined } {
    const record = this.#armed.get(key);
    this.#armed.delete(key);
    const now = this.#clock.now();
    const cause: WakeCause = record && now >= record.armedAt + record.armedFor - this.#tolerance
      ? "backstop"
      : "watch";
    this.#counter.inc({ controller: this.controller, cause });
    if (cause === "backstop" && record) {
      this.#log.info("backstop wake", {
        controller: this.controller,
        key,
        armed_for: formatDuration(record.armedFor),
      });
    }
    return { cause, record };
  }

  /** Reconcile exit with a timer of `armedForMs` > 0 (ignored otherwise): (over)writes the record. */
  arm(key: string, armedForMs: number, armedAt: number = this.#clock.now()): void {
    if (armedForMs > 0) this.#armed.set(key, { armedAt, armedFor: armedForMs });
  }

  /** The key's record, if armed (tests, debugging). */
  peek(key: string): WakeRecord | undefined {
    return this.#armed.get(key);
  }

  /** Drops the key's record (e.g. the object is gone for good). */
  forget(key: string): void {
    this.#armed.delete(key);
  }

  /** Number of armed records. */
  get size(): number {
    return this.#armed.size;
  }
}
