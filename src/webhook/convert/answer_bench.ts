/**
 * The conversion hot path against its floor (notes/performance-floor.md), `deno task bench`.
 *
 * One group per payload — 1, 10 and 100 synthetic Widgets of ~2 KB and ~10 KB (an 8 KB
 * last-applied annotation), v1 → v2 (a rename plus 40 identity-copied fields):
 * - `floor`: bare `JSON.parse` + `JSON.stringify` of the same review text (the baseline, so deno
 *   prints the ratio);
 * - `floor (bytes)`: the same from and to bytes (decode + parse + stringify + encode), what any
 *   handler must do;
 * - `handler`: `convertReviewBytes` (nesting scan, parse, lookup, convert, stringify, encode),
 *   with the real metric set recording into a prom-client registry;
 * - `handler, no metrics`: the same without metrics, to show what they cost;
 * - `handler, v2 → v2`: the same payload at the desired version, so the engine only restamps
 *   `apiVersion` — the handler's own overhead without the conversion itself;
 * - `handler, traced`: the same as `handler` for a traced request (a `Convert` span per object
 *   under a review span); run with `OTEL_DENO=true` and a collector to measure real spans, else
 *   it measures the API's no-op spans. `handler` itself is the untraced path;
 * - `parse + convert + stringify, interpreted plans` / `compiled plans`: the engine's part of the
 *   handler alone (no nesting scan, lookup, budget or encoding), through the interpreted linker
 *   and the compiled one the registry links with (docs/design/engine.md#the-compiled-linker).
 *
 * Each payload again with one int64 beyond 2^53 per object (`storageSize`, a nanosecond-sized
 * value; group suffix `, int64`): the scan then selects the exact parse (a reviver reading each
 * number's source) and the replacer stringify. Its `floor` is the same bare parse + stringify,
 * which rounds that number.
 */
import { Registry } from "prom-client";
import { convertObject, createRouter, type JsonObject } from "../../engine/mod.ts";
import {
  SYNTHETIC_GROUP,
  SYNTHETIC_HUB,
  SYNTHETIC_TARGET,
  syntheticCompiled,
  syntheticReview,
} from "./_synthetic.ts";
import { convertContext, convertReviewBytes } from "./mod.ts";
import { WebhookMetrics } from "../metrics.ts";
import { SILENT } from "../_log.ts";
import { PlanRegistry } from "../registry.ts";
import { decodePlans } from "../plan_codec.ts";
import { contextOf, processTracer, type SpanParent } from "../../obs/tracing.ts";

const registry = new PlanRegistry();
registry.install(syntheticCompiled(), new Date());
const withMetrics = convertContext({
  registry,
  metrics: new WebhookMetrics(new Registry()),
  logger: SILENT,
});
const bare = convertContext({ registry, logger: SILENT });
const tracer = processTracer();
const reviewSpan = tracer.startSpan("bench");
const traced: SpanParent = { tracer, context: contextOf(reviewSpan) };
const encoder = new TextEncoder();
/** The registry's linking (compiled by default) against the interpreted reference. */
const compiledTarget = syntheticCompiled();
const ROUTERS = [false, true].map((compiled) =>
  [
    compiled ? "compiled plans" : "interpreted plans",
    createRouter(compiledTarget.hubVersion, decodePlans(compiledTarget.plans), {
      shareInput: true,
      compiled,
    }),
  ] as const
);
const DESIRED = `${SYNTHETIC_GROUP}/${SYNTHETIC_HUB}`;
/** A nanosecond timestamp: an int64 beyond 2^53. */
const BIG = 1764590400123456789n;
const decoder = new TextDecoder();

for (const [size, annotationBytes] of [["2KB", 0], ["10KB", 8000]] as const) {
  for (const n of [1, 10, 100]) {
    const text = JSON.stringify(syntheticReview(n, { annotationBytes }));
    const bytes = encoder.encode(text);
    const same = encoder.encode(
      JSON.stringify(syntheticReview(n, { annotationBytes, from: ["v2"] })),
    );
    const group = `${n} × ${size} (${(bytes.length / 1024).toFixed(0)} KiB)`;
    const check = convertReviewBytes(bare, SYNTHETIC_TARGET, bytes);
    if (check.result !== "success") throw new Error(`bench payload not converted: ${check.result}`);

    Deno.bench({ name: `floor ${group}`, group, baseline: true }, () => {
      JSON.stringify(JSON.parse(text));
    });
    Deno.bench({ name: `floor (bytes) ${group}`, group }, () => {
      encoder.encode(JSON.stringify(JSON.parse(decoder.decode(bytes))));
    });
    Deno.bench({ name: `handler ${group}`, group }, () => {
      convertReviewBytes(withMetrics, SYNTHETIC_TARGET, bytes);
    });
    Deno.bench({ name: `handler, traced ${group}`, group }, () => {
      convertReviewBytes(withMetrics, SYNTHETIC_TARGET, bytes, undefined, traced);
    });
    Deno.bench({ name: `handler, no metrics ${group}`, group }, () => {
      convertReviewBytes(bare, SYNTHETIC_TARGET, bytes);
    });
    Deno.bench({ name: `handler, v2 → v2 ${group}`, group }, () => {
      convertReviewBytes(withMetrics, SYNTHETIC_TARGET, same);
    });
    for (const [linking, router] of ROUTERS) {
      Deno.bench({ name: `parse + convert + stringify, ${linking} ${group}`, group }, () => {
        const review = JSON.parse(text);
        const objects = review.request.objects as JsonObject[];
        const converted = objects.map((o) => convertObject(router, o, DESIRED));
        JSON.stringify({ ...review, response: { convertedObjects: converted } });
      });
    }

    const bigText = text.replace(
      /"storageSize":(\d+)/g,
      (_, i) => `"storageSize":${BIG + BigInt(i)}`,
    );
    const bigBytes = encoder.encode(bigText);
    const bigGroup = `${group}, int64`;
    const bigCheck = decoder.decode(convertReviewBytes(bare, SYNTHETIC_TARGET, bigBytes).body);
    if (!bigCheck.includes(`"storageGB":${BIG + 10n}`)) throw new Error("int64 not kept exact");
    Deno.bench({ name: `floor ${bigGroup}`, group: bigGroup, baseline: true }, () => {
      JSON.stringify(JSON.parse(bigText));
    });
    Deno.bench({ name: `handler ${bigGroup}`, group: bigGroup }, () => {
      convertReviewBytes(withMetrics, SYNTHETIC_TARGET, bigBytes);
    });
  }
}
