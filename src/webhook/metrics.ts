/**
 * The webhook-server's own metric set (the catalog in docs/observability.md): exact names, types,
 * labels and buckets, registered into a prom-client `Registry` the role hands in (the same registry also
 * carries the framework and process families, so nothing here is registered twice).
 *
 * Registry gauges are not updated per install: the role calls `refreshRegistryGauges(snapshot)`
 * once at the end of a bulk pass (initial sync) and after single steady-state changes, which
 * also pre-creates `dco_webhook_conversion_panics_total{target}` at 0 so `increase()` sees the
 * first panic. Compile counters follow the registry: `registry.onChange(c => m.observeChange(c))`.
 *
 * The families a review updates (its duration, count, batch size, objects, lossy conversions, and
 * the per-object durations) are {@link SeriesHistogram}s and {@link SeriesCounter}s: series
 * resolved by label values without hashing a label object, where prom-client's `observe(labels,
 * v)` / `inc(labels, n)` cost ~0.5–1 µs each. Their exposition is identical (pinned by tests).
 */
import { Counter, Gauge, type Registry } from "prom-client";
import {
  type CounterDelta,
  type HistogramDelta,
  type Observer,
  SeriesCounter,
  SeriesHistogram,
} from "./metric_series.ts";
import type { RequestBounds } from "./convert/budget.ts";
import type { RejectReason } from "./convert/governor.ts";
import type { PoolStats, WorkerLoss } from "./convert/pool.ts";
import type { ListenerStats } from "./convert/listeners.ts";
import type { RegistryChange, RegistryEntry } from "./registry.ts";

/** Review `result` label values (docs/design/webhook.md#the-convert-answer-table). */
export type ReviewResult =
  | "success"
  | "error"
  | "bad_request"
  | "not_registered"
  | "panic"
  | "too_large"
  | "timeout"
  /** The Worker converting it died or was stopped by the watchdog (answered 500). */
  | "worker_lost";

/** Object `result` label values. */
export type ObjectResult = "success" | "error";

/** `direction` of the lossy counter. */
export type LossyDirection = "hub_to_spoke" | "spoke_to_hub";

/** Bucket bounds written as the exposition prints them (`le="…"`). */
function bounds(text: string): readonly number[] {
  return Object.freeze(text.split(" ").map(Number));
}

export const REVIEW_DURATION_BUCKETS = bounds("0.0001 0.0005 0.001 0.005 0.01 0.05 0.1 0.5 1 5");
export const OBJECT_DURATION_BUCKETS = bounds(
  "0.00001 0.00005 0.0001 0.0005 0.001 0.005 0.01 0.05 0.1 0.5 1",
);
export const BATCH_SIZE_BUCKETS = bounds("1 2 5 10 25 50 100 250 500 1000 5000");

/** The help text of every family of the set. */
const FAMILIES = {
  dco_webhook_conversion_review_duration_seconds: "End-to-end ConversionReview latency.",
  dco_webhook_conversion_review_requests_total: "ConversionReviews handled.",
  dco_webhook_conversion_objects_total: "Objects converted.",
  dco_webhook_conversion_object_duration_seconds:
    "Time to convert one object, excluding request decode.",
  dco_webhook_conversion_batch_size: "Objects per ConversionReview.",
  dco_webhook_conversion_panics_total: "Recovered panics while serving a review (always a bug).",
  dco_webhook_lossy_conversion_total: "Conversions attempted in a statically lossy direction.",
  dco_webhook_conversion_requests_rejected_total:
    "Conversion requests (and connections) refused by a bound, by reason.",
  dco_webhook_conversion_requests_in_flight: "Conversion requests admitted and not yet answered.",
  dco_webhook_conversion_request_bytes_in_flight:
    "Body bytes held by the conversion requests in flight.",
  dco_webhook_conversion_limit: "The conversion port's bounds, derived at startup.",
  dco_webhook_conversion_workers: "Conversion Workers running.",
  dco_webhook_conversion_workers_busy: "Conversion Workers converting a request now.",
  dco_webhook_conversion_queue_length: "Conversion requests waiting for a free Worker.",
  dco_webhook_conversion_worker_restarts_total:
    "Conversion Workers replaced, by reason (error: it died; watchdog: it held a request too long).",
  dco_webhook_conversion_listeners: "Listener Workers serving the conversion port.",
  dco_webhook_conversion_listener_restarts_total:
    "Listener Workers lost, by reason (error: it died and was replaced; watchdog: it stopped answering and the replica restarts).",
  dco_webhook_conversion_plan_set_version:
    "The plan-set version new conversions read; increments on every committed registry swap.",
  dco_webhook_registry_size: "Registry entries, error-only placeholders included.",
  dco_webhook_registry_entry_loaded: "1 = servable plan on this replica, 0 = error-only entry.",
  dco_webhook_registry_last_reload_timestamp_seconds: "Unix time of the last successful compile.",
  dco_webhook_registry_reload_total: "Compile attempts.",
  dco_webhook_registry_compile_errors_total: "Compile failures that left a stale or absent plan.",
  dco_webhook_ready: "1 while ready: the initial sync completed and a usable TLS pair is served.",
  dco_webhook_initial_sync_duration_seconds: "Wall time of the successful initial sync pass.",
  dco_webhook_initial_sync_targets: "Configs processed by the initial sync.",
  dco_webhook_tls_reload_failures_total:
    "TLS certificate load attempts that kept the previous pair (or none).",
  dco_webhook_tls_certificate_expiry_timestamp_seconds:
    "Unix time the served TLS certificate expires; 0 = no certificate loaded.",
} as const;

type FamilyName = keyof typeof FAMILIES;

/** The label names of every family. */
const LABELS = {
  dco_webhook_conversion_review_duration_seconds: ["target", "direction", "result"],
  dco_webhook_conversion_review_requests_total: ["target", "result"],
  dco_webhook_conversion_objects_total: ["target", "from_version", "to_version", "result"],
  dco_webhook_conversion_object_duration_seconds: ["target", "direction", "result"],
  dco_webhook_conversion_batch_size: ["target"],
  dco_webhook_conversion_panics_total: ["target"],
  dco_webhook_lossy_conversion_total: ["target", "direction"],
  dco_webhook_conversion_requests_rejected_total: ["reason"],
  dco_webhook_conversion_requests_in_flight: [],
  dco_webhook_conversion_request_bytes_in_flight: [],
  dco_webhook_conversion_limit: ["limit"],
  dco_webhook_conversion_workers: [],
  dco_webhook_conversion_workers_busy: [],
  dco_webhook_conversion_queue_length: [],
  dco_webhook_conversion_worker_restarts_total: ["reason"],
  dco_webhook_conversion_listeners: [],
  dco_webhook_conversion_listener_restarts_total: ["reason"],
  dco_webhook_conversion_plan_set_version: [],
  dco_webhook_registry_size: [],
  dco_webhook_registry_entry_loaded: ["target"],
  dco_webhook_registry_last_reload_timestamp_seconds: ["target"],
  dco_webhook_registry_reload_total: ["target", "result"],
  dco_webhook_registry_compile_errors_total: ["target", "reason"],
  dco_webhook_ready: [],
  dco_webhook_initial_sync_duration_seconds: [],
  dco_webhook_initial_sync_targets: [],
  dco_webhook_tls_reload_failures_total: [],
  dco_webhook_tls_certificate_expiry_timestamp_seconds: [],
} as const satisfies Record<FamilyName, readonly string[]>;

type LabelOf<N extends FamilyName> = (typeof LABELS)[N][number];

/** Every family this module registers (for "present in one scrape" checks). */
export const WEBHOOK_METRIC_NAMES: readonly string[] = Object.keys(FAMILIES);

export type { Observer } from "./metric_series.ts";
export { SeriesCounter, SeriesHistogram } from "./metric_series.ts";

/** The hot-path side of the metric set, as the conversion handler sees it. */
export interface ConversionMetrics {
  observeReview(target: string, direction: string, result: ReviewResult, seconds: number): void;
  observeBatchSize(target: string, objects: number): void;
  /** The per-object duration series (resolve once per request and direction). */
  objectDuration(target: string, direction: string, result: ObjectResult): Observer;
  countObjects(target: string, from: string, to: string, result: ObjectResult, n: number): void;
  countLossy(target: string, direction: LossyDirection, n: number): void;
  countPanic(target: string): void;
  /** A request or connection refused by a bound. */
  countRejected(reason: RejectReason): void;
  /** The governor's current holdings. */
  setInFlight(requests: number, bytes: number): void;
}

/** Every `reason` of the rejection counter, pre-created at 0. */
export const REJECT_REASONS: readonly RejectReason[] = [
  "in_flight",
  "bytes_in_flight",
  "body_too_large",
  "connections",
];

/** Every `reason` of the Worker restart counter, pre-created at 0. */
export const WORKER_LOSSES: readonly WorkerLoss[] = ["error", "watchdog"];

const NO_POOL: PoolStats = Object.freeze({ workers: 0, busy: 0, queued: 0, planSetVersion: 0 });
const NO_HOLDINGS = Object.freeze({ requests: 0, bytes: 0 });
const NO_LISTENERS: ListenerStats = Object.freeze({ listeners: 0, listening: 0 });

/** The families a review updates, resolved by label values. */
export interface ReviewFamilies {
  reviewDuration: SeriesHistogram;
  reviewRequests: SeriesCounter;
  objects: SeriesCounter;
  objectDurations: SeriesHistogram;
  batchSize: SeriesHistogram;
  lossy: SeriesCounter;
}

/** The review families of a set not exposed anywhere (a listener Worker's ledger). */
export function unregisteredReviewFamilies(): ReviewFamilies {
  return FamilyFactory.reviewFamilies(undefined);
}

/** What a ledger recorded since it was last drained: plain data, one list per family. */
export interface MetricsDelta {
  reviewDuration: HistogramDelta[];
  reviewRequests: CounterDelta[];
  objects: CounterDelta[];
  objectDurations: HistogramDelta[];
  batchSize: HistogramDelta[];
  lossy: CounterDelta[];
  /** `[target]` */
  panics: CounterDelta[];
  /** `[reason]` */
  rejected: CounterDelta[];
}

/** Creates the families of {@link FAMILIES} in one registry. */
class FamilyFactory {
  constructor(private readonly registry: Registry) {}

  /** The review families, registered here (a metric set) or nowhere (a Worker's ledger). */
  static reviewFamilies(registry: Registry | undefined): ReviewFamilies {
    const histogram = (name: FamilyName, buckets: readonly number[]) =>
      new SeriesHistogram(registry, {
        name,
        help: FAMILIES[name],
        labelNames: LABELS[name],
        buckets,
      });
    const counter = (name: FamilyName) =>
      new SeriesCounter(registry, { name, help: FAMILIES[name], labelNames: LABELS[name] });
    return {
      reviewDuration: histogram(
        "dco_webhook_conversion_review_duration_seconds",
        REVIEW_DURATION_BUCKETS,
      ),
      reviewRequests: counter("dco_webhook_conversion_review_requests_total"),
      objects: counter("dco_webhook_conversion_objects_total"),
      objectDurations: histogram(
        "dco_webhook_conversion_object_duration_seconds",
        OBJECT_DURATION_BUCKETS,
      ),
      batchSize: histogram("dco_webhook_conversion_batch_size", BATCH_SIZE_BUCKETS),
      lossy: counter("dco_webhook_lossy_conversion_total"),
    };
  }

  #spec<N extends FamilyName>(name: N) {
    return {
      name,
      help: FAMILIES[name],
      labelNames: [...LABELS[name]] as LabelOf<N>[],
      registers: [this.registry],
    };
  }

  counter<N extends FamilyName>(name: N): Counter<LabelOf<N>> {
    return new Counter(this.#spec(name));
  }

  gauge<N extends FamilyName>(name: N): Gauge<LabelOf<N>> {
    return new Gauge(this.#spec(name));
  }

  /** A gauge whose value is read at scrape time. */
  sampled<N extends FamilyName>(name: N, read: () => number): Gauge<LabelOf<N>> {
    return new Gauge({
      ...this.#spec(name),
      collect() {
        this.set(read());
      },
    });
  }
}

export class WebhookMetrics implements ConversionMetrics {
  readonly reviewDuration: SeriesHistogram;
  readonly reviewRequests: SeriesCounter;
  readonly objects: SeriesCounter;
  readonly objectDurations: SeriesHistogram;
  readonly batchSize: SeriesHistogram;
  readonly panics: Counter<"target">;
  readonly lossy: SeriesCounter;
  readonly rejected: Counter<"reason">;
  readonly requestsInFlight: Gauge;
  readonly bytesInFlight: Gauge;
  readonly limits: Gauge<"limit">;
  readonly registrySize: Gauge;
  readonly entryLoaded: Gauge<"target">;
  readonly lastReload: Gauge<"target">;
  readonly reloads: Counter<"target" | "result">;
  readonly compileErrors: Counter<"target" | "reason">;
  readonly ready: Gauge;
  readonly initialSyncDuration: Gauge;
  readonly initialSyncTargets: Gauge;
  readonly tlsReloadFailures: Counter;
  readonly tlsCertificateExpiry: Gauge;
  readonly workerRestarts: Counter<"reason">;
  readonly listenerRestarts: Counter<"reason">;
  #pool: () => PoolStats = () => NO_POOL;
  #inFlight: () => { requests: number; bytes: number } = () => NO_HOLDINGS;
  #listeners: () => ListenerStats = () => NO_LISTENERS;

  constructor(registry: Registry) {
    const f = new FamilyFactory(registry);
    const review = FamilyFactory.reviewFamilies(registry);
    this.reviewDuration = review.reviewDuration;
    this.reviewRequests = review.reviewRequests;
    this.objects = review.objects;
    this.objectDurations = review.objectDurations;
    this.batchSize = review.batchSize;
    this.panics = f.counter("dco_webhook_conversion_panics_total");
    this.lossy = review.lossy;
    this.rejected = f.counter("dco_webhook_conversion_requests_rejected_total");
    for (const reason of REJECT_REASONS) this.rejected.inc({ reason }, 0);
    this.requestsInFlight = f.sampled(
      "dco_webhook_conversion_requests_in_flight",
      () => this.#inFlight().requests,
    );
    this.bytesInFlight = f.sampled(
      "dco_webhook_conversion_request_bytes_in_flight",
      () => this.#inFlight().bytes,
    );
    this.limits = f.gauge("dco_webhook_conversion_limit");
    this.registrySize = f.gauge("dco_webhook_registry_size");
    this.entryLoaded = f.gauge("dco_webhook_registry_entry_loaded");
    this.lastReload = f.gauge("dco_webhook_registry_last_reload_timestamp_seconds");
    this.reloads = f.counter("dco_webhook_registry_reload_total");
    this.compileErrors = f.counter("dco_webhook_registry_compile_errors_total");
    this.ready = f.gauge("dco_webhook_ready");
    this.initialSyncDuration = f.gauge("dco_webhook_initial_sync_duration_seconds");
    this.initialSyncTargets = f.gauge("dco_webhook_initial_sync_targets");
    this.tlsReloadFailures = f.counter("dco_webhook_tls_reload_failures_total");
    this.tlsCertificateExpiry = f.gauge("dco_webhook_tls_certificate_expiry_timestamp_seconds");
    this.tlsCertificateExpiry.set(0);
    f.sampled("dco_webhook_conversion_workers", () => this.#pool().workers);
    f.sampled("dco_webhook_conversion_workers_busy", () => this.#pool().busy);
    f.sampled("dco_webhook_conversion_queue_length", () => this.#pool().queued);
    f.sampled("dco_webhook_conversion_plan_set_version", () => this.#pool().planSetVersion);
    this.workerRestarts = f.counter("dco_webhook_conversion_worker_restarts_total");
    for (const reason of WORKER_LOSSES) this.workerRestarts.inc({ reason }, 0);
    f.sampled("dco_webhook_conversion_listeners", () => this.#listeners().listeners);
    this.listenerRestarts = f.counter("dco_webhook_conversion_listener_restarts_total");
    for (const reason of WORKER_LOSSES) this.listenerRestarts.inc({ reason }, 0);
    this.ready.set(0);
    this.registrySize.set(0);
  }

  // --- hot path ---------------------------------------------------------------------------------

  observeReview(target: string, direction: string, result: ReviewResult, seconds: number): void {
    this.reviewDuration.series([target, direction, result]).observe(seconds);
    this.reviewRequests.series([target, result]).inc();
  }

  observeBatchSize(target: string, objects: number): void {
    this.batchSize.series([target]).observe(objects);
  }

  objectDuration(target: string, direction: string, result: ObjectResult): Observer {
    return this.objectDurations.series([target, direction, result]);
  }

  countObjects(target: string, from: string, to: string, result: ObjectResult, n: number): void {
    this.objects.series([target, from, to, result]).inc(n);
  }

  countLossy(target: string, direction: LossyDirection, n: number): void {
    this.lossy.series([target, direction]).inc(n);
  }

  countPanic(target: string): void {
    this.panics.inc({ target });
  }

  countRejected(reason: RejectReason): void {
    this.rejected.inc({ reason });
  }

  setInFlight(requests: number, bytes: number): void {
    const held = { requests, bytes };
    this.#inFlight = () => held;
  }

  /** The in-flight gauges read `read` at every scrape (a governor shared by several threads). */
  observeInFlight(read: () => { requests: number; bytes: number }): void {
    this.#inFlight = read;
  }

  /** Adds what a listener Worker's ledger recorded (src/webhook/convert/metrics_ledger.ts). */
  merge(d: MetricsDelta): void {
    for (const x of d.reviewDuration) this.reviewDuration.merge(x);
    for (const x of d.reviewRequests) this.reviewRequests.merge(x);
    for (const x of d.objects) this.objects.merge(x);
    for (const x of d.objectDurations) this.objectDurations.merge(x);
    for (const x of d.batchSize) this.batchSize.merge(x);
    for (const x of d.lossy) this.lossy.merge(x);
    for (const x of d.panics) this.panics.inc({ target: x.values[0] }, x.value);
    for (const x of d.rejected) this.rejected.inc({ reason: x.values[0] as RejectReason }, x.value);
  }

  /** Written once at startup: the bounds the conversion listener runs with. */
  setLimits(b: RequestBounds): void {
    this.limits.set({ limit: "heap_bytes" }, b.heapLimitBytes);
    this.limits.set({ limit: "heap_used_bytes" }, b.heapUsedBytes);
    this.limits.set({ limit: "requests_in_flight" }, b.maxRequestsInFlight);
    this.limits.set({ limit: "request_bytes_in_flight" }, b.maxRequestBytesInFlight);
    this.limits.set({ limit: "request_bytes" }, b.maxRequestBytes);
    this.limits.set({ limit: "connections" }, b.maxConnections);
  }

  // --- the conversion Worker pool ---------------------------------------------------------------

  /** The pool gauges read `stats` at every scrape. */
  observePool(stats: () => PoolStats): void {
    this.#pool = stats;
  }

  /** A conversion Worker was replaced (wire it as the pool's `onWorkerLost`). */
  countWorkerLost(reason: WorkerLoss): void {
    this.workerRestarts.inc({ reason });
  }

  // --- the listener Workers ---------------------------------------------------------------------

  /** The listener gauge reads `stats` at every scrape. */
  observeListeners(stats: () => ListenerStats): void {
    this.#listeners = stats;
  }

  /** A listener Worker was replaced (wire it as the listeners' `onWorkerLost`). */
  countListenerLost(reason: WorkerLoss): void {
    this.listenerRestarts.inc({ reason });
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

  /** One TLS load attempt (wire it as the conversion listener's `onState`). */
  observeTls(state: { notAfter: Date | null }, result: string): void {
    if (result === "failed") this.tlsReloadFailures.inc();
    this.tlsCertificateExpiry.set(state.notAfter === null ? 0 : state.notAfter.getTime() / 1000);
  }

  /** Written once, immediately before the replica reports ready. */
  setInitialSync(seconds: number, targets: number): void {
    this.initialSyncDuration.set(seconds);
    this.initialSyncTargets.set(targets);
  }
}
