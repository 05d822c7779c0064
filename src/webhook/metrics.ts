/**
 * The webhook-server's own metric set (the catalog in docs/observability.md): exact names, types,
 * labels and
 * buckets, registered into a prom-client `Registry` the role hands in (the same registry also
 * carries the framework and process families, so nothing here is registered twice).
 *
 * Registry gauges are not updated per install: the role calls `refreshRegistryGauges(snapshot)`
 * once at the end of a bulk pass (initial sync) and after single steady-state changes, which
 * also pre-creates `dco_webhook_conversion_panics_total{target}` at 0 so `increase()` sees the
 * first panic. Compile counters follow the registry: `registry.onChange(c => m.observeChange(c))`.
 *
 * `dco_webhook_conversion_object_duration_seconds` is observed once per object, so it is a
 * {@link SeriesHistogram} (series resolved once per request) rather than a prom-client Histogram,
 * whose `observe(labels, v)` costs ~0.5 µs — about 10 % of the parse+stringify floor of a 2 KB
 * object. Its exposition is identical (pinned by a test).
 */
import { Counter, Gauge, Histogram, type Metric, type Registry } from "prom-client";
import type { RegistryChange, RegistryEntry } from "./registry.ts";

/** Review `result` label values (docs/design/webhook.md#the-convert-answer-table). */
export type ReviewResult =
  | "success"
  | "error"
  | "bad_request"
  | "not_registered"
  | "panic"
  | "too_large"
  | "timeout";

/** Object `result` label values. */
export type ObjectResult = "success" | "error";

/** `direction` of the lossy counter. */
export type LossyDirection = "hub_to_spoke" | "spoke_to_hub";

export const REVIEW_DURATION_BUCKETS: readonly number[] = [
  0.0001,
  0.0005,
  0.001,
  0.005,
  0.01,
  0.05,
  0.1,
  0.5,
  1,
  5,
];
export const OBJECT_DURATION_BUCKETS: readonly number[] = [
  0.00001,
  0.00005,
  0.0001,
  0.0005,
  0.001,
  0.005,
  0.01,
  0.05,
  0.1,
  0.5,
  1,
];
export const BATCH_SIZE_BUCKETS: readonly number[] = [
  1,
  2,
  5,
  10,
  25,
  50,
  100,
  250,
  500,
  1000,
  5000,
];

/** Every family this module registers (for "present in one scrape" checks). */
export const WEBHOOK_METRIC_NAMES: readonly string[] = [
  "dco_webhook_conversion_review_duration_seconds",
  "dco_webhook_conversion_review_requests_total",
  "dco_webhook_conversion_objects_total",
  "dco_webhook_conversion_object_duration_seconds",
  "dco_webhook_conversion_batch_size",
  "dco_webhook_conversion_panics_total",
  "dco_webhook_lossy_conversion_total",
  "dco_webhook_registry_size",
  "dco_webhook_registry_entry_loaded",
  "dco_webhook_registry_last_reload_timestamp_seconds",
  "dco_webhook_registry_reload_total",
  "dco_webhook_registry_compile_errors_total",
  "dco_webhook_ready",
  "dco_webhook_initial_sync_duration_seconds",
  "dco_webhook_initial_sync_targets",
];

/** One histogram series, resolved once and observed many times. */
export interface Observer {
  observe(value: number): void;
}

/** The hot-path side of the metric set, as the conversion handler sees it. */
export interface ConversionMetrics {
  observeReview(target: string, direction: string, result: ReviewResult, seconds: number): void;
  observeBatchSize(target: string, objects: number): void;
  /** The per-object duration series (resolve once per request and direction). */
  objectDuration(target: string, direction: string, result: ObjectResult): Observer;
  countObjects(target: string, from: string, to: string, result: ObjectResult, n: number): void;
  countLossy(target: string, direction: LossyDirection, n: number): void;
  countPanic(target: string): void;
}

export class WebhookMetrics implements ConversionMetrics {
  readonly reviewDuration: Histogram<"target" | "direction" | "result">;
  readonly reviewRequests: Counter<"target" | "result">;
  readonly objects: Counter<"target" | "from_version" | "to_version" | "result">;
  readonly objectDurations: SeriesHistogram;
  readonly batchSize: Histogram<"target">;
  readonly panics: Counter<"target">;
  readonly lossy: Counter<"target" | "direction">;
  readonly registrySize: Gauge;
  readonly entryLoaded: Gauge<"target">;
  readonly lastReload: Gauge<"target">;
  readonly reloads: Counter<"target" | "result">;
  readonly compileErrors: Counter<"target" | "reason">;
  readonly ready: Gauge;
  readonly initialSyncDuration: Gauge;
  readonly initialSyncTargets: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.reviewDuration = new Histogram({
      name: "dco_webhook_conversion_review_duration_seconds",
      help: "End-to-end ConversionReview latency.",
      labelNames: ["target", "direction", "result"],
      buckets: [...REVIEW_DURATION_BUCKETS],
      registers,
    });
    this.reviewRequests = new Counter({
      name: "dco_webhook_conversion_review_requests_total",
      help: "ConversionReviews handled.",
      labelNames: ["target", "result"],
      registers,
    });
    this.objects = new Counter({
      name: "dco_webhook_conversion_objects_total",
      help: "Objects converted.",
      labelNames: ["target", "from_version", "to_version", "result"],
      registers,
    });
    this.objectDurations = new SeriesHistogram(registry, {
      name: "dco_webhook_conversion_object_duration_seconds",
      help: "Time to convert one object, excluding request decode.",
      labelNames: ["target", "direction", "result"],
      buckets: OBJECT_DURATION_BUCKETS,
    });
    this.batchSize = new Histogram({
      name: "dco_webhook_conversion_batch_size",
      help: "Objects per ConversionReview.",
      labelNames: ["target"],
      buckets: [...BATCH_SIZE_BUCKETS],
      registers,
    });
    this.panics = new Counter({
      name: "dco_webhook_conversion_panics_total",
      help: "Recovered panics while serving a review (always a bug).",
      labelNames: ["target"],
      registers,
    });
    this.lossy = new Counter({
      name: "dco_webhook_lossy_conversion_total",
      help: "Conversions attempted in a statically lossy direction.",
      labelNames: ["target", "direction"],
      registers,
    });
    this.registrySize = new Gauge({
      name: "dco_webhook_registry_size",
      help: "Registry entries, error-only placeholders included.",
      registers,
    });
    this.entryLoaded = new Gauge({
      name: "dco_webhook_registry_entry_loaded",
      help: "1 = servable plan on this replica, 0 = error-only entry.",
      labelNames: ["target"],
      registers,
    });
    this.lastReload = new Gauge({
      name: "dco_webhook_registry_last_reload_timestamp_seconds",
      help: "Unix time of the last successful compile.",
      labelNames: ["target"],
      registers,
    });
    this.reloads = new Counter({
      name: "dco_webhook_registry_reload_total",
      help: "Compile attempts.",
      labelNames: ["target", "result"],
      registers,
    });
    this.compileErrors = new Counter({
      name: "dco_webhook_registry_compile_errors_total",
      help: "Compile failures that left a stale or absent plan.",
      labelNames: ["target", "reason"],
      registers,
    });
    this.ready = new Gauge({
      name: "dco_webhook_ready",
      help: "1 after the initial sync completed.",
      registers,
    });
    this.initialSyncDuration = new Gauge({
      name: "dco_webhook_initial_sync_duration_seconds",
      help: "Wall time of the successful initial sync pass.",
      registers,
    });
    this.initialSyncTargets = new Gauge({
      name: "dco_webhook_initial_sync_targets",
      help: "Configs processed by the initial sync.",
      registers,
    });
    this.ready.set(0);
    this.registrySize.set(0);
  }

  // --- hot path ---------------------------------------------------------------------------------

  observeReview(target: string, direction: string, result: ReviewResult, seconds: number): void {
    this.reviewDuration.observe({ target, direction, result }, seconds);
    this.reviewRequests.inc({ target, result });
  }

  observeBatchSize(target: string, objects: number): void {
    this.batchSize.observe({ target }, objects);
  }

  objectDuration(target: string, direction: string, result: ObjectResult): Observer {
    return this.objectDurations.series([target, direction, result]);
  }

  countObjects(target: string, from: string, to: string, result: ObjectResult, n: number): void {
    this.objects.inc({ target, from_version: from, to_version: to, result }, n);
  }

  countLossy(target: string, direction: LossyDirection, n: number): void {
    this.lossy.inc({ target, direction }, n);
  }

  countPanic(target: string): void {
    this.panics.inc({ target });
  }

  // --- registry ---------------------------------------------------------------------------------

  /** Counts one registry write (wire it with `registry.onChange`). */
  observeChange(change: RegistryChange): void {
    if (change.type !== "install") return;
    const { target, outcome } = change;
    if (outcome.ok) {
      this.reloads.inc({ target, result: "success" });
    } else {
      this.reloads.inc({ target, result: "error" });
      this.compileErrors.inc({ target, reason: outcome.reason });
    }
  }

  /**
   * Rewrites the registry gauges from a snapshot: removed targets drop out of the per-target
   * gauges; the panics counter is pre-created at 0 for every target and never reset.
   */
  refreshRegistryGauges(snapshot: readonly RegistryEntry[]): void {
    this.registrySize.set(snapshot.length);
    this.entryLoaded.reset();
    this.lastReload.reset();
    for (const e of snapshot) {
      this.entryLoaded.set({ target: e.target }, e.router === null ? 0 : 1);
      if (e.compiledAt !== null) {
        this.lastReload.set({ target: e.target }, e.compiledAt.getTime() / 1000);
      }
      this.panics.inc({ target: e.target }, 0);
    }
  }

  setReady(ready: boolean): void {
    this.ready.set(ready ? 1 : 0);
  }

  /** Written once, immediately before the replica reports ready. */
  setInitialSync(seconds: number, targets: number): void {
    this.initialSyncDuration.set(seconds);
    this.initialSyncTargets.set(targets);
  }
}

// --- a histogram cheap enough for one observation per object --------------------------------------

interface SeriesHistogramOptions {
  name: string;
  help: string;
  labelNames: readonly string[];
  buckets: readonly number[];
}

class Series implements Observer {
  /** Non-cumulative counts; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

interface ExportedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * A histogram whose series are resolved once and then observed for ~10 ns. prom-client's
 * `observe(labels, v)` validates and hashes the labels on every call (~0.5 µs, 10 % of the
 * parse+stringify floor per 2 KB object). It registers into the prom-client `Registry` as a
 * metric (`name` + `get()`), so the exposition is identical to a prom-client Histogram's.
 */
export class SeriesHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly #labelNames: readonly string[];
  readonly #bounds: readonly number[];
  #series = new Map<string, Series>();

  constructor(registry: Registry, opts: SeriesHistogramOptions) {
    this.name = opts.name;
    this.help = opts.help;
    this.#labelNames = [...opts.labelNames];
    this.#bounds = [...opts.buckets].sort((a, b) => a - b);
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series for these label values (in `labelNames` order), created on first use. */
  series(values: readonly string[]): Observer {
    const key = values.join("\u0000");
    let s = this.#series.get(key);
    if (s === undefined) {
      const labels: Record<string, string> = {};
      this.#labelNames.forEach((name, i) => labels[name] = values[i] ?? "");
      s = new Series(labels, this.#bounds);
      this.#series.set(key, s);
    }
    return s;
  }

  reset(): void {
    this.#series = new Map();
  }

  /** prom-client's metric protocol (called by `Registry.metrics()` / `getMetricsAsJSON()`). */
  get(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: ExportedValue[];
  }> {
    const values: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.#series.values()) {
      let acc = 0;
      this.#bounds.forEach((le, i) => {
        acc += s.counts[i];
        values.push({ labels: { ...s.labels, le }, value: acc, metricName: bucket });
      });
      values.push({ labels: { ...s.labels, le: "+Inf" }, value: s.count, metricName: bucket });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    });
  }
}
