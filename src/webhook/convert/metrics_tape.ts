/**
 * The conversion metrics of one request served in a Worker, recorded as plain data and replayed
 * into the main thread's metric set (which the `/metrics` scrape reads) when the answer arrives.
 * The answer table calls the same {@link ConversionMetrics} methods in a Worker as inline.
 */
import type { RejectReason } from "./governor.ts";
import type {
  ConversionMetrics,
  LossyDirection,
  ObjectResult,
  Observer,
  ReviewResult,
} from "../metrics.ts";

/** One recorded call (tuples keep the message small). */
export type MetricOp =
  | ["review", string, string, ReviewResult, number]
  | ["batch", string, number]
  | ["objects", string, string, string, ObjectResult, number]
  | ["lossy", string, LossyDirection, number]
  | ["panic", string]
  | ["rejected", RejectReason]
  | ["durations", string, string, ObjectResult, number[]];

export class MetricsTape implements ConversionMetrics {
  #ops: MetricOp[] = [];

  /** The calls recorded since the last take. */
  take(): MetricOp[] {
    const ops = this.#ops;
    this.#ops = [];
    return ops;
  }

  observeReview(target: string, direction: string, result: ReviewResult, seconds: number): void {
    this.#ops.push(["review", target, direction, result, seconds]);
  }

  observeBatchSize(target: string, objects: number): void {
    this.#ops.push(["batch", target, objects]);
  }

  objectDuration(target: string, direction: string, result: ObjectResult): Observer {
    const values: number[] = [];
    this.#ops.push(["durations", target, direction, result, values]);
    return { observe: (v) => values.push(v) };
  }

  countObjects(target: string, from: string, to: string, result: ObjectResult, n: number): void {
    this.#ops.push(["objects", target, from, to, result, n]);
  }

  countLossy(target: string, direction: LossyDirection, n: number): void {
    this.#ops.push(["lossy", target, direction, n]);
  }

  countPanic(target: string): void {
    this.#ops.push(["panic", target]);
  }

  countRejected(reason: RejectReason): void {
    this.#ops.push(["rejected", reason]);
  }

  /** The in-flight gauges are the listeners' (the shared governor); a pool Worker holds none. */
  setInFlight(): void {}
}

/** Replays recorded calls into the real metric set. */
export function replayMetrics(ops: readonly MetricOp[], m: ConversionMetrics): void {
  for (const op of ops) {
    switch (op[0]) {
      case "review":
        m.observeReview(op[1], op[2], op[3], op[4]);
        break;
      case "batch":
        m.observeBatchSize(op[1], op[2]);
        break;
      case "objects":
        m.countObjects(op[1], op[2], op[3], op[4], op[5]);
        break;
      case "lossy":
        m.countLossy(op[1], op[2], op[3]);
        break;
      case "panic":
        m.countPanic(op[1]);
        break;
      case "rejected":
        m.countRejected(op[1]);
        break;
      case "durations": {
        if (op[4].length === 0) break;
        const series = m.objectDuration(op[1], op[2], op[3]);
        for (const v of op[4]) series.observe(v);
        break;
      }
    }
  }
}
