/**
 * A rate-limited, delaying workqueue with controller-runtime (client-go) semantics, and the
 * `workqueue_*` metric families under client-go's names and labels (docs/design/kube.md#workqueue).
 *
 * Semantics:
 * - A key is queued at most once (`dirty`) and is **never handed to two workers at once**
 *   (`processing`). Adding a key that is being processed marks it dirty; `done(key)` then
 *   queues it again, so it runs once more after the current run.
 * - `addRateLimited(key)` waits `max(per-key backoff, token bucket)`: per key 5 ms doubling to a
 *   1000 s cap, reset by `forget(key)`; overall 10 qps with a burst of 100 (client-go's
 *   `DefaultTypedControllerRateLimiter`).
 * - `addAfter(key, d)` schedules a delayed add. **Deviation from client-go, on purpose (the wake
 *   classifier needs it, docs/design/kube.md#wake-causes):** a newer `addAfter` for a key *replaces* its pending delayed add,
 *   whether the new due time is earlier or later, so the timer that fires is the one last armed
 *   (client-go keeps the earliest, which would make the wake classifier call that earlier timer
 *   a `watch`). `cancelAfter` removes a pending delayed add.
 * - `shutDown()` stops at once: adds are ignored, pending delayed adds are dropped, waiting
 *   `get()` calls return undefined and queued keys are not handed out any more (controllers
 *   stop by cancelling in-flight work, not by draining). `drain()` waits for in-flight keys.
 *
 * Metrics (registered once per registry and shared by all queues in it; labels `name` and
 * `controller` = the queue name, `priority` "" on the depth gauge): `workqueue_depth`,
 * `workqueue_adds_total`, `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`
 * (buckets 1e-8 … 1e3, ×10), `workqueue_unfinished_work_seconds`,
 * `workqueue_longest_running_processor_seconds` (computed at scrape time), and
 * `workqueue_retries_total`.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { type Clock, realClock } from "./clock.ts";

// ---------------------------------------------------------------------------------------------
// Rate limiters

/** Decides how long a key waits before its next retry. */
export interface RateLimiter {
  /** Delay for the key's next retry (records one more failure). */
  when(key: string): number;
  /** Forgets the key's failures (after a success). */
  forget(key: string): void;
  /** Failures recorded for the key. */
  numRequeues(key: string): number;
}

/** Per-key exponential backoff: `baseMs · 2^failures`, capped at `maxMs`. */
export class ItemExponentialRateLimiter implements RateLimiter {
  #failures = new Map<string, number>();
  constructor(readonly baseMs = 5, readonly maxMs = 1_000_000) {}

  when(key: string): number {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    const d = this.baseMs * 2 ** Math.min(n, 62);
    return Math.min(d, this.maxMs);
  }
  forget(key: string): void {
    this.#failures.delete(key);
  }
  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

/** An overall token bucket (golang.org/x/time/rate reservations): `qps` refill, `burst` size. */
export class BucketRateLimiter implements RateLimiter {
  #tokens: number;
  #last: number;
  constructor(readonly qps = 10, readonly burst = 100, private readonly clock: Clock = realClock) {
    this.#tokens = burst;
    this.#last = clock.now();
  }

  when(): number {
    const now = this.clock.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1000) * this.qps);
    this.#last = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens / this.qps) * 1000);
  }
  forget(): void {}
  numRequeues(): number {
    return 0;
  }
}

/** The largest delay of several limiters. */
export class MaxOfRateLimiter implements RateLimiter {
  readonly limiters: readonly RateLimiter[];
  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }
  when(key: string): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(key));
    return max;
  }
  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }
  numRequeues(key: string): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(key));
    return max;
  }
}

/** controller-runtime's default: max(5 ms…1000 s per key, 10 qps / burst 100 overall). */
export function defaultControllerRateLimiter(clock: Clock = realClock): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialRateLimiter(5, 1_000_000),
    new BucketRateLimiter(10, 100, clock),
  );
}

// ---------------------------------------------------------------------------------------------
// Metrics

/** 1e-8 s × 10^i, 12 buckets (client-go `ExponentialBuckets(10e-9, 10, 12)`). */
export const WORKQUEUE_BUCKETS: readonly number[] = Array.from(
  { length: 12 },
  (_, i) => Number(`1e${i - 8}`),
);

interface QueueMetrics {
  depth: Gauge<"name" | "controller" | "priority">;
  adds: Counter<"name" | "controller">;
  queueDuration: Histogram<"name" | "controller">;
  workDuration: Histogram<"name" | "controller">;
  retries: Counter<"name" | "controller">;
  /** Queues feeding the scrape-time gauges. */
  live: Set<WorkQueue>;
}

const metricsByRegistry = new WeakMap<Registry, QueueMetrics>();

function queueMetrics(registry: Registry): QueueMetrics {
  let m = metricsByRegistry.get(registry);
  if (m) return m;
  const registers = [registry];
  const labelNames = ["name", "controller"] as const;
  const live = new Set<WorkQueue>();
  m = {
    live,
    depth: new Gauge({
      name: "workqueue_depth",
      help: "Current depth of workqueue",
      labelNames: ["name", "controller", "priority"] as const,
      registers,
    }),
    adds: new Counter({
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
      labelNames,
      registers,
    }),
    queueDuration: new Histogram({
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested",
      labelNames,
      buckets: [...WORKQUEUE_BUCKETS],
      registers,
    }),
    workDuration: new Histogram({
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes.",
      labelNames,
      buckets: [...WORKQUEUE_BUCKETS],
      registers,
    }),
    retries: new Counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames,
      registers,
    }),
  };
  new Gauge({
    name: "workqueue_unfinished_work_seconds",
    help: "How many seconds of work has been done that is in progress and hasn't been " +
      "observed by work_duration. Large values indicate stuck threads. One can deduce the " +
      "number of stuck threads by observing the rate at which this increases.",
    labelNames,
    registers,
    collect() {
      for (const q of live) this.set(q.labels, q.unfinishedWorkSeconds());
    },
  });
  new Gauge({
    name: "workqueue_longest_running_processor_seconds",
    help: "How many seconds has the longest running processor for workqueue been running.",
    labelNames,
    registers,
    collect() {
      for (const q of live) this.set(q.labels, q.longestRunningProcessorSeconds());
    },
  });
  metricsByRegistry.set(registry, m);
  return m;
}

// ---------------------------------------------------------------------------------------------
// The queue

/** Options of a {@link WorkQueue}. */
export interface WorkQueueOptions {
  /** Queue name = the controller's name (both metric labels). */
  name: string;
  /** Where the `workqueue_*` families go; none = no metrics. */
  registry?: Registry;
  clock?: Clock;
  /** Default {@link defaultControllerRateLimiter}. */
  rateLimiter?: RateLimiter;
}

/** See the module doc. Keys are strings (`namespace/name` or `name` by convention). */
export class WorkQueue {
  readonly name: string;
  /** Metric labels of this queue. */
  readonly labels: Readonly<{ name: string; controller: string }>;
  readonly rateLimiter: RateLimiter;
  #clock: Clock;
  #queue: string[] = [];
  #head = 0;
  #dirty = new Set<string>();
  #processing = new Set<string>();
  /** When each dirty key entered the queue (queue_duration). */
  #addedAt = new Map<string, number>();
  /** When each processing key was handed out (work_duration, unfinished work). */
  #startedAt = new Map<string, number>();
  #delayed = new Map<string, { due: number; timer: number }>();
  #waiters: Array<(key: string | undefined) => void> = [];
  #drainWaiters: Array<() => void> = [];
  #shuttingDown = false;
  #m: QueueMetrics | undefined;

  constructor(opts: WorkQueueOptions) {
    this.name = opts.name;
    this.labels = { name: opts.name, controller: opts.name };
    this.#clock = opts.clock ?? realClock;
    this.rateLimiter = opts.rateLimiter ?? defaultControllerRateLimiter(this.#clock);
    if (opts.registry) {
      this.#m = queueMetrics(opts.registry);
      this.#m.live.add(this);
      // Pre-create every series at 0, so increase() sees the first add/retry.
      this.#m.adds.inc(this.labels, 0);
      this.#m.retries.inc(this.labels, 0);
      this.#setDepth();
    }
  }

  /** Queues `key` now (no-op if already queued; marks it dirty if being processed). */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#m?.adds.inc(this.labels);
    this.#dirty.add(key);
    this.#addedAt.set(key, this.#clock.now());
    if (this.#processing.has(key)) return;
    this.#push(key);
  }

  /**
   * Queues `key` after `delayMs`, replacing any pending delayed add of the key. Returns the due
   * time (clock ms), or undefined when added at once (delay ≤ 0) or shut down.
   */
  addAfter(key: string, delayMs: number): number | undefined {
    if (this.#shuttingDown) return undefined;
    this.cancelAfter(key);
    if (!(delayMs > 0)) {
      this.add(key);
      return undefined;
    }
    const due = this.#clock.now() + delayMs;
    const timer = this.#clock.setTimeout(() => {
      const d = this.#delayed.get(key);
      if (d?.timer !== timer) return;
      this.#delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.#delayed.set(key, { due, timer });
    return due;
  }

  /**
   * Cancels the pending delayed add of `key` (only if its due time is `due`, when given).
   * Returns whether one was cancelled.
   */
  cancelAfter(key: string, due?: number): boolean {
    const d = this.#delayed.get(key);
    if (!d || (due !== undefined && d.due !== due)) return false;
    this.#clock.clearTimeout(d.timer);
    this.#delayed.delete(key);
    return true;
  }

  /** Due time of the pending delayed add of `key`, if any. */
  pendingAfter(key: string): number | undefined {
    return this.#delayed.get(key)?.due;
  }

  /** Queues `key` after the rate limiter's delay; returns that delay (ms). */
  addRateLimited(key: string): number {
    const d = this.rateLimiter.when(key);
    if (this.#shuttingDown) return d;
    this.#m?.retries.inc(this.labels);
    this.addAfter(key, d);
    return d;
  }

  /** Forgets the key's retry history (call after a success). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * The next key to process, waiting for one; undefined once shut down. The caller owns the key
   * until it calls {@link done}.
   */
  get(): Promise<string | undefined> {
    if (this.#shuttingDown) return Promise.resolve(undefined);
    const key = this.#pop();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks `key` processed; a key that became dirty meanwhile is queued again. */
  done(key: string): void {
    if (!this.#processing.delete(key)) return;
    const started = this.#startedAt.get(key);
    this.#startedAt.delete(key);
    if (started !== undefined) {
      this.#m?.workDuration.observe(this.labels, (this.#clock.now() - started) / 1000);
    }
    if (this.#dirty.has(key) && !this.#shuttingDown) this.#push(key);
    if (this.#processing.size === 0) { for (const w of this.#drainWaiters.splice(0)) w(); }
  }

  /** Keys waiting to be handed out. */
  len(): number {
    return this.#queue.length - this.#head;
  }

  /** Keys handed out and not yet done. */
  get processingCount(): number {
    return this.#processing.size;
  }

  /** Pending delayed adds. */
  get delayedCount(): number {
    return this.#delayed.size;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  isProcessing(key: string): boolean {
    return this.#processing.has(key);
  }

  isDirty(key: string): boolean {
    return this.#dirty.has(key);
  }

  /** Stops the queue (see the module doc). Idempotent. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const d of this.#delayed.values()) this.#clock.clearTimeout(d.timer);
    this.#delayed.clear();
    for (const w of this.#waiters.splice(0)) w(undefined);
    this.#queue = [];
    this.#head = 0;
    this.#setDepth();
    if (this.#processing.size === 0) {
      for (const w of this.#drainWaiters.splice(0)) w();
      this.#m?.live.delete(this);
    }
  }

  /** Resolves when no key is being processed. */
  drain(): Promise<void> {
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** Sum of the running times of keys being processed (seconds). */
  unfinishedWorkSeconds(): number {
    const now = this.#clock.now();
    let total = 0;
    for (const t of this.#startedAt.values()) total += now - t;
    if (this.#shuttingDown && this.#processing.size === 0) this.#m?.live.delete(this);
    return total / 1000;
  }

  /** Running time of the longest-running key being processed (seconds). */
  longestRunningProcessorSeconds(): number {
    const now = this.#clock.now();
    let max = 0;
    for (const t of this.#startedAt.values()) max = Math.max(max, now - t);
    return max / 1000;
  }

  #push(key: string): void {
    const w = this.#waiters.shift();
    if (w) {
      this.#handOut(key);
      w(key);
      return;
    }
    this.#queue.push(key);
    this.#setDepth();
  }

  #pop(): string | undefined {
    if (this.#head >= this.#queue.length) return undefined;
    const key = this.#queue[this.#head++];
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#handOut(key);
    this.#setDepth();
    return key;
  }

  #handOut(key: string): void {
    const now = this.#clock.now();
    const added = this.#addedAt.get(key);
    this.#addedAt.delete(key);
    if (added !== undefined) this.#m?.queueDuration.observe(this.labels, (now - added) / 1000);
    this.#dirty.delete(key);
    this.#processing.add(key);
    this.#startedAt.set(key, now);
  }

  #setDepth(): void {
    this.#m?.depth.set({ ...this.labels, priority: "" }, this.len());
  }
}
