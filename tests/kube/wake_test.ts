/**
 * The wake-cause classifier (docs/design/kube.md#wake-causes), read back through the same registry a scrape reads.
 * Each of the three mutation-style tests names the mutation it must kill.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { FakeClock } from "../../src/kube/clock.ts";
import { WAKE_TOLERANCE_MS, WakeClassifier } from "../../src/kube/wake.ts";
import { setLogSink } from "../../src/obs/log.ts";
import { sample, scrape } from "./_helpers.ts";

const FIVE_MIN = 300_000;

function setup() {
  const registry = new Registry();
  const clock = new FakeClock();
  const wake = new WakeClassifier({ controller: "xrdconversionconfig", registry, clock });
  const count = async (cause: "watch" | "backstop") =>
    sample(await scrape(registry), "dco_operator_wake_total", {
      controller: "xrdconversionconfig",
      cause,
    });
  return { registry, clock, wake, count };
}

Deno.test("both series exist at 0 before any reconcile", async () => {
  const { count } = setup();
  assert.equal(await count("watch"), 0);
  assert.equal(await count("backstop"), 0);
});

Deno.test("early arrival is a watch (kills: treat early arrival as timer)", async () => {
  const { clock, wake, count } = setup();
  wake.arm("ns/a", FIVE_MIN);
  clock.advance(FIVE_MIN - WAKE_TOLERANCE_MS - 1); // more than 15 s before the timer is due
  assert.equal(wake.enter("ns/a").cause, "watch");
  assert.equal(await count("watch"), 1);
  assert.equal(await count("backstop"), 0);
});

Deno.test("arrival within 15 s of the due time, on time, or late is a backstop", async () => {
  const { clock, wake, count } = setup();
  wake.arm("a", FIVE_MIN);
  clock.advance(FIVE_MIN - WAKE_TOLERANCE_MS); // exactly at the tolerance boundary
  assert.equal(wake.enter("a").cause, "backstop");
  wake.arm("b", 15_000);
  clock.advance(15_000);
  assert.equal(wake.enter("b").cause, "backstop");
  wake.arm("c", 5_000);
  clock.advance(60_000); // queue delay: late
  assert.equal(wake.enter("c").cause, "backstop");
  // A timer shorter than the tolerance is always a backstop (nothing can be "early" enough).
  wake.arm("d", 5_000);
  assert.equal(wake.enter("d").cause, "backstop");
  assert.equal(await count("backstop"), 4);
  assert.equal(await count("watch"), 0);
});

Deno.test("the record is consumed on entry (kills: don't consume)", async () => {
  const { clock, wake, count } = setup();
  wake.arm("a", 30_000);
  clock.advance(30_000);
  assert.equal(wake.enter("a").cause, "backstop");
  assert.equal(wake.peek("a"), undefined);
  // The next reconcile of the key, with no timer armed in between, was woken by an event.
  clock.advance(1_000);
  assert.equal(wake.enter("a").cause, "watch");
  assert.equal(await count("backstop"), 1);
  assert.equal(await count("watch"), 1);
});

Deno.test("an early (watch) entry consumes the record too", () => {
  const { clock, wake } = setup();
  wake.arm("a", FIVE_MIN);
  assert.equal(wake.enter("a").cause, "watch");
  clock.advance(FIVE_MIN); // the old timer's due time passes; the record is gone
  assert.equal(wake.enter("a").cause, "watch");
});

Deno.test("every entry increments exactly once (kills: drop increment)", async () => {
  const { clock, wake, count } = setup();
  for (let i = 0; i < 3; i++) wake.enter(`k${i}`);
  wake.arm("k0", 1000);
  clock.advance(1000);
  wake.enter("k0");
  assert.equal(await count("watch"), 3);
  assert.equal(await count("backstop"), 1);
});

Deno.test("arming overwrites: the last armed timer is the one classified", () => {
  const { clock, wake } = setup();
  wake.arm("a", 15_000);
  clock.advance(1_000);
  wake.arm("a", FIVE_MIN); // re-armed by a later exit
  clock.advance(14_000); // the first timer's due time: now early for the armed one
  assert.equal(wake.enter("a").cause, "watch");
});

Deno.test("arm ignores non-positive durations", () => {
  const { wake } = setup();
  wake.arm("a", 0);
  wake.arm("b", -5);
  assert.equal(wake.size, 0);
});

Deno.test("a backstop logs controller, key and armed_for", () => {
  const lines: string[] = [];
  setLogSink((l) => lines.push(l));
  try {
    const { clock, wake } = setup();
    wake.arm("ns/a", FIVE_MIN);
    clock.advance(FIVE_MIN);
    wake.enter("ns/a");
    wake.enter("ns/b"); // a watch wake logs nothing
  } finally {
    setLogSink(undefined);
  }
  assert.equal(lines.length, 1);
  const rec = JSON.parse(lines[0]);
  assert.equal(rec.controller, "xrdconversionconfig");
  assert.equal(rec.key, "ns/a");
  assert.equal(rec.armed_for, "5m0s");
});

Deno.test("classifiers of two controllers share one family in one registry", async () => {
  const registry = new Registry();
  const clock = new FakeClock();
  const a = new WakeClassifier({ controller: "a", registry, clock });
  const b = new WakeClassifier({ controller: "b", registry, clock });
  a.enter("k");
  b.enter("k");
  b.enter("k");
  const text = await scrape(registry);
  assert.equal(sample(text, "dco_operator_wake_total", { controller: "a", cause: "watch" }), 1);
  assert.equal(sample(text, "dco_operator_wake_total", { controller: "b", cause: "watch" }), 2);
  assert.equal(text.match(/^# TYPE dco_operator_wake_total counter$/gm)?.length, 1);
});
