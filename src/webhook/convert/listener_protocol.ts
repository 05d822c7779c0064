/**
 * The messages between the main thread (src/webhook/convert/listeners.ts) and a listener Worker
 * (src/webhook/convert/listener_worker.ts), and the shared counts they both read: one
 * `SharedArrayBuffer` of 32-bit cells holding the request governor's counts, the open
 * connections, the committed plan-set version, and each Worker's own share of the counts (what a
 * lost Worker held is given back from it).
 */
import type { KeyPairPem } from "../../net/certificate_watch.ts";
import type { HttpLimits } from "../../net/socket_limits.ts";
import type { ConnectionCells } from "../../net/socket_limits.ts";
import type { MetricsDelta, ReviewResult } from "../metrics.ts";
import type { GovernorBounds, GovernorCells } from "./governor.ts";
import type { PlanMessage } from "./plan_replica.ts";
import type { ContextSettings } from "./worker_protocol.ts";

/** Cells: requests, bytes, connections, plan-set version; then per Worker its three shares. */
const HEADER = 4;
const PER_WORKER = 3;

/** The cells one port's listener Workers and the main thread share. */
export class ListenerCells {
  readonly buffer: SharedArrayBuffer;
  readonly #all: Int32Array;

  /** Cells for `workers` listener Workers, or a view of `buffer` (in a Worker). */
  constructor(workers: number, buffer?: SharedArrayBuffer) {
    this.buffer = buffer ?? new SharedArrayBuffer((HEADER + PER_WORKER * workers) * 4);
    this.#all = new Int32Array(this.buffer);
  }

  /** The committed plan-set version (`[0]`). */
  get version(): Int32Array {
    return this.#all.subarray(3, 4);
  }

  /** The governor's counts, total and `index`'s own. */
  governor(index: number): Required<GovernorCells> {
    const own = HEADER + PER_WORKER * index;
    return { total: this.#all.subarray(0, 2), own: this.#all.subarray(own, own + 2) };
  }

  /** The open connections, total and `index`'s own. */
  connections(index: number): Required<ConnectionCells> {
    const own = HEADER + PER_WORKER * index + 2;
    return { total: this.#all.subarray(2, 3), own: this.#all.subarray(own, own + 1) };
  }

  /** Requests and request bytes in flight on the port. */
  get inFlight(): { requests: number; bytes: number } {
    return { requests: Atomics.load(this.#all, 0), bytes: Atomics.load(this.#all, 1) };
  }

  /** Open connections on the port. */
  get connectionsOpen(): number {
    return Atomics.load(this.#all, 2);
  }
}

/** An answer from the pool to a review a listener Worker handed over. */
export interface PooledAnswer {
  status: number;
  contentType: string;
  body: Uint8Array;
  headRoom?: boolean;
  result?: ReviewResult;
  message?: string;
}

export type ToListener =
  /** First message. */
  | {
    t: "init";
    index: number;
    cells: SharedArrayBuffer;
    /** The main thread's conversion settings (body limit, request budget, nesting limit, …). */
    settings: ContextSettings;
    bounds: GovernorBounds;
    limits: HttpLimits;
    inlineMaxBytes: number;
    /** Sample ratio of the review spans; absent = no tracing. */
    traceSampleRatio?: number;
  }
  /** Plan sets: the ones to start from (committed and installing), the next, the ones to drop. */
  | PlanMessage
  /** The serving pair (checked on the main thread). */
  | { t: "pair"; pair: KeyPairPem }
  /** Bind the port (`SO_REUSEPORT`), given concretely. */
  | { t: "listen"; hostname: string; port: number }
  /** The pool's answer to handed-over review `id`. */
  | { t: "answer"; id: number; answer: PooledAnswer }
  /** Send the metrics recorded so far (`n` is echoed). */
  | { t: "drain"; n: number }
  | { t: "ping"; n: number }
  /** Stop accepting, finish the requests in flight, then say `closed`. */
  | { t: "shutdown" };

export type FromListener =
  | { t: "ack"; version: number }
  | { t: "listening" }
  | { t: "listen-failed"; message: string }
  /** A review for the pool (its body transferred). */
  | {
    t: "offload";
    id: number;
    target: string;
    body: Uint8Array;
    startedAt: number;
    traceparent?: string;
  }
  /** Metrics recorded since the last delta; `n` answers a drain (0: sent unasked). */
  | { t: "metrics"; n: number; delta: MetricsDelta }
  | { t: "pong"; n: number }
  | { t: "closed" };
