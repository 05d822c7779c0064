/**
 * The event recorder's series rules (client-go's events broadcaster): the first occurrence is
 * created, the second patches a series of 2 onto it, later ones only count until the refresh or
 * the finish sweep writes them; the note is not part of the key; a series whose event is gone is
 * created again; notes are cut to 1 kB on a character boundary; cluster-scoped objects' events go
 * to `default`.
 */
import assert from "node:assert/strict";
import {
  type EventInput,
  type EventObject,
  EventRecorder,
  type EventSink,
  microTime,
  referenceOf,
  SERIES_FINISH_MS,
  truncateNote,
} from "../../src/kube/events.ts";
import { KubeApiError } from "../../src/kube/errors.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");

function fakeSink() {
  const calls: string[] = [];
  const stored = new Map<string, EventObject>();
  const sink: EventSink = {
    create(e) {
      calls.push(`create ${e.metadata.namespace}/${e.reason} count=${e.series?.count ?? 1}`);
      stored.set(e.metadata.name!, structuredClone(e));
      return Promise.resolve({ ...e, metadata: { ...e.metadata, resourceVersion: "1" } });
    },
    patchSeries(e) {
      calls.push(`patch ${e.reason} count=${e.series?.count}`);
      if (!stored.has(e.metadata.name!)) {
        return Promise.reject(new KubeApiError(404, "NotFound", "gone"));
      }
      stored.set(e.metadata.name!, structuredClone(e));
      return Promise.resolve(e);
    },
  };
  return { sink, calls, stored };
}

const config = { apiVersion: "terasky.com/v1alpha1", kind: "CRDConversionConfig", name: "w" };
const invalid = (note: string): EventInput => ({
  regarding: config,
  type: "Warning",
  reason: "ValidationFailed",
  action: "Validate",
  note,
});

Deno.test("series: create, patch to 2, count in memory, refresh, finish, start anew", async () => {
  const clock = { now: T0 };
  const { sink, calls, stored } = fakeSink();
  const r = new EventRecorder({
    sink,
    controller: "dco",
    instance: "dco-host",
    now: () => clock.now,
  });
  r.record(invalid("first"));
  r.record(invalid("second, another note")); // the note is not part of the key
  clock.now += 1_000;
  r.record(invalid("third"));
  r.record({ ...invalid("x"), reason: "Applied", type: "Normal", action: "Apply" });
  await r.flush();
  assert.deepEqual(calls, [
    "create default/ValidationFailed count=1",
    "patch ValidationFailed count=2",
    "create default/Applied count=1",
  ]);
  const [first] = stored.values();
  assert.equal(first.note, "first");
  assert.equal(first.reportingController, "dco");
  assert.equal(first.reportingInstance, "dco-host");
  assert.equal(first.eventTime, "2026-01-01T00:00:00.000000Z");
  assert.match(first.metadata.name!, /^w\.[0-9a-f]+$/);

  calls.length = 0;
  await r.refreshSeries();
  assert.deepEqual(calls, ["patch ValidationFailed count=3"]);
  assert.equal(first.series?.count, 2, "the stored event as the series patch left it");
  assert.deepEqual([...stored.values()][0].series, {
    count: 3,
    lastObservedTime: microTime(T0 + 1_000),
  });

  calls.length = 0;
  clock.now += SERIES_FINISH_MS + 1;
  await r.finishSeries();
  assert.deepEqual(
    calls,
    ["patch ValidationFailed count=3"],
    "the final write; Applied just leaves",
  );
  calls.length = 0;
  r.record(invalid("again"));
  r.record({ ...invalid("x"), reason: "Applied", type: "Normal", action: "Apply" });
  await r.flush();
  assert.deepEqual(calls, [
    "create default/ValidationFailed count=1",
    "create default/Applied count=1",
  ]);
});

Deno.test("a series whose event is gone is created again, with its count", async () => {
  const { sink, calls, stored } = fakeSink();
  const r = new EventRecorder({ sink, controller: "dco", instance: "i", now: () => T0 });
  r.record(invalid("a"));
  await r.flush();
  stored.clear(); // expired
  r.record(invalid("a"));
  await r.flush();
  assert.deepEqual(calls, [
    "create default/ValidationFailed count=1",
    "patch ValidationFailed count=2",
    "create default/ValidationFailed count=2",
  ]);
});

Deno.test("a failed write is reported and dropped; recording goes on", async () => {
  const errors: string[] = [];
  const sink: EventSink = {
    create: () => Promise.reject(new KubeApiError(403, "Forbidden", "no")),
    patchSeries: () => Promise.reject(new KubeApiError(403, "Forbidden", "no")),
  };
  const r = new EventRecorder({
    sink,
    controller: "dco",
    instance: "i",
    onError: (e, ev) => errors.push(`${ev.reason}: ${(e as Error).message}`),
  });
  r.record(invalid("a"));
  r.record({ ...invalid("a"), reason: "Other" });
  await r.flush();
  assert.equal(errors.length, 2);
});

Deno.test("namespaced objects' events stay in their namespace; related is part of the key", async () => {
  const { sink, calls } = fakeSink();
  const r = new EventRecorder({ sink, controller: "dco", instance: "i", now: () => T0 });
  const pod = { apiVersion: "v1", kind: "Pod", name: "p", namespace: "ns1" };
  r.record({ ...invalid("a"), regarding: pod });
  r.record({ ...invalid("a"), regarding: pod, related: config });
  await r.flush();
  assert.deepEqual(calls, [
    "create ns1/ValidationFailed count=1",
    "create ns1/ValidationFailed count=1",
  ]);
});

Deno.test("notes are cut to 1024 UTF-8 bytes on a character boundary", () => {
  assert.equal(truncateNote("short"), "short");
  const cut = truncateNote("é".repeat(600)); // 1200 bytes
  assert.equal(new TextEncoder().encode(cut).length, 1024);
  assert.equal(cut, "é".repeat(512));
  const odd = truncateNote("a" + "é".repeat(600)); // 'a' then 2-byte chars: 1024 falls mid-char
  assert.equal(new TextEncoder().encode(odd).length, 1023);
});

Deno.test("referenceOf: kind, name, uid and namespace, never the resourceVersion", () => {
  const obj = {
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    metadata: { name: "dco", uid: "u1", resourceVersion: "7" },
  };
  assert.deepEqual(referenceOf(obj), {
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    name: "dco",
    uid: "u1",
  });
  assert.equal(referenceOf({ metadata: { name: "p", namespace: "ns" } }).namespace, "ns");
});
