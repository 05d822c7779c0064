/**
 * The conversion pool (docs/design/webhook.md#the-conversion-pool): the reviews a listener Worker
 * does not convert itself — larger than the inline bound, or of plans whose cost is not bounded by
 * their input — are converted in one of `size` Workers (src/webhook/convert/convert_worker.ts), so a
 * long conversion holds neither the event loop that answers `/healthz`, `/readyz` and `/metrics`
 * nor the other connections of the listener that read it.
 *
 * - **Start.** The Workers start with the first review handed to the pool: the listener Workers
 *   convert most reviews themselves, and only those whose plans may cost more than their size
 *   (`cel`, `regexSplit`) or that are larger than the inline bound come here.
 * - **Dispatch.** One request per started Worker at a time (a Worker has started once it
 *   acknowledged its plan sets), FIFO queue while every Worker is busy (the
 *   request governor bounds how many can wait). A request is stamped with the
 *   committed plan-set version when it is handed to a Worker, and its body buffer is transferred.
 * - **Swaps.** Registry changes become plan-set versions (src/webhook/convert/plan_sets.ts): the
 *   fanout (src/webhook/convert/plan_fanout.ts) sends version N+1 to every Worker of the pool and
 *   of the listeners and commits it only when every live one acknowledged it; the pool then tells
 *   its Workers to drop versions no request in flight holds any more.
 * - **Failure.** A Worker that dies (an uncaught error, a message it cannot read) or that holds a
 *   request past the request budget plus {@link WATCHDOG_GRACE_MS} is terminated and replaced; the
 *   request it held is answered `500` with the cause, never left hanging. A replacement starts from
 *   the committed set (and the one being installed).
 */
import type { WebhookLogger } from "../_log.ts";
import type { ConversionMetrics } from "../metrics.ts";
import { type ConvertAnswer, TEXT_TYPE, UNREGISTERED_TARGET_LABEL } from "./answer.ts";
import { replayMetrics } from "./metrics_tape.ts";
import type { PlanSetDelta, PlanSets } from "./plan_sets.ts";
import { PlanSetFanout, type PlanSetGroup, type PlanSetHolder } from "./plan_fanout.ts";
import type { ConvertContext } from "./context.ts";
import {
  type ContextSettings,
  contextSettings,
  type FromWorker,
  replaceSoon,
  superviseWorker,
  type ToWorker,
  transferable,
} from "./worker_protocol.ts";
import { siblingWorkerURL } from "../../lib/worker_url.ts";

/** How long past the request budget a Worker may hold a request before it is replaced. */
export const WATCHDOG_GRACE_MS = 5_000;

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

/** The conversion Worker's script (src/lib/worker_url.ts). */
export function convertWorkerURL(): URL {
  return siblingWorkerURL("convert_worker", import.meta.url);
}

export interface ConversionPoolOptions {
  /** Workers, started with the first review; at least 1. */
  size: number;
  planSets: PlanSets;
  /** The swaps the Workers take part in (default: a fanout of this pool alone). */
  fanout?: PlanSetFanout;
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

class Slot implements PlanSetHolder {
  job: Job | undefined;
  /** Highest plan-set version the Worker acknowledged; -1 before its reset ack. */
  acked = -1;
  readonly spawnedAt = performance.now();
  dead = false;
  constructor(readonly worker: Worker) {}

  get live(): boolean {
    return !this.dead;
  }

  install(delta: PlanSetDelta): void {
    this.worker.postMessage({ t: "install", delta } satisfies ToWorker);
  }
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

export class ConversionPool implements PlanSetGroup {
  readonly size: number;
  readonly #o: ConversionPoolOptions;
  readonly #fanout: PlanSetFanout;
  readonly #ownFanout: boolean;
  readonly #settings: ContextSettings;
  readonly #url: URL;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  /** Requests dispatched per plan-set version, for retiring old versions. */
  readonly #holding = new Map<number, number>();
  #retiredBelow = 0;
  #nextId = 1;
  #closed = false;
  #watchdog: ReturnType<typeof setTimeout> | undefined;
  readonly #leave: () => void;

  constructor(opts: ConversionPoolOptions) {
    this.#o = opts;
    this.#settings = contextSettings(opts.context);
    this.size = Math.max(1, Math.floor(opts.size));
    this.#url = opts.url ?? convertWorkerURL();
    this.#ownFanout = opts.fanout === undefined;
    this.#fanout = opts.fanout ?? new PlanSetFanout(opts.planSets);
    this.#leave = this.#fanout.join(this);
    this.#armWatchdog(opts.context.requestTimeoutMs + (opts.watchdogGraceMs ?? WATCHDOG_GRACE_MS));
  }

  /** Whether the Workers were started (by the first review). */
  get started(): boolean {
    return this.#slots.length > 0;
  }

  /** Converts one review in a Worker. Never rejects: a lost Worker answers 500. */
  convert(
    target: string,
    body: Uint8Array,
    startedAt: number,
    traceparent?: string,
  ): Promise<ConvertAnswer> {
    if (this.#closed) return Promise.resolve(serverError("conversion pool is closed"));
    if (this.#slots.length === 0) {
      for (let i = 0; i < this.size; i++) this.#slots.push(this.#spawn());
    }
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
    return this.#fanout.settled();
  }

  /** {@link PlanSetGroup}: the Workers, started or starting. */
  holders(): Iterable<PlanSetHolder> {
    return this.#slots;
  }

  /** {@link PlanSetGroup}: requests dispatched from now on are stamped `version`. */
  committed(): void {
    this.#retire();
  }

  // --- Workers ----------------------------------------------------------------------------------

  #spawn(): Slot {
    const worker = new Worker(this.#url, { type: "module", name: "dco-convert" });
    const slot = new Slot(worker);
    superviseWorker<FromWorker>(
      worker,
      "conversion",
      (m) => this.#onMessage(slot, m),
      (message) => this.#lose(slot, "error", message),
    );
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
      this.#fanout.acknowledged();
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
    this.#fanout.acknowledged(); // the lost Worker no longer holds up a swap
    if (this.#closed) return;
    const index = this.#slots.indexOf(slot);
    const replace = () => {
      if (this.#closed) return;
      this.#slots[index] = this.#spawn();
      this.#dispatch();
    };
    replaceSoon(slot.spawnedAt, replace);
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

  // --- plan-set versions ----------------------------------------------------------------------

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

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#leave();
    if (this.#ownFanout) this.#fanout.close();
    clearTimeout(this.#watchdog);
    for (const slot of this.#slots) {
      slot.dead = true;
      slot.worker.terminate();
      const job = slot.job;
      slot.job = undefined;
      job?.resolve(serverError("conversion pool closed"));
    }
    for (const job of this.#queue.splice(0)) job.resolve(serverError("conversion pool closed"));
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
