/**
 * The messages between the conversion pool (main thread, src/webhook/convert/pool.ts) and a
 * conversion Worker (src/webhook/convert/convert_worker.ts). Request and answer bodies travel as
 * transferred `ArrayBuffer`s (moved, never copied); plan sets as plan data
 * (src/webhook/convert/plan_sets.ts).
 */
import type { ReviewResult } from "../metrics.ts";
import type { ConvertContext } from "./context.ts";
import type { MetricOp } from "./metrics_tape.ts";
import type { PlanMessage } from "./plan_replica.ts";

/**
 * The main thread's conversion settings a Worker copies: every number, string and boolean of its
 * `ConvertContext` (body limit, request budget, nesting limit, …), so a setting added to the
 * context crosses without a change here.
 */
export type ContextSettings = Record<string, number | string | boolean>;

/** The settings of a context: its own number, string and boolean fields. */
export function contextSettings(ctx: ConvertContext): ContextSettings {
  const out: ContextSettings = {};
  for (const [k, v] of Object.entries(ctx)) {
    if (typeof v === "number" || typeof v === "string" || typeof v === "boolean") out[k] = v;
  }
  return out;
}

export type ToWorker =
  /** First message: the settings, and whether to record metrics. */
  | { t: "init"; settings: ContextSettings; metrics: boolean }
  /** Plan sets: a starting Worker's (committed and installing), the next, the ones to drop. */
  | PlanMessage
  | {
    t: "convert";
    id: number;
    /** The plan-set version this request reads. */
    version: number;
    target: string;
    body: Uint8Array;
    /** Arrival, as `performance.timeOrigin + performance.now()` of the main thread. */
    startedAt: number;
    /** A traced request's review span; its `Convert` spans are children of it. */
    traceparent?: string;
  };

export type FromWorker =
  /** Every version up to `version` is installed (after a reset or an install). */
  | { t: "ack"; version: number }
  | {
    t: "answer";
    id: number;
    status: number;
    contentType: string;
    body: Uint8Array;
    /** `body` keeps the head room it was encoded with (its buffer transferred whole). */
    headRoom?: boolean;
    metrics: MetricOp[];
    /** The review's metric `result` and a failure's message (for the review span). */
    result?: ReviewResult;
    message?: string;
  };

/** Whether `u` spans its whole `ArrayBuffer`, so transferring the buffer moves exactly `u`. */
export function ownsBuffer(u: Uint8Array): u is Uint8Array<ArrayBuffer> {
  return u.buffer instanceof ArrayBuffer && u.byteOffset === 0 &&
    u.byteLength === u.buffer.byteLength;
}

/**
 * `u` in a buffer of its own, ready to transfer: itself when it owns its buffer, else a copy (a
 * view into a pooled or larger buffer must not be detached).
 */
export function transferable(u: Uint8Array): Uint8Array<ArrayBuffer> {
  return ownsBuffer(u) ? u : new Uint8Array(u);
}

/**
 * An answer body ready to transfer with its head room: itself when its buffer holds only the room
 * and the body (the room travels with it), else a copy without room.
 */
export function transferableAnswer(
  u: Uint8Array,
  headRoom: boolean | undefined,
): { body: Uint8Array<ArrayBuffer>; headRoom: boolean } {
  if (
    headRoom === true && u.buffer instanceof ArrayBuffer &&
    u.byteOffset + u.byteLength === u.buffer.byteLength
  ) {
    return { body: u as Uint8Array<ArrayBuffer>, headRoom: true };
  }
  return { body: transferable(u), headRoom: false };
}

/** A Worker that dies within this long of its start is replaced only after the same delay. */
export const RESPAWN_BACKOFF_MS = 1_000;

/**
 * Wires a Worker's messages and its failures — an uncaught error (the default report is
 * suppressed: the owner logs and counts it) or a message it cannot read — as
 * `<kind> worker failed: <cause>`.
 */
export function superviseWorker<M>(
  worker: Worker,
  kind: string,
  onMessage: (m: M) => void,
  onFailure: (message: string) => void,
): void {
  worker.onmessage = (e: MessageEvent<M>) => onMessage(e.data);
  worker.onerror = (e: ErrorEvent) => {
    e.preventDefault();
    onFailure(`${kind} worker failed: ${e.message || "unknown error"}`);
  };
  worker.onmessageerror = () => onFailure(`${kind} worker failed: a message could not be read`);
}

/** Runs `replace` now, or after {@link RESPAWN_BACKOFF_MS} when the lost Worker was young. */
export function replaceSoon(spawnedAt: number, replace: () => void): void {
  if (performance.now() - spawnedAt < RESPAWN_BACKOFF_MS) setTimeout(replace, RESPAWN_BACKOFF_MS);
  else replace();
}
