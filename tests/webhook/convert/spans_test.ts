/**
 * The conversion endpoint's spans over a real TLS listener: a `ConversionReview` span per traced
 * request (its `target`; a failure recorded on it), a `Convert` child per object with its
 * `from_version` and `to_version` (a conversion error recorded on it), an incoming `traceparent`
 * continued, and nothing built for a request that is not traced.
 */
import assert from "node:assert/strict";
import { RequestSampler } from "../../../src/obs/tracing.ts";
import { CONVERT_SPAN, REVIEW_SPAN } from "../../../src/webhook/convert/spans.ts";
import { RecordingTracer } from "../../obs/_recording_tracer.ts";
import { review, startConversion, SYNTHETIC_TARGET as T, widget } from "../_helpers.ts";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

async function traced(ratio = 1) {
  const tracer = new RecordingTracer();
  const fixture = await startConversion({ sampler: new RequestSampler(tracer, ratio) });
  return { tracer, fixture };
}

Deno.test("spans: a ConversionReview span per request, a Convert child per object", async () => {
  const { tracer, fixture } = await traced();
  await using _ = fixture;
  const out = await fixture.convert(review("u1", "v2", [widget("v1", 0), widget("v1alpha1", 1)]));
  assert.equal(out.response.result.status, "Success");

  const [root, ...others] = tracer.named(REVIEW_SPAN);
  assert.equal(others.length, 0);
  assert.equal(root.attributes.target, T);
  assert.equal(root.attributes.result, "success");
  assert.equal(root.attributes["http.response.status_code"], 200);
  assert.equal(root.status, undefined, "a success sets no error status");
  assert.equal(root.parentSpanId, "", "no traceparent: a new trace");
  assert.ok(root.ended);
  const converts = tracer.named(CONVERT_SPAN);
  assert.deepEqual(
    converts.map((s) => s.attributes),
    [
      { target: T, from_version: "v1", to_version: "v2" },
      { target: T, from_version: "v1alpha1", to_version: "v2" },
    ],
  );
  for (const c of converts) {
    assert.equal(c.traceId, root.traceId);
    assert.equal(c.parentSpanId, root.spanId);
    assert.ok(c.ended);
    assert.equal(c.status, undefined);
  }
});

Deno.test("spans: an incoming traceparent is continued; a not-sampled one traces nothing", async () => {
  const { tracer, fixture } = await traced(0);
  await using _ = fixture;
  const send = (traceparent: string) =>
    fixture.post(review("u2", "v2", [widget("v1", 0)]), T, {
      headers: { "content-type": "application/json", traceparent },
    }).then((r) => r.json());
  await send(`00-${TRACE_ID}-${PARENT}-01`);
  const [root] = tracer.named(REVIEW_SPAN);
  assert.equal(root.traceId, TRACE_ID, "ratio 0, but the caller sampled it");
  assert.equal(root.parentSpanId, PARENT);
  assert.equal(tracer.named(CONVERT_SPAN)[0].traceId, TRACE_ID);

  const before = tracer.spans.length;
  await send(`00-${TRACE_ID}-${PARENT}-00`);
  await fixture.convert(review("u3", "v2", [widget("v1", 0)]));
  assert.equal(tracer.spans.length, before, "not sampled by the caller, and ratio 0: no span");
});

Deno.test("spans: failures are recorded on the spans", async () => {
  const { tracer, fixture } = await traced();
  await using _ = fixture;
  const bad = await fixture.convert(review("u4", "v2", [widget("v1", 0), widget("v9", 1)]));
  assert.equal(bad.response.result.status, "Failure");
  const [root] = tracer.named(REVIEW_SPAN);
  assert.equal(root.attributes.result, "error");
  assert.equal(root.status?.code, 2, "ERROR");
  assert.equal(root.status?.message, bad.response.result.message);
  const converts = tracer.named(CONVERT_SPAN);
  assert.equal(converts.length, 2, "the good object and the one that failed");
  assert.equal(converts[0].status, undefined);
  assert.equal(converts[1].attributes.from_version, "v9");
  assert.equal(converts[1].status?.code, 2);
  assert.equal(converts[1].exceptions.length, 1);
  assert.ok(converts.every((c) => c.ended));

  const missing = await fixture.convert(review("u5", "v2", [widget("v1", 0)]), "nope.example");
  assert.equal(missing.response.result.status, "Failure");
  const miss = tracer.named(REVIEW_SPAN)[1];
  assert.equal(miss.attributes.target, "nope.example");
  assert.equal(miss.attributes.result, "not_registered");
  assert.match(miss.status?.message ?? "", /no conversion plan registered/);
  assert.equal(tracer.named(CONVERT_SPAN).length, 2, "nothing converted: no Convert span");

  const notJson = await fixture.post("{", T);
  assert.equal(notJson.status, 400);
  await notJson.body?.cancel();
  const rejected = tracer.named(REVIEW_SPAN)[2];
  assert.equal(rejected.attributes["http.response.status_code"], 400);
  assert.equal(rejected.status?.code, 2);
});
