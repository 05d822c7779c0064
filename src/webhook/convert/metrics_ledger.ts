/**
 * A listener Worker's conversion metrics: recorded as the main thread's metric set records them
 * (series resolved by label values, nothing allocated per review on a known series), summed here,
 * and drained as one plain delta when the main thread asks — before every `/metrics` scrape and
 * once a second — to be merged into the set the scrape reads (`WebhookMetrics.merge`). Nothing
 * crosses threads per review.
 */
import {
  type ConversionMetrics,
  type LossyDirection,
  type MetricsDelta,
  type ObjectResult,
  type Observer,
  type ReviewFamilies,
  type ReviewResult,
  SeriesCounter,
  unregisteredReviewFamilies,
} from "../metrics.ts";
import type { RejectReason } from "./governor.ts";

export class MetricsLedger implements ConversionMetrics {
  readonly #f: ReviewFamilies = unregisteredReviewFamilies();
  readonly #panics = new SeriesCounter(undefined, {
    name: "panics",
    help: "",
    labelNames: ["target"],
  });
  readonly #rejected = new SeriesCounter(undefined, {
    name: "rejected",
    help: "",
    labelNames: ["reason"],
  });
  #recorded = false;

  /** Whether anything was recorded since the last drain. */
  get recorded(): boolean {
    return this.#recorded;
  }

  /** Everything recorded since the last drain; the ledger is empty after. */
  drain(): MetricsDelta {
    const f = this.#f;
    this.#recorded = false;
    return {
      reviewDuration: f.reviewDuration.drain(),
      reviewRequests: f.reviewRequests.drain(),
      objects: f.objects.drain(),
      objectDurations: f.objectDurations.drain(),
      batchSize: f.batchSize.drain(),
      lossy: f.lossy.drain(),
      panics: this.#panics.drain(),
      rejected: this.#rejected.drain(),
    };
  }

  observeReview(target: string, direction: string, result: ReviewResult, seconds: number): void {
    this.#recorded = true;
    this.#f.reviewDuration.series([target, direction, result]).observe(seconds);
    this.#f.reviewRequests.series([target, result]).inc();
  }

  observeBatchSize(target: string, objects: number): void {
    this.#recorded = true;
    this.#f.batchSize.series([target]).observe(objects);
  }

  objectDuration(target: string, direction: string, result: ObjectResult): Observer {
    this.#recorded = true;
    return this.#f.objectDurations.series([target, direction, result]);
  }

  countObjects(target: string, from: string, to: string, result: ObjectResult, n: number): void {
    this.#recorded = true;
    this.#f.objects.series([target, from, to, result]).inc(n);
  }

  countLossy(target: string, direction: LossyDirection, n: number): void {
    this.#recorded = true;
    this.#f.lossy.series([target, direction]).inc(n);
  }

  countPanic(target: string): void {
    this.#recorded = true;
    this.#panics.series([target]).inc();
  }

  countRejected(reason: RejectReason): void {
    this.#recorded = true;
    this.#rejected.series([reason]).inc();
  }

  /** The in-flight gauges read the shared governor on the main thread. */
  setInFlight(): void {}
}
