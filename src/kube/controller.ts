/**
 * The reconciler runner: a {@link WorkQueue}, N workers pulling keys from it, and a reconcile
 * function `(key, signal, log) => Promise<{requeueAfter?} | void>` — controller-runtime's
 * `Controller` without its manager. `log` is a per-reconcile logger carrying controller-runtime's
 * fields (`reconcileID`, `name`, `namespace`, the object reference under its kind). What feeds its queue (informer events → keys, paced fan-out)
 * is in ./enqueue.ts; its metric families are in ./controller_metrics.ts.
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
 * Every reconcile is wrapped by the wake classifier (./wake.ts, docs/design/kube.md#wake-causes): entry consumes the
 * key's record and counts `dco_operator_wake_total{controller, cause}` once; exit arms a record
 * for a `requeueAfter` AND for rate-limited retries (error or `requeue`) with the computed
 * backoff delay (counted `backstop`, conservatively). The record's timer and the
 * queue's delayed add are the same one, because `addAfter` replaces a pending delayed add.
 * One further choice: a run that ends with no timer (success without requeue, or a terminal
 * error) cancels the delayed add armed by the previous run of that key, if it is still pending —
 * the newest reconcile's decision wins, so a superseded timer neither costs a reconcile nor gets
 * counted as a `watch` wake. Delayed adds scheduled by anyone else are never cancelled.
 *
 * Metric families (./controller_metrics.ts; shared by all controllers of a registry):
 * `controller_runtime_reconcile_total{controller, result}`, `…_reconcile_errors_total`,
 * `…_terminal_reconcile_errors_total`, `…_reconcile_panics_total`, `…_reconcile_time_seconds`,
 * `…_max_concurrent_reconciles`, `…_active_workers`, plus the queue's `workqueue_*`.
 *
 * Stop: `stop()` shuts the queue down (no new keys are handed out), aborts the `signal` passed
 * to in-flight reconciles and waits for them to return.
 */
import type { Registry } from "prom-client";
import { createLogger, type Logger } from "../obs/log.ts";
import { type Clock, realClock } from "./clock.ts";
import {
  type ControllerMetrics,
  controllerMetrics,
  type ReconcileLabel,
  RESULTS,
} from "./controller_metrics.ts";
import { type RateLimiter, WorkQueue } from "./workqueue.ts";
import { WakeClassifier } from "./wake.ts";

/** What a reconcile asks for. */
export interface ReconcileResult {
  /** Run again after this many ms (replaces any pending delayed run of the key). */
  requeueAfter?: number;
  /** Run again after the rate limiter's backoff. */
  requeue?: boolean;
}

/**
 * A reconcile function; `signal` aborts when the controller stops; `log` is this reconcile's
 * logger (see {@link reconcileLogFields}), for the reconciler's own lines.
 */
export type Reconciler = (
  key: string,
  signal: AbortSignal,
  log: Logger,
) => Promise<ReconcileResult | void>;

/** The kind a controller reconciles (controller-runtime's `controllerGroup`/`controllerKind`). */
export interface ControllerKind {
  group: string;
  kind: string;
}

/** A key as an object reference: `namespace/name`, or `name` for a cluster-scoped object. */
export function objectRefOfKey(key: string): { name: string; namespace?: string } {
  const slash = key.indexOf("/");
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * The fields of every line of one reconcile, controller-runtime's: `reconcileID` (a UUID per
 * reconcile), `name`, `namespace` ("" when cluster-scoped), and with a kind `controllerGroup`,
 * `controllerKind` and the object reference under the kind's name, e.g.
 * `"CRDConversionConfig": {"name": "x"}`.
 */
export function reconcileLogFields(
  ref: { name: string; namespace?: string },
  reconcileID: string,
  kind?: ControllerKind,
): Record<string, unknown> {
  return {
    ...(kind === undefined ? {} : {
      controllerGroup: kind.group,
      controllerKind: kind.kind,
      [kind.kind]: ref.namespace
        ? { name: ref.name, namespace: ref.namespace }
        : { name: ref.name },
    }),
    namespace: ref.namespace ?? "",
    name: ref.name,
    reconcileID,
  };
}

/** An error that must not be retried (counted in the terminal-errors family). */
export class TerminalError extends Error {
  override name = "TerminalError";
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts);
  }
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
  /** Wake-classifier tolerance; default 15 s (docs/design/kube.md#wake-causes). */
  wakeToleranceMs?: number;
  /** The kind reconciled, for the log fields. */
  kind?: ControllerKind;
  /** How a key names its object (default {@link objectRefOfKey}). */
  objectRef?: (key: string) => { name: string; namespace?: string };
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
  #kind: ControllerKind | undefined;
  #objectRef: (key: string) => { name: string; namespace?: string };
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
    this.#kind = opts.kind;
    this.#objectRef = opts.objectRef ?? objectRefOfKey;
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
    const log = this.#log.with(
      reconcileLogFields(this.#objectRef(key), crypto.randomUUID(), this.#kind),
    );
    let result: ReconcileLabel | undefined;
    try {
      let res: ReconcileResult | void;
      try {
        res = await this.#reconcile(key, signal, log);
      } catch (e) {
        if (signal.aborted) {
          log.debug("reconcile ended by shutdown", { key, error: e });
          return;
        }
        result = "error";
        this.#m.errors.inc(c);
        if (isPanic(e)) {
          this.#m.panics.inc(c);
          log.error("Observed a panic in reconciler", { key, error: e });
        }
        if (e instanceof TerminalError) {
          this.#m.terminal.inc(c);
          this.queue.forget(key);
          if (ownDue !== undefined) this.queue.cancelAfter(key, ownDue);
          log.error("Reconciler error (terminal, not retried)", { key, error: e });
        } else {
          const delay = this.#retry(key);
          log.error("Reconciler error", { key, error: e, retry_in_ms: delay });
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
