/**
 * The plain listener (health, readiness, `/metrics`, `/debug/registry`) and bind addresses; one
 * `/metrics` scrape next to a serving conversion listener carries every family exactly once.
 */
import assert from "node:assert/strict";
import {
  createPlainListener,
  parseBindAddress,
  Readiness,
  shutdownAll,
  startPlainServer,
  TlsServer,
} from "../../src/net/mod.ts";
import { createMetricsRegistry, metricsResponse } from "../../src/obs/metrics.ts";
import { syntheticCompiled } from "../../src/webhook/convert/_synthetic.ts";
import { createConvertExchange } from "../../src/webhook/convert/mod.ts";
import { WEBHOOK_METRIC_NAMES, WebhookMetrics } from "../../src/webhook/metrics.ts";
import { PlanRegistry } from "../../src/webhook/registry.ts";
import {
  captureLog,
  review,
  sampleValue,
  SYNTHETIC_TARGET as T,
  testCerts,
  widget,
  writePair,
} from "./_helpers.ts";

// --- addresses ------------------------------------------------------------------------------------

Deno.test("parseBindAddress takes Go-style addresses", () => {
  assert.deepEqual(parseBindAddress(":9443"), { hostname: "", port: 9443 });
  assert.deepEqual(parseBindAddress("127.0.0.1:8443"), { hostname: "127.0.0.1", port: 8443 });
  assert.deepEqual(parseBindAddress("[::1]:0"), { hostname: "::1", port: 0 });
  assert.deepEqual(parseBindAddress("localhost:80"), { hostname: "localhost", port: 80 });
  for (const bad of ["9443", "::1:9443", "host:", "host:99999", ""]) {
    assert.throws(() => parseBindAddress(bad), /invalid bind address/, bad);
  }
});

Deno.test("an empty host listens on every interface (dual stack)", async () => {
  const server = await startPlainServer({
    address: ":0",
    listener: createPlainListener({
      readiness: { ready: true },
      registry: new PlanRegistry(),
    }),
  });
  try {
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/healthz`);
    assert.equal(await res.text(), "ok\n");
  } finally {
    await server.shutdown();
  }
});

// --- the plain listener ---------------------------------------------------------------------------

Deno.test("plain listener: healthz, readyz driven by the readiness flag, debug, 404/405", async () => {
  const plans = new PlanRegistry();
  plans.install(syntheticCompiled(), new Date("2026-03-01T10:00:00Z"));
  const promRegistry = createMetricsRegistry({ runtime: false }).registry;
  const metrics = new WebhookMetrics(promRegistry);
  const readiness = new Readiness((r) => metrics.setReady(r));
  const server = await startPlainServer({
    address: "127.0.0.1:0",
    listener: createPlainListener({ readiness, registry: plans, metrics: promRegistry }),
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  try {
    let res = await fetch(`${base}/healthz`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "ok\n");
    res = await fetch(`${base}/readyz`);
    assert.equal(res.status, 503);
    assert.equal(await res.text(), "registry not yet fully synced\n");
    assert.equal(
      sampleValue(await (await fetch(`${base}/metrics`)).text(), "dco_webhook_ready"),
      0,
    );

    readiness.set(true);
    res = await fetch(`${base}/readyz`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "ok\n");
    assert.equal(
      sampleValue(await (await fetch(`${base}/metrics`)).text(), "dco_webhook_ready"),
      1,
    );

    readiness.set(false); // e.g. draining
    assert.equal((await fetch(`${base}/readyz`)).status, 503);
    await (await fetch(`${base}/readyz`)).body?.cancel();

    res = await fetch(`${base}/debug/registry`);
    assert.equal(res.headers.get("content-type"), "application/json");
    const rows = await res.json();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].xrd, T);
    assert.equal(rows[0].ready, true);
    assert.equal(rows[0].compiledAt, "2026-03-01T10:00:00Z");

    res = await fetch(`${base}/nope`);
    assert.equal(res.status, 404);
    await res.body?.cancel();
    res = await fetch(`${base}/healthz`, { method: "POST" });
    assert.equal(res.status, 405);
    await res.body?.cancel();
    res = await fetch(`${base}/healthz`, { method: "HEAD" });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "");
  } finally {
    await server.shutdown();
  }
});

Deno.test("plain listener: /metrics without a gatherer is 503", async () => {
  const server = await startPlainServer({
    address: "127.0.0.1:0",
    listener: createPlainListener({ readiness: { ready: true }, registry: new PlanRegistry() }),
  });
  try {
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/metrics`);
    assert.equal(res.status, 503);
    assert.equal(await res.text(), "metrics gatherer not configured\n");
  } finally {
    await server.shutdown();
  }
});

Deno.test("one /metrics scrape: every webhook family plus runtime, no duplicate family", async () => {
  using reg = createMetricsRegistry({ lagSampleIntervalMs: 50 });
  const metrics = new WebhookMetrics(reg.registry);
  const plans = new PlanRegistry();
  plans.onChange((c) => metrics.observeChange(c));
  const readiness = new Readiness((r) => metrics.setReady(r));
  const certs = await testCerts();
  const dir = await Deno.makeTempDir({ prefix: "dco-webhook-srv-" });
  await writePair(dir, certs.first);
  plans.install(syntheticCompiled(), new Date());
  metrics.refreshRegistryGauges(plans.snapshot());
  metrics.setInitialSync(0.5, 1);
  readiness.set(true);
  const tlsServer = await TlsServer.start({
    address: "127.0.0.1:0",
    certDir: dir,
    reloadIntervalMs: 0,
    exchange: createConvertExchange({ registry: plans, metrics, logger: captureLog() }),
    logger: captureLog(),
  });
  const plain = await startPlainServer({
    address: "127.0.0.1:0",
    listener: createPlainListener({
      readiness,
      registry: plans,
      metrics: () => metricsResponse(reg.registry),
    }),
  });
  const client = Deno.createHttpClient({ caCerts: [certs.ca] });
  try {
    const res = await fetch(`https://127.0.0.1:${tlsServer.addr.port}/convert/${T}`, {
      method: "POST",
      body: JSON.stringify(review("m", "v2", [widget("v1", 0), widget("v1alpha1", 1)])),
      client,
    });
    assert.equal((await res.json()).response.result.status, "Success");
    const scrape = await fetch(`http://127.0.0.1:${plain.addr.port}/metrics`);
    assert.equal(scrape.status, 200);
    assert.match(scrape.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const text = await scrape.text();
    const typeLines = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
    assert.equal(new Set(typeLines).size, typeLines.length, "no duplicate family");
    for (const name of WEBHOOK_METRIC_NAMES) assert.ok(typeLines.includes(name), name);
    assert.ok(typeLines.includes("process_resident_memory_bytes"));
    assert.equal(sampleValue(text, "dco_webhook_registry_reload_total", { result: "success" }), 1);
    assert.equal(sampleValue(text, "dco_webhook_conversion_panics_total", { target: T }), 0);
  } finally {
    client.close();
    await shutdownAll([tlsServer, plain], 5000);
    await Deno.remove(dir, { recursive: true });
  }
});
