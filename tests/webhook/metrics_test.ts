/**
 * The webhook metric set (docs/observability.md): names, types, labels and buckets; registry gauges
 * refreshed from a snapshot; compile counters from registry changes; the hot path's resolved-series
 * histogram and counter expose exactly what a prom-client Histogram and Counter would.
 */
import assert from "node:assert/strict";
import { Counter, Histogram, Registry } from "prom-client";
import { createMetricsRegistry } from "../../src/obs/metrics.ts";
import { syntheticCompiled } from "../../src/webhook/convert/_synthetic.ts";
import {
  type ConversionMetrics,
  OBJECT_DURATION_BUCKETS,
  SeriesCounter,
  SeriesHistogram,
  WEBHOOK_METRIC_NAMES,
  WebhookMetrics,
} from "../../src/webhook/metrics.ts";
import { PlanRegistry } from "../../src/webhook/registry.ts";
import { MetricsLedger } from "../../src/webhook/convert/metrics_ledger.ts";
import { sampleValue } from "./_helpers.ts";

const T = "widgets.bench.example.com";

/** `# TYPE` lines of an exposition: name → type. */
function families(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    out.set(m[1], [...(out.get(m[1]) ?? []), m[2]]);
  }
  return out;
}

Deno.test("every family has the catalog's name and type", async () => {
  const registry = new Registry();
  new WebhookMetrics(registry);
  const types = families(await registry.metrics());
  const expected: Record<string, string> = {
    dco_webhook_conversion_review_duration_seconds: "histogram",
    dco_webhook_conversion_review_requests_total: "counter",
    dco_webhook_conversion_objects_total: "counter",
    dco_webhook_conversion_object_duration_seconds: "histogram",
    dco_webhook_conversion_batch_size: "histogram",
    dco_webhook_conversion_panics_total: "counter",
    dco_webhook_lossy_conversion_total: "counter",
    dco_webhook_conversion_requests_rejected_total: "counter",
    dco_webhook_conversion_requests_in_flight: "gauge",
    dco_webhook_conversion_request_bytes_in_flight: "gauge",
    dco_webhook_conversion_limit: "gauge",
    dco_webhook_conversion_workers: "gauge",
    dco_webhook_conversion_workers_busy: "gauge",
    dco_webhook_conversion_queue_length: "gauge",
    dco_webhook_conversion_worker_restarts_total: "counter",
    dco_webhook_conversion_listeners: "gauge",
    dco_webhook_conversion_listener_restarts_total: "counter",
    dco_webhook_conversion_plan_set_version: "gauge",
    dco_webhook_registry_size: "gauge",
    dco_webhook_registry_entry_loaded: "gauge",
    dco_webhook_registry_last_reload_timestamp_seconds: "gauge",
    dco_webhook_registry_reload_total: "counter",
    dco_webhook_registry_compile_errors_total: "counter",
    dco_webhook_ready: "gauge",
    dco_webhook_initial_sync_duration_seconds: "gauge",
    dco_webhook_initial_sync_targets: "gauge",
    dco_webhook_tls_reload_failures_total: "counter",
    dco_webhook_tls_certificate_expiry_timestamp_seconds: "gauge",
  };
  assert.deepEqual([...WEBHOOK_METRIC_NAMES].sort(), Object.keys(expected).sort());
  for (const [name, type] of Object.entries(expected)) {
    assert.deepEqual(types.get(name), [type], name);
  }
});

Deno.test("labels and buckets follow the catalog", async () => {
  const registry = new Registry();
  const m = new WebhookMetrics(registry);
  m.observeReview(T, "v1->v2", "success", 0.002);
  m.observeBatchSize(T, 3);
  m.objectDuration(T, "v1->v2", "success").observe(0.00002);
  m.countObjects(T, "v1", "v2", "success", 3);
  m.countLossy(T, "spoke_to_hub", 2);
  m.countPanic(T);
  const text = await registry.metrics();
  const les = (name: string) =>
    [...text.matchAll(new RegExp(`^${name}_bucket\\{[^}]*le="([^"]+)"`, "gm"))].map((x) => x[1]);
  // The buckets the dashboards and alerts were written against, verbatim.
  assert.deepEqual(les("dco_webhook_conversion_review_duration_seconds"), [
    ..."0.0001 0.0005 0.001 0.005 0.01 0.05 0.1 0.5 1 5".split(" "),
    "+Inf",
  ]);
  assert.deepEqual(les("dco_webhook_conversion_object_duration_seconds"), [
    ..."0.00001 0.00005 0.0001 0.0005 0.001 0.005 0.01 0.05 0.1 0.5 1".split(" "),
    "+Inf",
  ]);
  assert.deepEqual(les("dco_webhook_conversion_batch_size"), [
    ..."1 2 5 10 25 50 100 250 500 1000 5000".split(" "),
    "+Inf",
  ]);
  const one = (name: string, labels: Record<string, string>) => sampleValue(text, name, labels);
  assert.equal(
    one("dco_webhook_conversion_review_duration_seconds_count", {
      target: T,
      direction: "v1->v2",
      result: "success",
    }),
    1,
  );
  assert.equal(
    one("dco_webhook_conversion_review_requests_total", { target: T, result: "success" }),
    1,
  );
  assert.equal(
    one("dco_webhook_conversion_objects_total", {
      target: T,
      from_version: "v1",
      to_version: "v2",
      result: "success",
    }),
    3,
  );
  assert.equal(
    one("dco_webhook_conversion_object_duration_seconds_bucket", {
      target: T,
      direction: "v1->v2",
      result: "success",
      le: "0.00005",
    }),
    1,
  );
  assert.equal(
    one("dco_webhook_conversion_object_duration_seconds_bucket", {
      target: T,
      direction: "v1->v2",
      result: "success",
      le: "0.00001",
    }),
    0,
  );
  assert.equal(
    one("dco_webhook_lossy_conversion_total", { target: T, direction: "spoke_to_hub" }),
    2,
  );
  assert.equal(one("dco_webhook_conversion_panics_total", { target: T }), 1);
});

/** Exposition text with each line's labels sorted and the lines sorted: order-free comparison. */
function normalized(text: string): string[] {
  return text.split("\n").map((line) =>
    line.replace(/\{(.*)\}/, (_, inner: string) => `{${inner.split(",").sort().join(",")}}`)
  ).sort();
}

Deno.test("the fast histogram exposes what a prom-client Histogram would", async () => {
  const fast = new Registry();
  const slow = new Registry();
  const opts = {
    name: "h_seconds",
    help: "h",
    labelNames: ["target", "direction", "result"],
    buckets: OBJECT_DURATION_BUCKETS,
  };
  const f = new SeriesHistogram(fast, opts);
  const p = new Histogram({ ...opts, buckets: [...opts.buckets], registers: [slow] });
  const values = [0.000001, 0.00001, 0.00003, 0.0007, 0.02, 0.3, 1, 7];
  for (const [i, v] of values.entries()) {
    const labels = { target: T, direction: i % 2 ? "v1->v2" : "v2->v1", result: "success" };
    f.series([labels.target, labels.direction, labels.result]).observe(v);
    p.observe(labels, v);
  }
  assert.deepEqual(normalized(await fast.metrics()), normalized(await slow.metrics()));
  const fj = await fast.getMetricsAsJSON();
  assert.equal(fj[0].name, "h_seconds");
  assert.equal(fj[0].type, "histogram");
  f.reset();
  assert.doesNotMatch(await fast.metrics(), /h_seconds_count/);
});

Deno.test("the fast counter exposes what a prom-client Counter would", async () => {
  const fast = new Registry();
  const slow = new Registry();
  const opts = { name: "c_total", help: "c", labelNames: ["target", "from_version", "result"] };
  const f = new SeriesCounter(fast, opts);
  const p = new Counter({ ...opts, registers: [slow] });
  const steps = [1, 3, 0, 2.5, 7, 1];
  for (const [i, n] of steps.entries()) {
    const labels = { target: T, from_version: i % 2 ? "v1" : "v1alpha1", result: "success" };
    f.series([labels.target, labels.from_version, labels.result]).inc(n);
    p.inc(labels, n);
  }
  f.series([T, "v2", "error"]).inc();
  p.inc({ target: T, from_version: "v2", result: "error" });
  assert.deepEqual(normalized(await fast.metrics()), normalized(await slow.metrics()));
  assert.match(
    await fast.metrics(),
    /c_total\{target="[^"]+",from_version="v1",result="success"\} 6\.5/,
  );
  assert.throws(() => f.series([T, "v1", "success"]).inc(-1), /only goes up/);
  const fj = await fast.getMetricsAsJSON();
  assert.equal(fj[0].type, "counter");
  f.reset();
  assert.doesNotMatch(await fast.metrics(), /c_total\{/);
});

Deno.test("registry gauges follow a snapshot; panics are pre-created at 0 and never reset", async () => {
  const registry = new Registry();
  const m = new WebhookMetrics(registry);
  const plans = new PlanRegistry();
  plans.install(syntheticCompiled(), new Date("2026-03-01T10:00:00Z"));
  plans.install({
    ok: false,
    target: "things.example.com",
    kind: "xrd",
    config: "things",
    reason: "XRDNotFound",
    message: "missing",
  }, new Date());
  m.refreshRegistryGauges(plans.snapshot());
  let text = await registry.metrics();
  assert.equal(sampleValue(text, "dco_webhook_registry_size"), 2);
  assert.equal(sampleValue(text, "dco_webhook_registry_entry_loaded", { target: T }), 1);
  assert.equal(
    sampleValue(text, "dco_webhook_registry_entry_loaded", { target: "things.example.com" }),
    0,
  );
  assert.equal(
    sampleValue(text, "dco_webhook_registry_last_reload_timestamp_seconds", { target: T }),
    Date.parse("2026-03-01T10:00:00Z") / 1000,
  );
  assert.equal(
    sampleValue(text, "dco_webhook_registry_last_reload_timestamp_seconds", {
      target: "things.example.com",
    }),
    undefined,
    "no successful compile, no timestamp",
  );
  assert.equal(sampleValue(text, "dco_webhook_conversion_panics_total", { target: T }), 0);
  assert.equal(
    sampleValue(text, "dco_webhook_conversion_panics_total", { target: "things.example.com" }),
    0,
  );

  m.countPanic(T);
  plans.remove("things.example.com");
  m.refreshRegistryGauges(plans.snapshot());
  text = await registry.metrics();
  assert.equal(sampleValue(text, "dco_webhook_registry_size"), 1);
  assert.equal(
    sampleValue(text, "dco_webhook_registry_entry_loaded", { target: "things.example.com" }),
    undefined,
    "a removed target leaves the per-target gauges",
  );
  assert.equal(sampleValue(text, "dco_webhook_conversion_panics_total", { target: T }), 1);
});

Deno.test("compile counters come from registry changes", async () => {
  const registry = new Registry();
  const m = new WebhookMetrics(registry);
  const plans = new PlanRegistry();
  plans.onChange((c) => m.observeChange(c));
  plans.install(syntheticCompiled(), new Date());
  plans.install({
    ok: false,
    target: T,
    kind: "crd",
    config: "widgets",
    reason: "ValidationErrors",
    message: "x",
  }, new Date());
  plans.remove(T);
  const text = await registry.metrics();
  assert.equal(
    sampleValue(text, "dco_webhook_registry_reload_total", { target: T, result: "success" }),
    1,
  );
  assert.equal(
    sampleValue(text, "dco_webhook_registry_reload_total", { target: T, result: "error" }),
    1,
  );
  assert.equal(
    sampleValue(text, "dco_webhook_registry_compile_errors_total", {
      target: T,
      reason: "ValidationErrors",
    }),
    1,
  );
});

Deno.test("ready and initial-sync gauges", async () => {
  const registry = new Registry();
  const m = new WebhookMetrics(registry);
  let text = await registry.metrics();
  assert.equal(sampleValue(text, "dco_webhook_ready"), 0);
  m.setInitialSync(1.25, 40);
  m.setReady(true);
  text = await registry.metrics();
  assert.equal(sampleValue(text, "dco_webhook_ready"), 1);
  assert.equal(sampleValue(text, "dco_webhook_initial_sync_duration_seconds"), 1.25);
  assert.equal(sampleValue(text, "dco_webhook_initial_sync_targets"), 40);
});

Deno.test("one registry with the runtime families: no duplicate family; a second set is refused", async () => {
  using reg = createMetricsRegistry({ lagSampleIntervalMs: 50 });
  const m = new WebhookMetrics(reg.registry);
  m.observeReview(T, "v1->v2", "success", 0.001);
  const types = families(await reg.registry.metrics());
  for (const [name, seen] of types) assert.equal(seen.length, 1, `${name} appears once`);
  for (const name of WEBHOOK_METRIC_NAMES) assert.ok(types.has(name), name);
  assert.ok(types.has("process_resident_memory_bytes"));
  assert.throws(() => new WebhookMetrics(reg.registry), /already been registered/);
});

Deno.test("a listener's ledger, drained and merged, exposes what recording in the set would", async () => {
  const record = (m: ConversionMetrics) => {
    m.observeReview(T, "v1->v2", "success", 0.0004);
    m.observeReview(T, "v1->v2", "success", 0.02);
    m.observeReview(T, "unknown", "bad_request", 0.0001);
    m.observeBatchSize(T, 100);
    m.objectDuration(T, "v1->v2", "success").observe(0.00002);
    m.countObjects(T, "v1", "v2", "success", 100);
    m.countLossy(T, "hub_to_spoke", 3);
    m.countPanic(T);
    m.countRejected("in_flight");
    m.countRejected("connections");
  };
  const direct = new Registry();
  record(new WebhookMetrics(direct));
  const merged = new Registry();
  const set = new WebhookMetrics(merged);
  const ledger = new MetricsLedger();
  record(ledger);
  assert.equal(ledger.recorded, true);
  const delta = structuredClone(ledger.drain()); // it crosses threads as plain data
  assert.equal(ledger.recorded, false);
  set.merge(delta);
  set.merge(ledger.drain()); // an empty drain adds nothing
  assert.equal(await merged.metrics(), await direct.metrics());
});
