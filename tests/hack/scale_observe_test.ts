/**
 * The scale run's pure pieces: reading the replicas' Prometheus text and /proc status files,
 * merging replica observations into the result's `observed`, the client-side token bucket, and the
 * size of the LIST benchmark's objects.
 */
import assert from "node:assert/strict";
import {
  observationCollectedNothing,
  observedOf,
  podProcessGroup,
  sampleTotal,
  sampleValue,
  statusMemory,
} from "../../hack/scale/observe.ts";
import { TokenBucket } from "../../hack/scale/limiter.ts";
import { benchObject } from "../../hack/scale/list_bench.ts";

const METRICS =
  `# HELP dco_webhook_initial_sync_duration_seconds Wall time of the successful initial sync pass.
# TYPE dco_webhook_initial_sync_duration_seconds gauge
dco_webhook_initial_sync_duration_seconds 1.25
dco_webhook_initial_sync_targets 100
dco_webhook_initial_sync_targets_other 7
deno_v8_heap_used_bytes 5.5e+07
dco_webhook_conversion_review_duration_seconds_sum{target="a",direction="x",result="success"} 0.5
dco_webhook_conversion_review_duration_seconds_sum{target="b",direction="x",result="success"} 0.25
dco_webhook_conversion_review_duration_seconds_count{target="a",direction="x",result="success"} 3
`;

Deno.test("metrics text: a family's first sample, and the sum over its labelled series", () => {
  assert.equal(sampleValue(METRICS, "dco_webhook_initial_sync_duration_seconds"), 1.25);
  assert.equal(sampleValue(METRICS, "dco_webhook_initial_sync_targets"), 100);
  assert.equal(sampleValue(METRICS, "deno_v8_heap_used_bytes"), 55_000_000);
  assert.equal(sampleValue(METRICS, "dco_webhook_ready"), undefined);
  assert.equal(
    sampleTotal(METRICS, "dco_webhook_conversion_review_duration_seconds_sum"),
    0.75,
  );
  assert.equal(sampleTotal(METRICS, "dco_webhook_conversion_review_duration_seconds_count"), 3);
  assert.equal(sampleTotal(METRICS, "absent_total"), 0);
});

Deno.test("/proc status: VmRSS and VmHWM in bytes", () => {
  const status = "Name:\tdeno\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nRssAnon:\t 1 kB\n";
  assert.deepEqual(statusMemory(status), { rss: 100 * 1024 * 1024, hwm: 200 * 1024 * 1024 });
  assert.deepEqual(statusMemory("Name:\tkthreadd\n"), { rss: 0, hwm: 0 });
});

Deno.test("a Pod's process group comes from the test kubelet's container ID", () => {
  const pod = (id?: string) => ({ status: { containerStatuses: [{ containerID: id }] } });
  assert.equal(podProcessGroup(pod("dco-test://4242")), 4242);
  assert.equal(podProcessGroup(pod("containerd://abc")), undefined);
  assert.equal(podProcessGroup(pod()), undefined);
});

Deno.test("observed: maxima over the replicas; a figure nobody reported is left out", () => {
  const o = observedOf([
    {
      pod: "a",
      initialSyncSeconds: 0.5,
      initialSyncTargets: 10,
      workingSetBytes: 100,
      problems: [],
    },
    { pod: "b", initialSyncSeconds: 0.75, workingSetBytes: 90, problems: ["b /metrics: 503"] },
  ]);
  assert.deepEqual(o, {
    webhookReplicas: 2,
    webhookInitialSyncSeconds: 0.75,
    webhookInitialSyncTargets: 10,
    webhookWorkingSetBytes: 100,
  });
  assert.equal(observationCollectedNothing(o), false);
  const none = observedOf([{ pod: "a", problems: ["a: gone"] }]);
  assert.deepEqual(none, { webhookReplicas: 1 });
  assert.equal(observationCollectedNothing(none), true);
  assert.equal(observationCollectedNothing({ webhookWorkingSetBytes: 1 }), false);
});

Deno.test("token bucket: a burst goes at once, then one request per 1/qps", async () => {
  let now = 0;
  const waits: number[] = [];
  const bucket = new TokenBucket(10, 3, () => now, (ms) => {
    waits.push(ms);
    now += ms;
    return Promise.resolve();
  });
  for (let i = 0; i < 5; i++) await bucket.take();
  assert.deepEqual(waits.map((w) => Math.round(w)), [100, 100]);
  now += 1000; // a quiet second refills the bucket, never beyond the burst
  for (let i = 0; i < 3; i++) await bucket.take();
  assert.equal(waits.length, 2);
  await bucket.take();
  assert.equal(waits.length, 3);
  assert.throws(() => new TokenBucket(0, 1), RangeError);
});

Deno.test("list bench objects are about the asked size, each with its own name and values", () => {
  for (const bytes of [2048, 10240]) {
    const size = JSON.stringify(benchObject(7, bytes)).length;
    assert.ok(Math.abs(size - bytes) < bytes * 0.1, `${size} vs ${bytes}`);
  }
  assert.notEqual(
    JSON.stringify(benchObject(1, 10240).spec),
    JSON.stringify(benchObject(2, 10240).spec),
  );
  assert.equal((benchObject(12, 100).metadata as { name: string }).name, "payload-00012");
});
