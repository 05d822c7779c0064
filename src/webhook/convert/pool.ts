/**
 * The conversion Worker pool (docs/design/webhook.md#the-conversion-worker-pool): the main thread
 * reads request bytes and writes answer bytes; parse → convert → stringify runs in one of `size`
 * Workers (src/webhook/convert/convert_worker.ts), so a long conversion never holds the event loop
 * that answers `/healthz`, `/readyz`, `/metrics` and the TLS handshakes.
 *
 * - **Dispatch.** One request per started Worker at a time (a Worker has started once it
 *   acknowledged its plan sets), FIFO queue while every Worker is busy (the
 *   request governor on the main thread bounds how many can wait). A request is stamped with the
 *   committed plan-set version when it is handed to a Worker, and its body buffer is transferred.
 * - **Swaps.** Registry changes become plan-set versions (src/webhook/convert/plan_sets.ts): the
 *   pool sends version N+1 to every Worker and commits it only when every live Worker acknowledged
 *   it; then tells the Workers to drop versions no request in flight holds any more.
 * - **Failure.** A Worker that dies (an uncaught error, a message it cannot read) or that holds a
 *   request past the request budget plus {@link WATCHDOG_GRACE_MS} is terminated and replaced; the
 *   request it held is answered `500` with the cause, never left hanging. A replacement starts from
 *   the committed set (and the one being installed).
 */
import type { WebhookLogger } from "../_log.ts";
import type { ConversionMetrics } from "../metrics.ts";
import { type ConvertAnswer, TEXT_TYPE, UNREGISTERED_TARGET_LABEL } from "./answer.ts";
import { replayMetrics } from "./metrics_tape.ts";
import type { PlanSets } from "./plan_sets.ts";
import type { ConvertContext } from "./context.ts";
import {
  type ContextSettings,
  contextSettings,
  type FromWorker,
  type ToWorker,
  transferable,
} from "./worker_protocol.ts";

/** How long past the request budget a Worker may hold a request before it is replaced. */
export const WATCHDOG_GRACE_MS = 5_000;
/** A Worker that dies within this long of its start is replaced only after the same delay. */
export const RESPAWN_BACKOFF_MS = 1_000;

/** Why a Worker was replaced (the `reason` label of the restart counter). */
export type WorkerLoss = "error" | "watchdog";

/** The pool's state, read at scrape time. */
export interface PoolStats {
  workers: number;
  busy: number;
  queued: number;
  /** The committed plan-set version. */
  planSetVersion: number;
}

/**
 * The Worker script. A bundle (`deno bundle` → dist/*.js) carries `convert_worker.js` next to the
 * role's entry, a source checkout `convert_worker.ts`; loading it needs read access to it.
 */
export function convertWorkerURL(): URL {
  const ext = import.meta.url.endsWith(".ts") ? "ts" : "js";
  return new URL(`./convert_worker.${ext}`, import.meta.url);
}

export interface ConversionPoolOptions {
  /** Workers; at least 1. */
  size: number;
  planSets: PlanSets;
  /**
   * The main thread's conversion context: its settings cross to every Worker
   * (`contextSettings`), and its `requestTimeoutMs` plus {@link WATCHDOG_GRACE_MS} is the watchdog.
   */
  context: ConvertContext;
  /** Where each answer's recorded metrics are replayed; omit for none. */
  metrics?: ConversionMetrics;
  /** A Worker was replaced. */
  onWorkerLost?: (reason: WorkerLoss) => void;
  /** Default {@link WATCHDOG_GRACE_MS}. */
  watchdogGraceMs?: number;
  logger?: WebhookLogger;
  url?: URL;
}

interface Job {
  id: number;
  target: string;
  body: Uint8Array;
  startedAt: number;
  /** A traced request's review span. */
  traceparent: string | undefined;
  version: number;
  dispatchedAt: number;
  resolve: (a: ConvertAnswer) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
  /** Highest plan-set version the Worker acknowledged; -1 before its reset ack. */
  acked: number;
  spawnedAt: number;
  dead: boolean;
}

const encoder = new TextEncoder();

function serverError(message: string): ConvertAnswer {
  return {
    status: 500,
    contentType: TEXT_TYPE,
    body: encoder.encode(message + "\n"),
    close: false,
  };
}

export class ConversionPool {
  readonly size: number;
  readonly #o: ConversionPoolOptions;
  readonly #settings: ContextSettings;
  readonly #url: URL;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  /** Requests dispatched per plan-set version, for retiring old versions. */
  readonly #holding = new Map<number, number>();
  #retiredBelow = 0;
  #nextId = 1;
  #closed = false;
  #settledWaiters: (() => void)[] = [];
  #watchdog: ReturnType<typeof setTimeout> | undefined;
  readonly #unsubscribe: () => void;

  constructor(opts: ConversionPoolOptions) {
    this.#o = opts;
    this.#settings = contextSettings(opts.context);
    this.size = Math.max(1, Math.floor(opts.size));
    this.#url = opts.url ?? convertWorkerURL();
    for (let i = 0; i < this.size; i++) this.#slots.push(this.#spawn());
    this.#unsubscribe = opts.planSets.onPending(() => queueMicrotask(() => this.#pump()));
    this.#armWatchdog(opts.context.requestTimeoutMs + (opts.watchdogGraceMs ?? WATCHDOG_GRACE_MS));
    this.#pump();
  }

  /** Converts one review in a Worker. Never rejects: a lost Worker answers 500. */
  convert(
    target: string,
    body: Uint8Array,
    startedAt: number,
    traceparent?: string,
  ): Promise<ConvertAnswer> {
    if (this.#closed) return Promise.resolve(serverError("conversion pool is closed"));
    return new Promise((resolve) => {
      this.#queue.push({
        id: this.#nextId++,
        target,
        body,
        startedAt,
        traceparent,
        version: -1,
        dispatchedAt: 0,
        resolve,
      });
      this.#dispatch();
    });
  }

  stats(): PoolStats {
    let workers = 0;
    let busy = 0;
    for (const s of this.#slots) {
      if (s.dead) continue;
      workers++;
      if (s.job !== undefined) busy++;
    }
    return {
      workers,
      busy,
      queued: this.#queue.length,
      planSetVersion: this.#o.planSets.version,
    };
  }

  /** Resolves once every registry change so far is committed in every Worker. */
  settled(): Promise<void> {
    if (!this.#o.planSets.pending) return Promise.resolve();
    return new Promise((resolve) => this.#settledWaiters.push(resolve));
  }

  // --- Workers ----------------------------------------------------------------------------------

  #spawn(): Slot {
    const worker = new Worker(this.#url, { type: "module", name: "dco-convert" });
    const slot: Slot = {
      worker,
      job: undefined,
      acked: -1,
      spawnedAt: performance.now(),
      dead: false,
    };
    worker.onmessage = (e: MessageEvent<FromWorker>) => this.#onMessage(slot, e.data);
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      this.#lose(slot, "error", `conversion worker failed: ${e.message || "unknown error"}`);
    };
    worker.onmessageerror = () => {
      this.#lose(slot, "error", "conversion worker failed: a message could not be read");
    };
    const o = this.#o;
    this.#post(slot, { t: "init", settings: this.#settings, metrics: o.metrics !== undefined });
    const { committed, installing } = o.planSets.startingState();
    this.#post(slot, {
      t: "reset",
      sets: installing === undefined ? [committed] : [committed, installing],
    });
    return slot;
  }

  #post(slot: Slot, m: ToWorker, transfer: Transferable[] = []): void {
    slot.worker.postMessage(m, transfer);
  }

  #onMessage(slot: Slot, m: FromWorker): void {
    if (slot.dead) return;
    if (m.t === "ack") {
      const starting = slot.acked < 0;
      slot.acked = Math.max(slot.acked, m.version);
      this.#maybeCommit();
      if (starting) this.#dispatch();
      return;
    }
    const job = slot.job;
    if (job === undefined || job.id !== m.id) return;
    slot.job = undefined;
    this.#release(job.version);
    if (this.#o.metrics !== undefined) replayMetrics(m.metrics, this.#o.metrics);
    job.resolve({
      status: m.status,
      contentType: m.contentType,
      body: m.body,
      headRoom: m.headRoom,
      close: false,
      result: m.result,
      message: m.message,
    });
    this.#dispatch();
  }

  /** Terminates a Worker, answers the request it held, and replaces it. */
  #lose(slot: Slot, reason: WorkerLoss, message: string): void {
    if (slot.dead) return;
    slot.dead = true;
    slot.worker.terminate();
    const job = slot.job;
    slot.job = undefined;
    this.#o.logger?.error("conversion worker lost; replacing it", {
      reason,
      error: message,
      target: job?.target,
    });
    this.#o.onWorkerLost?.(reason);
    if (job !== undefined) {
      this.#release(job.version);
      const label = this.#o.planSets.get(job.target) === undefined
        ? UNREGISTERED_TARGET_LABEL
        : job.target;
      const seconds = (performance.timeOrigin + performance.now() - job.startedAt) / 1000;
      this.#o.metrics?.observeReview(label, "unknown", "worker_lost", seconds);
      job.resolve(serverError(`${message}; the worker was replaced, retry the request`));
    }
    this.#maybeCommit(); // the lost Worker no longer holds up a swap
    if (this.#closed) return;
    const index = this.#slots.indexOf(slot);
    const replace = () => {
      if (this.#closed) return;
      this.#slots[index] = this.#spawn();
      this.#dispatch();
    };
    if (performance.now() - slot.spawnedAt < RESPAWN_BACKOFF_MS) {
      setTimeout(replace, RESPAWN_BACKOFF_MS);
    } else {
      replace();
    }
  }

  /** Checks the busy Workers once a second (the timer never keeps the process alive). */
  #armWatchdog(limitMs: number): void {
    const timer = setTimeout(() => {
      this.#sweep(limitMs);
      if (!this.#closed) this.#armWatchdog(limitMs);
    }, 1_000);
    Deno.unrefTimer(timer);
    this.#watchdog = timer;
  }

  #sweep(limitMs: number): void {
    const now = performance.now();
    for (const slot of this.#slots) {
      const job = slot.job;
      if (slot.dead || job === undefined || now - job.dispatchedAt <= limitMs) continue;
      this.#lose(
        slot,
        "watchdog",
        `conversion worker held the request for more than ${limitMs / 1000}s ` +
          `(the request budget plus its grace)`,
      );
    }
  }

  #dispatch(): void {
    if (this.#queue.length === 0) return;
    const version = this.#o.planSets.version;
    for (const slot of this.#slots) {
      if (this.#queue.length === 0) return;
      // A starting Worker takes requests once it holds its plan sets (its start is not charged
      // to a request's watchdog, and a Worker that cannot start loses no request).
      if (slot.dead || slot.job !== undefined || slot.acked < 0) continue;
      const job = this.#queue.shift()!;
      job.version = version;
      job.dispatchedAt = performance.now();
      this.#holding.set(version, (this.#holding.get(version) ?? 0) + 1);
      slot.job = job;
      const body = transferable(job.body);
      this.#post(slot, {
        t: "convert",
        id: job.id,
        version,
        target: job.target,
        body,
        startedAt: job.startedAt,
        traceparent: job.traceparent,
      }, [body.buffer]);
    }
  }

  // --- plan-set swaps ---------------------------------------------------------------------------

  /** Starts installing the head's changes when no install is in progress. */
  #pump(): void {
    if (this.#closed) return;
    const delta = this.#o.planSets.takeDelta();
    if (delta === undefined) {
      if (!this.#o.planSets.pending) this.#wakeSettled();
      return;
    }
    for (const slot of this.#slots) {
      if (!slot.dead) this.#post(slot, { t: "install", delta });
    }
    this.#maybeCommit();
  }

  /** Commits the version being installed once every live Worker holds it. */
  #maybeCommit(): void {
    const sets = this.#o.planSets;
    const installing = sets.installing;
    if (installing === undefined) return;
    for (const slot of this.#slots) {
      if (!slot.dead && slot.acked < installing) return;
    }
    sets.commit(installing);
    this.#retire();
    this.#pump();
  }

  #release(version: number): void {
    const n = (this.#holding.get(version) ?? 1) - 1;
    if (n > 0) {
      this.#holding.set(version, n);
      return;
    }
    this.#holding.delete(version);
    if (version < this.#o.planSets.version) this.#retire();
  }

  /** Tells the Workers the lowest version a request in flight (or a new one) may still read. */
  #retire(): void {
    let below = this.#o.planSets.version;
    for (const v of this.#holding.keys()) below = Math.min(below, v);
    if (below <= this.#retiredBelow) return;
    this.#retiredBelow = below;
    for (const slot of this.#slots) {
      if (!slot.dead) this.#post(slot, { t: "retire", below });
    }
  }

  #wakeSettled(): void {
    for (const w of this.#settledWaiters.splice(0)) w();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    clearTimeout(this.#watchdog);
    for (const slot of this.#slots) {
      slot.dead = true;
      slot.worker.terminate();
      const job = slot.job;
      slot.job = undefined;
      job?.resolve(serverError("conversion pool closed"));
    }
    for (const job of this.#queue.splice(0)) job.resolve(serverError("conversion pool closed"));
    this.#wakeSettled();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
