/**
 * The REST client's request accounting, through src/obs/rest_client_metrics.ts into a registry as
 * a scrape reads it: `rest_client_requests_total{code, method, host}` per answer (an error answer
 * and a refused connection included, the latter as `<error>`), `rest_client_request_duration_seconds`
 * by verb and host; a fenced view reports to the same sink.
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../src/kube/mod.ts";
import { createMetricsRegistry } from "../../src/obs/metrics.ts";
import { restClientMetrics } from "../../src/obs/rest_client_metrics.ts";
import { sample, scrape } from "./_helpers.ts";
import { freePort } from "../support/ports.ts";

Deno.test("every request is counted by code, method and host and timed by verb and host", async () => {
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) =>
      new URL(req.url).pathname.endsWith("/missing")
        ? Response.json({ kind: "Status", reason: "NotFound", code: 404 }, { status: 404 })
        : Response.json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } }),
  );
  const { registry } = createMetricsRegistry({ runtime: false });
  const host = `127.0.0.1:${server.addr.port}`;
  using client = new KubeClient(
    { server: `http://${host}`, namespace: "default", description: "test" },
    { metrics: restClientMetrics(registry) },
  );
  const ref = { group: "", version: "v1", plural: "configmaps", namespace: "default" };
  await client.get(ref, "x");
  await client.withSignal(new AbortController().signal).get(ref, "x");
  await assert.rejects(client.get(ref, "missing"));
  await client.create(ref, { metadata: { name: "y" } });

  const text = await scrape(registry);
  assert.equal(sample(text, "rest_client_requests_total", { code: "200", method: "GET", host }), 2);
  assert.equal(sample(text, "rest_client_requests_total", { code: "404", method: "GET", host }), 1);
  assert.equal(
    sample(text, "rest_client_requests_total", { code: "200", method: "POST", host }),
    1,
  );
  assert.equal(
    sample(text, "rest_client_request_duration_seconds_count", { verb: "GET", host }),
    3,
  );
  assert.equal(
    sample(text, "rest_client_request_duration_seconds_count", { verb: "POST", host }),
    1,
  );
});

Deno.test("a request that gets no answer is counted with code <error>", async () => {
  const { registry } = createMetricsRegistry({ runtime: false });
  const port = freePort(); // nothing listens on it
  using client = new KubeClient(
    { server: `http://127.0.0.1:${port}`, namespace: "default", description: "test" },
    { metrics: restClientMetrics(registry) },
  );
  await assert.rejects(client.get({ group: "", version: "v1", plural: "pods" }, "p"));
  const text = await scrape(registry);
  assert.equal(
    sample(text, "rest_client_requests_total", {
      code: "<error>",
      method: "GET",
      host: `127.0.0.1:${port}`,
    }),
    1,
  );
});
