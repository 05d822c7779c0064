/**
 * `/convert/<target>` over the real TLS listener: every row of
 * docs/design/webhook.md#the-convert-answer-table in the table's order, each followed by a good
 * request on the same server; KEP-598 properties of a success; direction labels, the lossy
 * counter, timeout and panic handling.
 */
import assert from "node:assert/strict";
import { ConversionError, type JsonObject, type Router } from "../../../src/engine/mod.ts";
import { DEFAULT_MAX_JSON_DEPTH } from "../../../src/webhook/convert/mod.ts";
import type { RegistryEntry } from "../../../src/webhook/registry.ts";
import {
  apiVersion,
  type ConversionFixture,
  review,
  sampleValue,
  startConversion,
  SYNTHETIC_TARGET,
  widget,
} from "../_helpers.ts";

const T = SYNTHETIC_TARGET;

async function reviewCount(
  f: { promRegistry: { metrics(): Promise<string> } },
  result: string,
): Promise<number> {
  const text = await f.promRegistry.metrics();
  return sampleValue(text, "dco_webhook_conversion_review_requests_total", {
    target: T,
    result,
  }) ?? 0;
}

// --- the answer table's rows, in order ----------------------------------------------------------

Deno.test("non-POST is 405 and not counted; the server keeps serving", async () => {
  await using f = await startConversion();
  for (const method of ["GET", "PUT", "DELETE"]) {
    const res = await fetch(`${f.base}/convert/${T}`, { method, client: f.client });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "POST");
    await res.body?.cancel();
  }
  const text = await f.promRegistry.metrics();
  assert.equal(
    sampleValue(text, "dco_webhook_conversion_review_requests_total", { target: T }),
    undefined,
  );
  await f.assertServing();
});

Deno.test("a 10 MB body over the limit is a too_large Failure with the uid recovered", async () => {
  await using f = await startConversion({ maxRequestBytes: 64 * 1024 });
  const head = JSON.stringify(review("uid-too-large", "v2", [])).replace(/\]\}\}$/, "");
  const filler = JSON.stringify(widget("v1", 1));
  const parts = [head];
  let size = head.length;
  while (size < 10 * 1024 * 1024) {
    parts.push(size === head.length ? filler : "," + filler);
    size += filler.length + 1;
  }
  parts.push("]}}");
  const body = parts.join("");
  const out = await f.convert(body);
  assert.equal(out.apiVersion, "apiextensions.k8s.io/v1");
  assert.equal(out.kind, "ConversionReview");
  assert.equal(out.response.uid, "uid-too-large");
  assert.equal(out.response.result.status, "Failure");
  assert.match(
    out.response.result.message ?? "",
    /exceeds the 65536-byte limit.*--max-request-bytes/,
  );
  assert.equal(out.response.convertedObjects, undefined);
  assert.equal(await reviewCount(f, "too_large"), 1);
  await f.assertServing();
});

Deno.test("a streamed (chunked) body over the limit is too_large as well", async () => {
  await using f = await startConversion({ maxRequestBytes: 4096 });
  const text = JSON.stringify(
    review("uid-chunked", "v2", Array.from({ length: 50 }, (_, i) => widget("v1", i))),
  );
  const bytes = new TextEncoder().encode(text);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < bytes.length; i += 1000) c.enqueue(bytes.subarray(i, i + 1000));
      c.close();
    },
  });
  const out = await f.convert(stream);
  assert.equal(out.response.result.status, "Failure");
  assert.equal(out.response.uid, "uid-chunked");
  assert.equal(await reviewCount(f, "too_large"), 1);
  await f.assertServing();
});

/** POSTs `body` and asserts a plain-text 400 whose text matches `message`. */
async function assertBadRequest(f: ConversionFixture, body: string | JsonObject, message: RegExp) {
  const res = await f.post(body);
  assert.equal(res.status, 400, JSON.stringify(body).slice(0, 60));
  assert.match(await res.text(), message);
}

Deno.test("a body that is not JSON is 400 bad_request", async () => {
  await using f = await startConversion();
  await assertBadRequest(f, "{not json", /not JSON/);
  assert.equal(await reviewCount(f, "bad_request"), 1);
  await f.assertServing();
});

Deno.test("a JSON body that is not a v1 (or v1beta1) ConversionReview is 400 bad_request", async () => {
  await using f = await startConversion();
  const wrong = [
    { ...review("u", "v2", []), kind: "AdmissionReview" },
    { ...review("u", "v2", []), apiVersion: "apiextensions.k8s.io/v2" },
    { ...review("u", "v2", []), apiVersion: "v1beta1" },
    [review("u", "v2", [])],
    "a string",
  ];
  for (const body of wrong) {
    await assertBadRequest(
      f,
      JSON.stringify(body),
      /not a apiextensions.k8s.io\/v1 \(or v1beta1\) ConversionReview/,
    );
  }
  assert.equal(await reviewCount(f, "bad_request"), wrong.length);
  await f.assertServing();
});

/** The review `review(...)` builds, as `apiextensions.k8s.io/v1beta1`. */
function v1beta1(body: JsonObject): JsonObject {
  return { ...body, apiVersion: "apiextensions.k8s.io/v1beta1" };
}

Deno.test("a v1beta1 ConversionReview is answered as v1beta1, same shape as v1", async () => {
  await using f = await startConversion();
  const objects = [widget("v1", 0), widget("v1", 1)];
  const v1 = await f.convert(review("same", "v2", objects));
  const beta = await f.convert(v1beta1(review("same", "v2", objects)));
  assert.equal(v1.apiVersion, "apiextensions.k8s.io/v1");
  assert.equal(beta.apiVersion, "apiextensions.k8s.io/v1beta1", "the request's apiVersion");
  assert.deepEqual({ ...beta, apiVersion: v1.apiVersion }, v1, "identical apart from apiVersion");
  assert.equal(beta.response.result.status, "Success");
  assert.equal(await reviewCount(f, "success"), 2);

  // Failures answer at the request's apiVersion too: a conversion error, a registry miss, and
  // bodies that are never parsed (too deep).
  const failures: [JsonObject | string, string | undefined][] = [
    [v1beta1(review("bad-object", "v2", [{ kind: "Widget" }])), T],
    [v1beta1(review("miss", "v2", [])), "nope.example.com"],
    [
      JSON.stringify(v1beta1(review("deep", "v2", []))).replace(
        /"objects":\[\]/,
        `"objects":[{"spec":${"[".repeat(200)}${"]".repeat(200)}}]`,
      ),
      T,
    ],
  ];
  for (const [body, target] of failures) {
    const out = await f.convert(body, target);
    assert.equal(out.apiVersion, "apiextensions.k8s.io/v1beta1", JSON.stringify(out));
    assert.equal(out.kind, "ConversionReview");
    assert.equal(out.response.result.status, "Failure");
    assert.notEqual(out.response.uid, "");
  }
  await f.assertServing();
});

Deno.test("a v1beta1 review over the body limit is answered as v1beta1", async () => {
  await using f = await startConversion({ maxRequestBytes: 4096 });
  const objects = Array.from({ length: 50 }, (_, i) => widget("v1", i));
  const out = await f.convert(v1beta1(review("beta-too-large", "v2", objects)));
  assert.equal(out.apiVersion, "apiextensions.k8s.io/v1beta1");
  assert.equal(out.response.uid, "beta-too-large");
  assert.equal(out.response.result.status, "Failure");
  assert.equal(await reviewCount(f, "too_large"), 1);
});

Deno.test("a ConversionReview without request is 400 bad_request", async () => {
  await using f = await startConversion();
  const noRequest = { apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview" };
  await assertBadRequest(f, noRequest, /no request/);
  assert.equal(await reviewCount(f, "bad_request"), 1);
  await f.assertServing();
});

Deno.test("10,000-deep nesting is a bad_request Failure, not a crash", async () => {
  await using f = await startConversion();
  const deep = "[".repeat(10_000) + "]".repeat(10_000);
  const body = JSON.stringify(review("uid-deep", "v2", [])).replace(
    /"objects":\[\]/,
    `"objects":[{"apiVersion":"${apiVersion("v1")}","spec":{"x":${deep}}}]`,
  );
  const out = await f.convert(body);
  assert.equal(out.response.result.status, "Failure");
  assert.equal(out.response.uid, "uid-deep");
  assert.match(out.response.result.message ?? "", /nesting exceeds the 100-level limit/);
  assert.equal(await reviewCount(f, "bad_request"), 1);
  // Bare deep garbage (no review at all) is answered the same way, with an empty uid.
  const bare = await f.convert("{".repeat(10_000));
  assert.equal(bare.response.uid, "");
  assert.equal(bare.response.result.status, "Failure");
  await f.assertServing();
});

Deno.test("nesting up to the limit converts", async () => {
  await using f = await startConversion();
  // Envelope: review { request { objects [ object { spec { ... = 5 levels before the value.
  let nested: unknown = 1;
  for (let i = 0; i < DEFAULT_MAX_JSON_DEPTH - 5; i++) nested = { n: nested };
  const out = await f.convert(review("uid-90", "v2", [widget("v1", 1, {
    spec: { storageSize: 1, deep: nested } as JsonObject,
  })]));
  assert.equal(out.response.result.status, "Success", out.response.result.message ?? "");
});

Deno.test("an unknown target is a not_registered Failure with the registry-miss message", async () => {
  await using f = await startConversion();
  const out = await f.convert(review("uid-miss", "v2", [widget("v1", 0)]), "gadgets.example.com");
  assert.equal(out.response.uid, "uid-miss");
  assert.equal(out.response.result.status, "Failure");
  assert.match(
    out.response.result.message ?? "",
    /^no conversion plan registered for XRD\/CRD "gadgets\.example\.com" on this replica; check .* or retry shortly$/,
  );
  const text = await f.promRegistry.metrics();
  assert.equal(
    sampleValue(text, "dco_webhook_conversion_review_requests_total", {
      target: "(unregistered)",
      result: "not_registered",
    }),
    1,
    "an unknown path must not create a series of its own",
  );
  assert.doesNotMatch(text, /target="gadgets\.example\.com"/);
  await f.assertServing();
});

Deno.test("an error-only entry is not_registered and names the kind and the compile error", async () => {
  await using f = await startConversion();
  f.registry.install({
    ok: false,
    target: "things.example.com",
    kind: "xrd",
    config: "things",
    reason: "XRDNotFound",
    message: 'XRD "things.example.com" not found',
  }, new Date());
  const out = await f.convert(review("uid-ph", "v2", [widget("v1", 0)]), "things.example.com");
  assert.match(
    out.response.result.message ?? "",
    /^no conversion plan registered for XRD "things\.example\.com" on this replica \(last compile error: XRD "things\.example\.com" not found\)/,
  );
  await f.assertServing();
});

Deno.test("the request budget is checked before each object: timeout after k of n", async () => {
  // A clock that advances 10 ms per reading: the budget of 25 ms runs out mid-batch.
  let now = 0;
  await using f = await startConversion({ requestTimeoutMs: 25, clock: () => (now += 10) });
  const out = await f.convert(
    review("uid-slow", "v2", [0, 1, 2, 3, 4].map((i) => widget("v1", i))),
  );
  assert.equal(out.response.uid, "uid-slow");
  assert.equal(out.response.result.status, "Failure");
  assert.match(
    out.response.result.message ?? "",
    /^request time budget of 0\.025s exceeded after \d of 5 objects; raise --request-timeout or send smaller batches$/,
  );
  assert.equal(out.response.convertedObjects, undefined);
  assert.equal(await reviewCount(f, "timeout"), 1);
  await f.assertServing();
});

Deno.test("objects that do not decode are bad_request Failures", async () => {
  await using f = await startConversion();
  const noVersion = widget("v1", 0);
  delete noVersion.apiVersion;
  const cases: [unknown[], RegExp][] = [
    [[noVersion], /^decoding object 0: apiVersion is missing$/],
    [[widget("v1", 0), "a string"], /^decoding object 1: not a JSON object$/],
    [[widget("v1", 0), [1, 2]], /^decoding object 1: not a JSON object$/],
    [[{ ...widget("v1", 0), apiVersion: 7 }], /^decoding object 0: apiVersion is missing$/],
    [[{ ...widget("v1", 0), kind: [1] }], /^decoding object 0: kind is an array, not a string$/],
    // Never repaired silently: a string metadata would otherwise come back as {}.
    [[{ ...widget("v1", 0), metadata: "w-0" }], /^decoding object 0: metadata is a string, not/],
    [[{ ...widget("v1", 0), metadata: [] }], /^decoding object 0: metadata is an array, not/],
    [
      [widget("v1", 0), widget("v1", 1, { metadata: { name: "w-1", labels: { n: 1 } } })],
      /^decoding object 1 \(w-1\): metadata\.labels\["n"\] is a number, not a string$/,
    ],
    [
      [widget("v1", 0, { metadata: { name: "w", namespace: "ns", annotations: "x" } })],
      /^decoding object 0 \(ns\/w\): metadata\.annotations is a string, not a map of strings$/,
    ],
    [
      [widget("v1", 0, { metadata: { name: "w", annotations: { a: null } } })],
      /^decoding object 0 \(w\): metadata\.annotations\["a"\] is null, not a string$/,
    ],
  ];
  for (const [objects, message] of cases) {
    const out = await f.convert(review("uid-decode", "v2", objects));
    assert.equal(out.response.uid, "uid-decode");
    assert.equal(out.response.result.status, "Failure");
    assert.match(out.response.result.message ?? "", message);
    assert.equal(out.response.convertedObjects, undefined);
  }
  const noDesired = review("uid-nd", "v2", []);
  delete (noDesired.request as JsonObject).desiredAPIVersion;
  const out = await f.convert(noDesired);
  assert.match(out.response.result.message ?? "", /desiredAPIVersion is missing/);
  assert.equal(await reviewCount(f, "bad_request"), cases.length + 1);
  await f.assertServing();
});

Deno.test("a conversion error is an error Failure naming the direction", async () => {
  await using f = await startConversion();
  const out = await f.convert(review("uid-err", "v2", [widget("v1", 0), widget("v9", 1)]));
  assert.equal(out.response.uid, "uid-err");
  assert.equal(out.response.result.status, "Failure");
  assert.match(
    out.response.result.message ?? "",
    /^converting v9 -> v2: no compiled plan for version "v9"/,
  );
  assert.equal(out.response.convertedObjects, undefined);
  const text = await f.promRegistry.metrics();
  assert.equal(await reviewCount(f, "error"), 1);
  const objects = (result: string, from: string) =>
    sampleValue(text, "dco_webhook_conversion_objects_total", {
      target: T,
      from_version: from,
      to_version: "v2",
      result,
    });
  assert.equal(objects("success", "v1"), 1);
  assert.equal(objects("error", "v9"), 1);
  await f.assertServing();
});

/** The synthetic target's registry entry, as a server installs it. */
async function syntheticEntry(): Promise<RegistryEntry> {
  await using f = await startConversion();
  const e = f.registry.get(T);
  assert.ok(e !== undefined);
  return e;
}

/** A router whose every conversion throws `error`. */
function throwingRouter(error: Error): Router {
  return {
    hubVersion: "v2",
    route(): JsonObject {
      throw error;
    },
  } as unknown as Router;
}

Deno.test("an unexpected exception is a panic Failure, counted and logged with target and uid", async () => {
  const broken = throwingRouter(
    new TypeError("cannot read properties of undefined (reading 'spec')"),
  );
  const entry = { ...(await syntheticEntry()), router: broken };
  await using f = await startConversion({ lookup: { get: (t) => t === T ? entry : undefined } });
  const out = await f.convert(review("uid-panic", "v2", [widget("v1", 0)]));
  assert.equal(out.response.uid, "uid-panic");
  assert.equal(out.response.result.status, "Failure");
  assert.match(out.response.result.message ?? "", /^internal error: cannot read properties/);
  const text = await f.promRegistry.metrics();
  assert.equal(sampleValue(text, "dco_webhook_conversion_panics_total", { target: T }), 1);
  assert.equal(await reviewCount(f, "panic"), 1);
  const line = f.log.lines.find((l) => l.level === "error");
  assert.ok(line !== undefined, "the panic is logged");
  assert.equal(line.fields.target, T);
  assert.equal(line.fields.uid, "uid-panic");
  assert.ok(line.fields.error instanceof TypeError, "the error (with its stack) is logged");
  // The same replica still answers other targets.
  const miss = await f.convert(review("after", "v2", []), "other.example.com");
  assert.equal(miss.response.result.status, "Failure");
});

Deno.test("a ConversionError from the engine is an error, not a panic", async () => {
  const failing = throwingRouter(new ConversionError('spec.size: value "XL" has no mapping'));
  const entry = { ...(await syntheticEntry()), router: failing };
  await using f = await startConversion({ lookup: { get: () => entry } });
  const out = await f.convert(review("uid-ce", "v2", [widget("v1", 0)]));
  assert.equal(
    out.response.result.message,
    'converting v1 -> v2: spec.size: value "XL" has no mapping',
  );
  assert.equal(await reviewCount(f, "error"), 1);
  assert.equal(await reviewCount(f, "panic"), 0);
});

// --- success --------------------------------------------------------------------------------------

Deno.test("success follows KEP-598: uid, count, order, apiVersion, metadata", async () => {
  await using f = await startConversion();
  const bare = { apiVersion: apiVersion("v1"), kind: "Widget", spec: { storageSize: 9 } };
  const input = [widget("v1", 0), widget("v1", 1), bare, widget("v2", 3), widget("v1", 4)];
  const out = await f.convert(review("uid-ok", "v2", input));
  assert.equal(out.apiVersion, "apiextensions.k8s.io/v1");
  assert.equal(out.kind, "ConversionReview");
  assert.equal(out.response.uid, "uid-ok");
  assert.deepEqual(out.response.result, { status: "Success" });
  const converted = out.response.convertedObjects ?? [];
  assert.equal(converted.length, input.length);
  for (const [i, o] of converted.entries()) {
    assert.equal(o.apiVersion, apiVersion("v2"));
    assert.equal(o.kind, "Widget");
    assert.ok(typeof o.metadata === "object" && o.metadata !== null, `object ${i} has metadata`);
  }
  assert.deepEqual(converted.map((o) => (o.metadata as JsonObject).name), [
    "w-0",
    "w-1",
    undefined,
    "w-3",
    "w-4",
  ]);
  assert.deepEqual(converted[2].metadata, {}, "a metadata-less fragment gets {}");
  assert.deepEqual(converted[1].metadata, widget("v1", 1).metadata);
  assert.deepEqual(converted[0].spec, { storageGB: 0, region: "eu", field0: 0 });
  assert.deepEqual(converted[3].spec, widget("v2", 3).spec, "same version passes through");
  assert.equal(await reviewCount(f, "success"), 1);
  const text = await f.promRegistry.metrics();
  assert.equal(sampleValue(text, "dco_webhook_conversion_batch_size_count", { target: T }), 1);
  assert.equal(sampleValue(text, "dco_webhook_conversion_batch_size_sum", { target: T }), 5);
});

Deno.test("an empty object list succeeds with an empty convertedObjects", async () => {
  await using f = await startConversion();
  const out = await f.convert(review("uid-empty", "v1", []));
  assert.deepEqual(out.response, {
    uid: "uid-empty",
    result: { status: "Success" },
    convertedObjects: [],
  });
});

Deno.test("the query the apiserver appends (?timeout=30s) does not change the target", async () => {
  await using f = await startConversion();
  const out = await f.convert(review("uid-q", "v2", [widget("v1", 0)]), `${T}?timeout=30s`);
  assert.equal(out.response.result.status, "Success");
});

/** `dco_webhook_lossy_conversion_total` of the synthetic target in one direction. */
function lossyCount(exposition: string, direction: string): number | undefined {
  return sampleValue(exposition, "dco_webhook_lossy_conversion_total", { target: T, direction });
}

// --- labels and counters --------------------------------------------------------------------------

Deno.test("direction label: exact for one direction, mixed for several, per-object exact", async () => {
  await using f = await startConversion();
  await f.convert(review("one", "v2", [widget("v1", 0), widget("v1", 1)]));
  await f.convert(review("two", "v2", [widget("v1", 0), widget("v1alpha1", 1), widget("v2", 2)]));
  await f.convert(review("miss", "v2", []), "nothing.example.com");
  const text = await f.promRegistry.metrics();
  const count = (of: "review" | "object", direction: string, target = T, result = "success") =>
    sampleValue(text, `dco_webhook_conversion_${of}_duration_seconds_count`, {
      target,
      direction,
      result,
    });
  assert.equal(count("review", "v1->v2"), 1);
  assert.equal(count("review", "mixed"), 1);
  assert.equal(count("review", "unknown", "(unregistered)", "not_registered"), 1);
  assert.equal(count("object", "v1->v2"), 3);
  assert.equal(count("object", "v1alpha1->v2"), 1);
  assert.equal(count("object", "v2->v2"), 1);
});

Deno.test("lossy counter: statically lossy hub/spoke directions only, per object attempted", async () => {
  await using f = await startConversion();
  // v1alpha1 → v2 (hub) drops legacyNote: spoke_to_hub is lossy.
  await f.convert(review("a", "v2", [widget("v1alpha1", 0), widget("v1alpha1", 1)]));
  // v1 ↔ v2 is lossless both ways; v2 → v1alpha1 is lossless; v1 → v1alpha1 is spoke→spoke.
  await f.convert(review("b", "v2", [widget("v1", 0)]));
  await f.convert(review("c", "v1alpha1", [widget("v2", 0)]));
  await f.convert(review("d", "v1alpha1", [widget("v1", 0)]));
  const text = await f.promRegistry.metrics();
  assert.equal(lossyCount(text, "spoke_to_hub"), 2);
  assert.equal(lossyCount(text, "hub_to_spoke"), undefined);
});

Deno.test("the lossy counter counts an attempted object even when its conversion fails", async () => {
  await using f = await startConversion();
  const bad = widget("v1alpha1", 0);
  (bad.spec as JsonObject).storageSize = { not: "an integer" };
  await f.convert(review("lossy-fail", "v2", [widget("v1alpha1", 1), bad]));
  const text = await f.promRegistry.metrics();
  assert.equal(lossyCount(text, "spoke_to_hub"), 2);
});

Deno.test("metadata without labels or annotations, or with null maps, still converts", async () => {
  await using f = await startConversion();
  const objects = [
    widget("v1", 0, { metadata: { name: "a" } }),
    widget("v1", 1, { metadata: { name: "b", labels: null, annotations: {} } }),
  ];
  const out = await f.convert(review("uid-meta", "v2", objects));
  assert.equal(out.response.result.status, "Success");
  assert.deepEqual(
    (out.response.convertedObjects ?? []).map((o) => (o as JsonObject).metadata),
    [{ name: "a" }, { name: "b", labels: null, annotations: {} }],
  );
});
