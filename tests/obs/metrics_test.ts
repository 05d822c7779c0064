/**
 * The registry factory and its Deno-safe process/runtime collectors: one scrape, no duplicate
 * family or series, real memory figures, an event-loop lag that sees a blocked loop, and the
 * whole module working with no permissions at all.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { Controller } from "../../src/kube/controller.ts";
import {
  createMetricsRegistry,
  metricsResponse,
  registerRuntimeMetrics,
} from "../../src/obs/metrics.ts";

const RUNTIME_FAMILIES = [
  "process_resident_memory_bytes",
  "process_cpu_seconds_total",
  "process_start_time_seconds",
  "deno_v8_heap_used_bytes",
  "deno_v8_heap_total_bytes",
  "deno_v8_external_bytes",
  "deno_event_loop_lag_seconds",
];

function families(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
}

function value(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text);
  assert.ok(m, `${name} missing from the scrape`);
  return Number(m[1]);
}

Deno.test("one scrape: runtime families present, no duplicate family or series, RSS > 0", async () => {
  using m = createMetricsRegistry();
  // A controller in the same registry adds the framework families to the same scrape.
  const ctrl = new Controller({ name: "c", registry: m.registry, reconcile: async () => {} });
  const res = await metricsResponse(m.registry);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const fams = families(text);
  assert.deepEqual(fams.filter((f, i) => fams.indexOf(f) !== i), [], "duplicate families");
  const series = text.split("\n").filter((l) => l && !l.startsWith("#")).map((l) =>
    l.slice(0, l.lastIndexOf(" "))
  );
  assert.deepEqual(series.filter((s, i) => series.indexOf(s) !== i), [], "duplicate series");
  for (const f of RUNTIME_FAMILIES) assert.ok(fams.includes(f), `${f} missing`);
  for (
    const f of ["workqueue_depth", "controller_runtime_reconcile_total", "dco_operator_wake_total"]
  ) {
    assert.ok(fams.includes(f), `${f} missing`);
  }
  assert.ok(value(text, "process_resident_memory_bytes") > 0);
  assert.ok(value(text, "deno_v8_heap_used_bytes") > 0);
  assert.ok(value(text, "deno_v8_heap_total_bytes") >= value(text, "deno_v8_heap_used_bytes"));
  assert.ok(value(text, "process_cpu_seconds_total") > 0);
  const start = value(text, "process_start_time_seconds");
  assert.ok(start > 1.6e9 && start <= Date.now() / 1000, `start time ${start}`);
  await ctrl.stop();
});

Deno.test("process_cpu_seconds_total never decreases across scrapes", async () => {
  using m = createMetricsRegistry();
  const a = value(await (await metricsResponse(m.registry)).text(), "process_cpu_seconds_total");
  let x = 0;
  for (let i = 0; i < 2e6; i++) x += Math.sqrt(i);
  assert.ok(x > 0);
  const b = value(await (await metricsResponse(m.registry)).text(), "process_cpu_seconds_total");
  assert.ok(b >= a, `${b} < ${a}`);
});

Deno.test("deno_event_loop_lag_seconds sees a blocked event loop", async () => {
  using m = createMetricsRegistry({ lagSampleIntervalMs: 10, lagWindowMs: 60_000 });
  const until = performance.now() + 200;
  while (performance.now() < until) {
    // block the loop: the sampler's timer cannot fire meanwhile
  }
  // Let the late timer fire and record its drift.
  await new Promise((r) => setTimeout(r, 30));
  const lag = value(
    await (await metricsResponse(m.registry)).text(),
    "deno_event_loop_lag_seconds",
  );
  assert.ok(lag >= 0.1, `a 200 ms block must show as lag; got ${lag} s`);
});

Deno.test("registering the runtime families twice in one registry throws", () => {
  using m = createMetricsRegistry();
  assert.throws(() => registerRuntimeMetrics(m.registry), /already been registered/);
});

Deno.test("merging registries that both hold a family fails the scrape with 500", async () => {
  using a = createMetricsRegistry();
  using b = createMetricsRegistry();
  const res = await metricsResponse([a.registry, b.registry]);
  assert.equal(res.status, 500);
  assert.match(await res.text(), /process_resident_memory_bytes/);
  // Distinct registries merge fine.
  const own = new Registry();
  const ok = await metricsResponse([a.registry, own]);
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
});

Deno.test("logging and a scrape need no permissions", async () => {
  const script = new URL("./testdata/no_permissions.ts", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", script],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  const { status, body } = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.equal(status, 200);
  assert.ok(value(body, "process_resident_memory_bytes") > 0);
  assert.ok(value(body, "process_cpu_seconds_total") > 0);
  const line = stderr.split("\n").find((l) => l.includes('"msg":"hello"'));
  assert.ok(line, stderr);
  assert.equal(JSON.parse(line).err.message, "sample");
});
