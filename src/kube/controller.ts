/**
 * The reconciler runner: a {@link WorkQueue}, N workers pulling keys from it, and a reconcile
 * function `(key, signal) => Promise<{requeueAfter?} | void>` — controller-runtime's
 * `Controller` without its manager, plus the helpers that feed it (informer events → keys, and
 * paced fan-out).
 *
 * Result handling (controller-runtime's, metric labels included):
 * | reconcile outcome            | queue                              | `result` label  |
 * | ---------------------------- | ---------------------------------- | --------------- |
 * | `{requeueAfter: d > 0}`      | forget; `addAfter(key, d)`         | `requeue_after` |
 * | `{requeue: true}`            | `addRateLimited(key)`              | `requeue`       |
 * | returns / `{}`               | forget                             | `success`       |
 * | throws {@link TerminalError} | forget, no retry (+terminal count) | `error`         |
 * | throws anything else         | `addRateLimited(key)`, logged      | `error`         |
 *
 * A "panic" — a thrown non-Error, or one of JavaScript's own bug errors (`TypeError`,
 * `ReferenceError`, `RangeError`, `SyntaxError`, `EvalError`, `URIError`, exactly those classes;
 * the REST client wraps transport failures, so a `TypeError` here is a programming error) — is
 * also counted in `controller_runtime_reconcile_panics_total` and logged with its stack, then
 * handled as an error (controller-runtime's RecoverPanic). A worker never dies.
 *
 * Every reconcile is wrapped by the wake classifier (./wake.ts, runtime §9): entry consumes the
 * key's record and counts `dco_operator_wake_total{controller, cause}` once; exit arms a record
 * for a `requeueAfter` AND for rate-limited retries (error or `requeue`) with the computed
 * backoff delay (counted `backstop`, the spec's recommendation). The record's timer and the
 * queue's delayed add are the same one, because `addAfter` replaces a pending delayed add.
 * One further choice: a run that ends with no timer (success without requeue, or a terminal
 * error) cancels the delayed add armed by the previous run of that key, if it is still pending —
 * the newest reconcile's decision wins, so a superseded timer neither costs a reconcile nor gets
 * counted as a `watch` wake. Delayed adds scheduled by anyone else are never cancelled.
 *
 * Metric families (operations §1.4; shared by all controllers of a registry):
 * `controller_runtime_reconcile_total{controller, result}`, `…_reconcile_errors_total`,
 * `…_terminal_reconcile_errors_total`, `…_reconcile_panics_total`, `…_reconcile_time_seconds`,
 * `…_max_concurrent_reconciles`, `…_active_workers`, plus the queue's `workqueue_*`.
 *
 * Stop: `stop()` shuts the queue down (no new keys are handed out), aborts the `signal` passed
 * to in-flight reconciles and waits for them to return.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { createLogger, type Logger } from "../obs/log.ts";
import { type Clock, realClock } from "./clock.ts";
import type { KubeObject } from "./client.ts";
import { type Informer, objectKey } from "./informer.ts";
import { type RateLimiter, WorkQueue } from "./workqueue.ts";
import { WakeClassifier } from "./wake.ts";

/** What a reconcile asks for. */
export interface ReconcileResult {
  /** Run again after this many ms (replaces any pending delayed run of the key). */
  requeueAfter?: number;
  /** Run again after the rate limiter's backoff. */
  requeue?: boolean;
}

/** A reconcile function; `signal` aborts when the controller stops. */
export type Reconciler = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>;

/** An error that must not be retried (counted in the terminal-errors family). */
export class TerminalError extends Error {
  override name = "TerminalError";
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts);
  }
}

/** controller-runtime's reconcile-time buckets (seconds). */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.15,
  0.2,
  0.25,
  0.3,
  0.35,
  0.4,
  0.45,
  0.5,
  0.6,
  0.7,
  0.8,
  0.9,
  1.0,
  1.25,
  1.5,
  1.75,
  2.0,
  2.5,
  3.0,
  3.5,
  4.0,
  4.5,
  5,
  6,
  7,
  8,
  9,
  10,
  15,
  20,
  25,
  30,
  40,
  50,
  60,
];

const RESULTS = ["success", "error", "requeue", "requeue_after"] as const;
type ReconcileLabel = typeof RESULTS[number];

interface ControllerMetrics {
  total: Counter<"controller" | "result">;
  errors: Counter<"controller">;
  terminal: Counter<"controller">;
  panics: Counter<"controller">;
  time: Histogram<"controller">;
  maxConcurrent: Gauge<"controller">;
  active: Gauge<"controller">;
}

const metricsByRegistry = new WeakMap<Registry, ControllerMetrics>();

function controllerMetrics(registry: Registry): ControllerMetrics {
  let m = metricsByRegistry.get(registry);
  if (m) return m;
  const registers = [registry];
  const labelNames = ["controller"] as const;
  m = {
    total: new Counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller",
      labelNames: ["controller", "result"] as const,
      registers,
    }),
    errors: new Counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames,
      registers,
    }),
    terminal: new Counter({
      name: "controller_runtime_terminal_reconcile_errors_total",
      help: "Total number of terminal reconciliation errors per controller",
      labelNames,
      registers,
    }),
    panics: new Counter({
      name: "controller_runtime_reconcile_panics_total",
      help: "Total number of reconciliation panics per controller",
      labelNames,
      registers,
    }),
    time: new Histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames,
      buckets: [...RECONCILE_TIME_BUCKETS],
      registers,
    }),
    maxConcurrent: new Gauge({
      name: "controller_runtime_max_concurrent_reconciles",
      help: "Maximum number of concurrent reconciles per controller",
      labelNames,
      registers,
    }),
    active: new Gauge({
      name: "controller_runtime_active_workers",
      help: "Number of currently used workers per controller",
      labelNames,
      registers,
    }),
  };
  metricsByRegistry.set(registry, m);
  return m;
}

const BUG_ERRORS: ReadonlySet<unknown> = new Set([
  TypeError,
  ReferenceError,
  RangeError,
  SyntaxError,
  EvalError,
  URIError,
]);

/** Whether a thrown value counts as a panic (see the module doc). */
export function isPanic(e: unknown): boolean {
  return !(e instanceof Error) || BUG_ERRORS.has(e.constructor);
}

/** Options of a {@link Controller}. */
export interface ControllerOptions {
  /** Controller name: the `controller` (and queue `name`) label, e.g. `crdconversionconfig`. */
  name: string;
  reconcile: Reconciler;
  /** Concurrent reconciles (`--max-concurrent-reconciles`); default 1. */
  workers?: number;
  registry: Registry;
  clock?: Clock;
  logger?: Logger;
  rateLimiter?: RateLimiter;
  /** Wake-classifier tolerance; default 15 s (runtime §9). */
  wakeToleranceMs?: number;
}

/** A reconciler runner (see the module doc). */
export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly wake: WakeClassifier;
  readonly workers: number;
  #reconcile: Reconciler;
  #clock: Clock;
  #log: Logger;
  #m: ControllerMetrics;
  #abort = new AbortController();
  #running: Promise<void>[] | undefined;
  /** Due time of the delayed add each key's last run armed (to cancel it when superseded). */
  #ownTimers = new Map<string, number>();

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.workers = Math.max(1, Math.floor(opts.workers ?? 1));
    this.#reconcile = opts.reconcile;
    this.#clock = opts.clock ?? realClock;
    this.#log = (opts.logger ?? createLogger("kube.controller")).with({ controller: opts.name });
    this.queue = new WorkQueue({
      name: opts.name,
      registry: opts.registry,
      clock: this.#clock,
      rateLimiter: opts.rateLimiter,
    });
    this.wake = new WakeClassifier({
      controller: opts.name,
      registry: opts.registry,
      clock: this.#clock,
      logger: this.#log,
      toleranceMs: opts.wakeToleranceMs,
    });
    this.#m = controllerMetrics(opts.registry);
    const c = { controller: this.name };
    for (const result of RESULTS) this.#m.total.inc({ ...c, result }, 0);
    this.#m.errors.inc(c, 0);
    this.#m.terminal.inc(c, 0);
    this.#m.panics.inc(c, 0);
    this.#m.maxConcurrent.set(c, this.workers);
    this.#m.active.set(c, 0);
  }

  /** Queues a key now. */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** Queues a key after `delayMs` (replacing a pending delayed add of it). */
  enqueueAfter(key: string, delayMs: number): void {
    this.queue.addAfter(key, delayMs);
  }

  /** Whether workers are running. */
  get running(): boolean {
    return this.#running !== undefined && !this.#abort.signal.aborted;
  }

  /** Starts the workers (idempotent). */
  start(): this {
    if (this.#running || this.#abort.signal.aborted) return this;
    this.#log.info("Starting workers", { worker_count: this.workers });
    this.#running = Array.from({ length: this.workers }, () => this.#worker());
    return this;
  }

  /** Stops: no new keys, in-flight reconciles see their signal aborted; waits for them. */
  async stop(): Promise<void> {
    if (this.#abort.signal.aborted) {
      await Promise.all(this.#running ?? []);
      return;
    }
    this.queue.shutDown();
    this.#abort.abort(new Error(`controller ${this.name} stopped`));
    await Promise.all(this.#running ?? []);
    this.#log.info("All workers finished");
  }

  /** Starts, then stops when `signal` aborts; resolves once stopped. */
  async run(signal: AbortSignal): Promise<void> {
    this.start();
    if (!signal.aborted) {
      await new Promise<void>((resolve) =>
        signal.addEventListener("abort", () => resolve(), { once: true })
      );
    }
    await this.stop();
  }

  async #worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.#process(key);
      } catch (e) {
        // #process handles everything; keep the worker alive whatever happens.
        this.#log.error("worker failure (bug)", { key, error: e });
      }
    }
  }

  async #process(key: string): Promise<void> {
    const c = { controller: this.name };
    const signal = this.#abort.signal;
    this.wake.enter(key);
    const ownDue = this.#ownTimers.get(key);
    this.#ownTimers.delete(key);
    this.#m.active.inc(c);
    const start = this.#clock.now();
    let result: ReconcileLabel | undefined;
    try {
      let res: ReconcileResult | void;
      try {
        res = await this.#reconcile(key, signal);
      } catch (e) {
        if (signal.aborted) {
          this.#log.debug("reconcile ended by shutdown", { key, error: e });
          return;
        }
        result = "error";
        this.#m.errors.inc(c);
        if (isPanic(e)) {
          this.#m.panics.inc(c);
          this.#log.error("Observed a panic in reconciler", { key, error: e });
        }
        if (e instanceof TerminalError) {
          this.#m.terminal.inc(c);
          this.queue.forget(key);
          if (ownDue !== undefined) this.queue.cancelAfter(key, ownDue);
          this.#log.error("Reconciler error (terminal, not retried)", { key, error: e });
        } else {
          const delay = this.#retry(key);
          this.#log.error("Reconciler error", { key, error: e, retry_in_ms: delay });
        }
        return;
      }
      const after = res?.requeueAfter ?? 0;
      if (after > 0) {
        result = "requeue_after";
        this.queue.forget(key);
        const due = this.queue.addAfter(key, after);
        this.#armTimer(key, after, due);
      } else if (res?.requeue) {
        result = "requeue";
        this.#retry(key);
      } else {
        result = "success";
        this.queue.forget(key);
        if (ownDue !== undefined) this.queue.cancelAfter(key, ownDue);
      }
    } finally {
      this.#m.time.observe(c, (this.#clock.now() - start) / 1000);
      this.#m.active.dec(c);
      if (result !== undefined) this.#m.total.inc({ ...c, result });
      this.queue.done(key);
    }
  }

  /** Rate-limited requeue, armed as a backstop with its delay. Returns the delay. */
  #retry(key: string): number {
    const delay = this.queue.addRateLimited(key);
    this.#armTimer(key, delay, this.queue.pendingAfter(key));
    return delay;
  }

  #armTimer(key: string, delayMs: number, due: number | undefined): void {
    if (due === undefined) return; // added at once (or shut down): no timer to classify
    this.wake.arm(key, delayMs, due - delayMs);
    this.#ownTimers.set(key, due);
  }
}

// ---------------------------------------------------------------------------------------------
// Feeding controllers

/** Anything keys can be added to: a {@link WorkQueue}, a {@link Pacer}. */
export interface KeySink {
  add(key: string): void;
}

/** Maps an object to the keys to enqueue (a string, several, or none). */
export type KeyMapper<T> = (obj: T) => Iterable<string> | string | undefined;

/** Options of {@link enqueueFor}. */
export interface EnqueueForOptions<T> {
  /** Return false to ignore an event (e.g. an update that changed nothing relevant). */
  predicate?: (event: "add" | "update" | "delete", obj: T, oldObj?: T) => boolean;
  logger?: Logger;
}

/**
 * Wires an informer's events to a queue: every add/update/delete enqueues `map(obj)` (default:
 * the object's own key); an update maps both the old and the new object (a changed reference
 * must wake both sides). Returns the function that unwires it.
 */
export function enqueueFor<T extends KubeObject>(
  informer: Informer<T>,
  sink: KeySink,
  map: KeyMapper<T> = objectKey,
  opts: EnqueueForOptions<T> = {},
): () => void {
  const log = opts.logger ?? createLogger("kube.enqueue");
  const push = (obj: T) => {
    let keys: Iterable<string> | string | undefined;
    try {
      keys = map(obj);
    } catch (e) {
      log.error("key mapper threw", { informer: informer.name, error: e });
      return;
    }
    if (keys === undefined) return;
    if (typeof keys === "string") sink.add(keys);
    else for (const k of keys) sink.add(k);
  };
  const ok = (ev: "add" | "update" | "delete", obj: T, old?: T) =>
    !opts.predicate || opts.predicate(ev, obj, old);
  return informer.addEventHandler({
    add: (obj) => ok("add", obj) && push(obj),
    update: (old, obj) => {
      if (!ok("update", obj, old)) return;
      push(old);
      push(obj);
    },
    delete: (obj) => ok("delete", obj) && push(obj),
  });
}

/** Options of a {@link Pacer}. */
export interface PacerOptions {
  /** Keys per second; default 50 (runtime §6.5, G9). */
  qps?: number;
  clock?: Clock;
}

/**
 * Paced fan-out: keys added here reach the sink at no more than `qps` per second, in order,
 * each pending key once (adding a key already pending does nothing). Several fan-outs share the
 * pace. `stop()` drops what is pending.
 */
export class Pacer implements KeySink {
  readonly qps: number;
  #sink: KeySink;
  #clock: Clock;
  #interval: number;
  #pending = new Set<string>();
  #nextAt = -Infinity;
  #timer: number | undefined;
  #stopped = false;
  #idle: Array<() => void> = [];

  constructor(sink: KeySink, opts: PacerOptions = {}) {
    this.#sink = sink;
    this.qps = opts.qps ?? 50;
    if (!(this.qps > 0)) throw new Error(`Pacer: qps must be > 0, got ${this.qps}`);
    this.#clock = opts.clock ?? realClock;
    this.#interval = 1000 / this.qps;
  }

  /** Adds one key. */
  add(key: string): void {
    this.addAll([key]);
  }

  /** Adds keys (in order). */
  addAll(keys: Iterable<string>): void {
    if (this.#stopped) return;
    for (const k of keys) this.#pending.add(k);
    this.#pump();
  }

  /** Keys not yet passed on. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Resolves when nothing is pending. */
  idle(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Drops pending keys and the timer. */
  stop(): void {
    this.#stopped = true;
    this.#pending.clear();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const w of this.#idle.splice(0)) w();
  }

  #pump(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    while (this.#pending.size > 0) {
      const now = this.#clock.now();
      if (now < this.#nextAt) {
        this.#timer = this.#clock.setTimeout(() => {
          this.#timer = undefined;
          this.#pump();
        }, this.#nextAt - now);
        return;
      }
      const key = this.#pending.values().next().value as string;
      this.#pending.delete(key);
      this.#nextAt = now + this.#interval;
      this.#sink.add(key);
    }
    for (const w of this.#idle.splice(0)) w();
  }
}

/** Passes `keys` to `sink` at `qps` (default 50) per second; resolves when all are passed. */
export async function pacedEnqueue(
  sink: KeySink,
  keys: Iterable<string>,
  opts: PacerOptions = {},
): Promise<void> {
  const p = new Pacer(sink, opts);
  p.addAll(keys);
  await p.idle();
  p.stop();
}
