/**
 * Tracing settings and sampling: how the `--otel-*` flags map onto Deno's OpenTelemetry
 * environment, when a process refuses to start, how a `traceparent` is read, and the
 * parent-based ratio decision (no span at all for an untraced request).
 */
import assert from "node:assert/strict";
import {
  denoOtelActive,
  otelEnv,
  otlpEndpointUrl,
  parseTraceparent,
  RequestSampler,
  tracingEnvProblem,
  type TracingSettings,
  WEBHOOK_SERVICE_NAME,
} from "../../src/obs/tracing.ts";
import { RecordingTracer } from "./_recording_tracer.ts";

const on = (endpoint: string, insecure = false): TracingSettings => ({
  endpoint,
  insecure,
  sampleRatio: 0.1,
});
const envOf = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("tracing: the endpoint flag becomes the URL Deno exports to", () => {
  assert.equal(otlpEndpointUrl("collector:4318", false), "https://collector:4318");
  assert.equal(otlpEndpointUrl("collector:4318", true), "http://collector:4318");
  assert.equal(otlpEndpointUrl("http://c:4318", false), "http://c:4318", "a scheme is kept");
  assert.equal(otlpEndpointUrl("https://c", true), "https://c");
  assert.deepEqual(otelEnv(on("")), {}, "no endpoint: nothing to set");
  assert.deepEqual(otelEnv(on("c:4318", true)), {
    OTEL_DENO: "true",
    OTEL_DENO_METRICS: "false",
    OTEL_DENO_CONSOLE: "ignore",
    OTEL_SERVICE_NAME: WEBHOOK_SERVICE_NAME,
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
  });
});

Deno.test("tracing: a process whose environment did not turn Deno's OpenTelemetry on refuses", () => {
  assert.equal(denoOtelActive(), false, "this test process runs without OTEL_DENO");
  assert.equal(tracingEnvProblem(on(""), envOf({}), false), undefined, "off: nothing needed");
  const off = tracingEnvProblem(on("c:4318", true), envOf({ OTEL_DENO: "true" }), false);
  assert.match(off ?? "", /needs Deno's OpenTelemetry, which is off/);
  assert.match(off ?? "", /OTEL_DENO=true .*OTEL_EXPORTER_OTLP_ENDPOINT=http:\/\/c:4318/);
  const elsewhere = tracingEnvProblem(
    on("c:4318", true),
    envOf({ OTEL_DENO: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://other:4318" }),
    true,
  );
  assert.match(elsewhere ?? "", /but Deno exports to "http:\/\/other:4318"/);
  assert.match(
    tracingEnvProblem(on("c:4318"), envOf({}), true) ?? "",
    /exports to "http:\/\/localhost:4318"/,
    "unset: Deno's default",
  );
  assert.equal(
    tracingEnvProblem(
      on("c:4318", true),
      envOf({ OTEL_DENO: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }),
      true,
    ),
    undefined,
  );
  assert.equal(
    tracingEnvProblem(
      on("c:4318"),
      envOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://x/v1/traces" }),
      true,
    ),
    undefined,
    "a traces-specific endpoint is the operator's choice",
  );
});

Deno.test("tracing: traceparent values", () => {
  const id = "0af7651916cd43dd8448eb211c80319c";
  assert.deepEqual(parseTraceparent(`00-${id}-b7ad6b7169203331-01`), {
    traceId: id,
    spanId: "b7ad6b7169203331",
    sampled: true,
  });
  assert.equal(parseTraceparent(`00-${id}-b7ad6b7169203331-00`)?.sampled, false);
  assert.equal(parseTraceparent(`00-${id}-b7ad6b7169203331-03`)?.sampled, true, "other flags");
  assert.equal(parseTraceparent(`01-${id}-b7ad6b7169203331-01-later`)?.sampled, true);
  for (
    const bad of [
      undefined,
      "",
      `00-${id}-b7ad6b7169203331-01-extra`,
      `ff-${id}-b7ad6b7169203331-01`,
      `00-${"0".repeat(32)}-b7ad6b7169203331-01`,
      `00-${id}-${"0".repeat(16)}-01`,
      `00-${id.toUpperCase()}-b7ad6b7169203331-01`,
      `00-${id}-b7ad6b71692033-01`,
    ]
  ) {
    assert.equal(parseTraceparent(bad), undefined, String(bad));
  }
});

Deno.test("tracing: parent-based ratio sampling decides before any span exists", () => {
  const id = "0af7651916cd43dd8448eb211c80319c";
  const sampled = `00-${id}-b7ad6b7169203331-01`;
  const unsampled = `00-${id}-b7ad6b7169203331-00`;
  let draw = 0.5;
  const tracer = new RecordingTracer();
  const at = (ratio: number) => new RequestSampler(tracer, ratio, () => draw);

  assert.equal(at(0.4).startRoot("R", undefined, {}), undefined, "0.5 ≥ 0.4: not traced");
  assert.notEqual(at(0.6).startRoot("R", undefined, {}), undefined, "0.5 < 0.6: traced");
  draw = 0;
  assert.equal(at(0).startRoot("R", undefined, {}), undefined, "ratio 0 traces no root");
  draw = 0.999999;
  assert.notEqual(at(1).startRoot("R", undefined, {}), undefined, "ratio 1 traces every root");
  assert.equal(at(7).ratio, 1, "clamped");
  assert.equal(at(-1).ratio, 0, "clamped");
  assert.equal(tracer.spans.length, 2, "an untraced request built no span");

  // A valid parent decides, whatever the ratio.
  assert.equal(at(1).startRoot("R", unsampled, {}), undefined);
  const child = at(0).startRoot("R", sampled, { target: "t" });
  assert.notEqual(child, undefined);
  const last = tracer.spans.at(-1)!;
  assert.equal(last.traceId, id);
  assert.equal(last.parentSpanId, "b7ad6b7169203331");
  assert.deepEqual(last.attributes, { target: "t" });
  // An invalid one is ignored: the ratio decides.
  assert.equal(at(0).startRoot("R", "garbage", {}), undefined);
  assert.equal(at(1).startRoot("R", "garbage", {})?.spanContext().traceId === id, false);
});
