/**
 * The soak's pure parts: the leak rule on recorded heap series (a flat one from a real soak must
 * pass; the same series with a steady rise added must fail) and on sawtooths, its windows and
 * full-collection detection, the exact
 * read-back of int64 values, the metrics it keeps from an exposition, and its flags.
 */
import assert from "node:assert/strict";
import { parseDuration, parseSoakArgs } from "../../hack/soak/flags.ts";
import {
  DEFAULT_LEAK_RULE,
  fullCollections,
  type HeapSample,
  judgeLeak,
  windowMinima,
} from "../../hack/soak/leak.ts";
import { FIRST_VALUE, holds, rawNumber, valueFor } from "../../hack/soak/load.ts";
import { metricsOf, sampledPod } from "../../hack/soak/sampler.ts";
import { spread, steadySamples } from "../../hack/soak/summary.ts";

const FIXTURES = new URL("./fixtures/soak/", import.meta.url);

/** Recorded heap series: pod → samples, from a soak's result JSON. */
async function recorded(file: string): Promise<Map<string, HeapSample[]>> {
  const doc = JSON.parse(await Deno.readTextFile(new URL(file, FIXTURES)));
  const series = new Map<string, HeapSample[]>();
  for (const s of doc.samples as { t: number; pod: string; heapUsedBytes: number }[]) {
    const list = series.get(s.pod) ?? [];
    list.push({ t: s.t, heapUsedBytes: s.heapUsedBytes });
    series.set(s.pod, list);
  }
  return series;
}

/** `series` with `bytesPerSecond` × (t − first t) added to every sample: a steady leak. */
function withLeak(
  series: Map<string, HeapSample[]>,
  bytesPerSecond: number,
): Map<string, HeapSample[]> {
  return new Map(
    [...series].map(([pod, samples]) => [
      pod,
      samples.map((s) => ({
        t: s.t,
        heapUsedBytes: s.heapUsedBytes + bytesPerSecond * (s.t - samples[0].t),
      })),
    ]),
  );
}

Deno.test("leak rule: a recorded flat soak passes; the same series rising 64 KiB/s fails", async () => {
  const flat = await recorded("flat.json");
  const ok = judgeLeak(flat);
  assert.equal(ok.judged, 2, JSON.stringify(ok.replicas, null, 2));
  assert.equal(ok.pass, true, JSON.stringify(ok.replicas, null, 2));
  assert.ok(ok.maxSlopeBytesPerSecond < DEFAULT_LEAK_RULE.maxSlopeBytesPerSecond);
  // The recorded floor climbs ~10 MiB before the first full collection: a fit through every
  // window minimum would have called this a leak.
  for (const r of ok.replicas) assert.ok(r.fullCollections >= 1, r.pod);

  const leaking = judgeLeak(withLeak(flat, 64 * 1024));
  assert.equal(leaking.judged, 2);
  assert.equal(leaking.pass, false);
  // Every replica is caught, and the slope found is the one added (plus the flat one).
  for (const r of leaking.replicas) {
    assert.equal(r.leaking, true, r.pod);
    const base = ok.replicas.find((x) => x.pod === r.pod)!.slopeBytesPerSecond;
    assert.ok(Math.abs(r.slopeBytesPerSecond - base - 64 * 1024) < 1, r.pod);
  }
});

Deno.test("leak rule: the recorded nightly soak (10 replicas, 4 restarts, a hold) passes on 3", async () => {
  const nightly = await recorded("nightly.json");
  const ok = judgeLeak(nightly);
  assert.equal(ok.replicas.length, 10);
  // The replicas between restarts live ~96 s, less than a full-collection cycle: not judged.
  assert.equal(ok.judged, 3, JSON.stringify(ok.replicas, null, 2));
  assert.equal(ok.pass, true);
  // With 64 KiB/s added, every replica still judged is caught (the first replica's one full
  // collection then frees less than 15 % of its higher floor, so it is no longer judged).
  const leaking = judgeLeak(withLeak(nightly, 64 * 1024));
  assert.equal(leaking.pass, false);
  assert.ok(leaking.judged >= 2);
  assert.ok(leaking.replicas.filter((r) => r.judged).every((r) => r.leaking));
});

/** A sawtooth: scavenges every second, promotion raising the floor, a full collection every `cycle` s. */
function sawtooth(seconds: number, cycle: number, leakPerSecond = 0): HeapSample[] {
  const MiB = 2 ** 20;
  return Array.from({ length: seconds }, (_, t) => ({
    t,
    heapUsedBytes: 24 * MiB + (t % cycle) * 0.1 * MiB + (t % 3) * 2 * MiB + t * leakPerSecond,
  }));
}

Deno.test("leak rule: judged on the heap after a full collection, not the rising floor", () => {
  // The floor rises 0.1 MiB/s (promotion) and falls back every 100 s: no leak.
  const v = judgeLeak(new Map([["p", sawtooth(250, 100)]]));
  assert.equal(v.replicas[0].fullCollections, 2);
  assert.equal(v.pass, true, JSON.stringify(v.replicas));
  assert.ok(v.replicas[0].slopeBytesPerSecond <= 0);
  // The same with 64 KiB/s that no collection frees: found on top of the flat slope (which is
  // negative: the first floor still held promoted garbage).
  const w = judgeLeak(new Map([["p", sawtooth(250, 100, 64 * 1024)]]));
  assert.equal(w.pass, false);
  const found = w.replicas[0].slopeBytesPerSecond - v.replicas[0].slopeBytesPerSecond;
  assert.ok(Math.abs(found - 64 * 1024) < 1, `${found}`);
  // Younger than one cycle: the floor only rose, nothing to judge on (a fit would say "leak").
  const young = judgeLeak(new Map([["p", sawtooth(95, 100)]]));
  assert.equal(young.replicas[0].fullCollections, 0);
  assert.equal(young.judged, 0);
  assert.equal(young.pass, false, "no verdict is not a pass");
  assert.equal(young.maxSlopeBytesPerSecond, 0);
});

Deno.test("leak rule: warm-up dropped, windows' minima, a full collection too early is not judged", () => {
  const rule = { ...DEFAULT_LEAK_RULE, warmupSeconds: 20, windowSeconds: 10 };
  const samples = Array.from({ length: 60 }, (_, i) => ({ t: i - 5, heapUsedBytes: 1000 + i }));
  // Samples at -5 … 54: the warm-up ends at 15, leaving windows [15,25) [25,35) [35,45) [45,55).
  const minima = windowMinima(samples, rule);
  assert.deepEqual(minima.map((m) => m.t), [15, 25, 35, 45]);
  assert.deepEqual(minima.map((m) => m.heapUsedBytes), [1020, 1030, 1040, 1050]);
  assert.deepEqual(fullCollections(minima, 0.1), []);
  const dropped = [...minima, { t: 55, heapUsedBytes: 900 }, { t: 65, heapUsedBytes: 1000 }];
  assert.deepEqual(fullCollections(dropped, 0.1), [4]);
  assert.deepEqual(fullCollections(dropped, 0.2), []);

  // A full collection 40 s after the first window: below the 60 s span, not judged.
  const early = Array.from({ length: 90 }, (_, t) => ({ t, heapUsedBytes: t === 60 ? 500 : 1000 }));
  const v = judgeLeak(new Map([["p", early]]), rule);
  assert.equal(v.replicas[0].fullCollections, 1);
  assert.equal(v.judged, 0);
  const late = judgeLeak(new Map([["p", early]]), { ...rule, minSpanSeconds: 30 });
  assert.equal(late.judged, 1);
  assert.equal(late.replicas[0].postGCBytes, 500);
  assert.equal(late.replicas[0].slopeBytesPerSecond, -500 / 40);
});

Deno.test("load: int64 values beyond 2^53 are compared by their digits", () => {
  const v = valueFor(3);
  assert.ok(BigInt(v.digits) > FIRST_VALUE);
  assert.ok(BigInt(v.digits) > BigInt(Number.MAX_SAFE_INTEGER));
  for (const seq of [0, 1, 3, 1_000_000]) {
    const digits = valueFor(seq).digits;
    assert.notEqual(BigInt(Number(digits)), BigInt(digits), `a double cannot hold ${digits}`);
  }
  assert.equal(valueFor(0).digits, "9007199254740993");
  assert.equal(valueFor(0).ratio, 1 / 3);
  const text = `{"apiVersion":"g/v2","metadata":{"managedFields":[{"fieldsV1":{"f:spec":` +
    `{"f:capacity":{}}}}]},"spec":{"capacity":${v.digits},"owner":"w","ratio":${v.ratio}}}`;
  assert.equal(rawNumber(text, "capacity"), v.digits);
  assert.equal(holds(text, "capacity", v), true);
  // One off in the last digit (what a double round trip does) is wrong.
  const rounded = text.replace(v.digits, String(BigInt(v.digits) - 1n));
  assert.equal(holds(rounded, "capacity", v), false);
  assert.equal(
    holds(text.replace(String(v.ratio), String(v.ratio + 2 ** -52)), "capacity", v),
    false,
  );
  assert.equal(holds(text, "size", v), false);
});

Deno.test("sampler: the gauges it keeps, and which Pods it samples", () => {
  const text = [
    "# HELP process_resident_memory_bytes Resident memory size in bytes.",
    "# TYPE process_resident_memory_bytes gauge",
    "process_resident_memory_bytes 123456789",
    "deno_v8_heap_used_bytes 20000000",
    "deno_v8_heap_total_bytes 30000000",
    "deno_v8_external_bytes 4000",
    "deno_event_loop_lag_seconds 0.012",
    'dco_webhook_requests_total{target="x"} 5',
  ].join("\n");
  assert.deepEqual(metricsOf(text), {
    rssBytes: 123456789,
    heapUsedBytes: 20000000,
    heapTotalBytes: 30000000,
    externalBytes: 4000,
    eventLoopLagSeconds: 0.012,
  });
  assert.equal(metricsOf(text.replace(/^deno_event_loop_lag_seconds.*$/m, "")), undefined);

  const ready = { type: "Ready", status: "True" };
  const pod = (extra: object) => ({
    metadata: { name: "p" },
    status: { podIP: "10.0.0.2", conditions: [ready] },
    ...extra,
  });
  assert.equal(sampledPod(pod({})), true);
  assert.equal(sampledPod(pod({ metadata: { name: "p", deletionTimestamp: "x" } })), false);
  assert.equal(
    sampledPod(pod({ status: { podIP: "10.0.0.2", conditions: [{ ...ready, status: "False" }] } })),
    false,
  );
  assert.equal(sampledPod(pod({ status: { conditions: [ready] } })), false);
});

Deno.test("flags: defaults are the nightly soak; durations in seconds or minutes", () => {
  const d = parseSoakArgs([]);
  assert.deepEqual(d.envelope, {
    durationSeconds: 480,
    restarts: 4,
    holdSeconds: 240,
    replicas: 2,
    workers: 4,
    objects: 8,
    sampleIntervalSeconds: 2,
  });
  assert.deepEqual(d.leak, DEFAULT_LEAK_RULE);
  assert.equal(d.out, undefined);
  assert.equal(d.requireLeakVerdict, true);
  assert.equal(parseSoakArgs(["--require-leak-verdict=false"]).requireLeakVerdict, false);
  assert.throws(() => parseSoakArgs(["--leak-drop=1"]), /--leak-drop 1/);
  assert.equal(parseDuration("8m"), 480);
  assert.equal(parseDuration("45s"), 45);
  assert.throws(() => parseDuration("soon"), /duration soon/);
  assert.throws(() => parseSoakArgs(["--restarts=-1"]), /--restarts -1/);
  assert.throws(() => parseSoakArgs(["--leak-window", "0"]), /--leak-window 0/);
  assert.deepEqual(spread([3, 1, 2]), { min: 1, p50: 2, p99: 3, max: 3 });
  assert.deepEqual(spread([]), { min: 0, p50: 0, p99: 0, max: 0 });
  // Each replica's first 10 s (its start, which the lag gauge holds for its 10 s window) dropped.
  const at = (pod: string, t: number) => ({ pod, t });
  assert.deepEqual(
    steadySamples([at("a", -3), at("a", 6), at("a", 7), at("b", 100), at("b", 112)]),
    [at("a", 7), at("b", 112)],
  );
});
