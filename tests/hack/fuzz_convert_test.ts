/**
 * The review fuzzer: its checker catches each kind of broken answer, its generator is reproducible,
 * and a short run against the real listener (in its own process, over TLS) finds no crash and no
 * violation. The long run (`--count 1000000`) is documented in docs/operations.md.
 */
import assert from "node:assert/strict";
import { kep598Violations } from "../../hack/_kep598.ts";
import { fuzzReview, MUTATIONS } from "../../hack/_fuzz_reviews.ts";
import { fuzz } from "../../hack/fuzz_convert.ts";
import { syntheticReview } from "../../src/webhook/convert/_synthetic.ts";
import type { JsonObject } from "../../src/lib/json.ts";

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const ok = (body: unknown, status = 200, head = "HTTP/1.1 200 OK") => ({
  status,
  head,
  body: enc(body),
});

function goodAnswer(review: JsonObject): JsonObject {
  const req = review.request as JsonObject;
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    response: {
      uid: req.uid,
      result: { status: "Success" },
      convertedObjects: structuredClone(req.objects as JsonObject[]).map((o) => ({
        ...o,
        apiVersion: req.desiredAPIVersion,
      })),
    },
  };
}

Deno.test("kep598: a correct Success and a correct Failure pass", () => {
  const review = syntheticReview(2, { to: "v2" });
  assert.deepEqual(kep598Violations(enc(review), ok(goodAnswer(review))), []);
  const failure = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    response: {
      uid: (review.request as JsonObject).uid,
      result: { status: "Failure", message: "no" },
    },
  };
  assert.deepEqual(kep598Violations(enc(review), ok(failure)), []);
});

Deno.test("kep598: each broken answer is caught", () => {
  const review = syntheticReview(2, { to: "v2" });
  const mutate = (f: (a: JsonObject) => void) => {
    const a = goodAnswer(review);
    f(a);
    return kep598Violations(enc(review), ok(a));
  };
  const resp = (a: JsonObject) => a.response as JsonObject;
  const objs = (a: JsonObject) => resp(a).convertedObjects as JsonObject[];
  assert.match(mutate((a) => resp(a).uid = "other").join(), /≠ request uid/);
  assert.match(mutate((a) => objs(a).pop()).join(), /Success with 1 objects for 2 sent/);
  assert.match(mutate((a) => objs(a)[0].apiVersion = "x/v1").join(), /apiVersion not the desired/);
  assert.match(mutate((a) => objs(a)[1].kind = "Gadget").join(), /kind changed/);
  assert.match(
    mutate((a) => (objs(a)[0].metadata as JsonObject).name = "renamed").join(),
    /metadata changed beyond labels and annotations/,
  );
  assert.deepEqual(
    mutate((a) => (objs(a)[0].metadata as JsonObject).labels = { changed: "yes" }),
    [],
  );
  assert.match(mutate((a) => a.apiVersion = "v9").join(), /answer apiVersion/);
  assert.match(
    mutate((a) => resp(a).result = { status: "Failure" }).join(),
    /Failure without a message/,
  );
  assert.match(
    kep598Violations(enc(review), { status: 500, head: "", body: new Uint8Array() }).join(),
    /HTTP 500/,
  );
  assert.match(
    kep598Violations(enc(review), { status: 400, head: "", body: new Uint8Array() }).join(),
    /HTTP 400 for a well-formed/,
  );
  assert.match(
    kep598Violations(enc(review), { status: 429, head: "HTTP/1.1 429", body: new Uint8Array() })
      .join(),
    /429 without Retry-After/,
  );
});

Deno.test("kep598: a Success for an object whose metadata is not an object is a violation", () => {
  const review = syntheticReview(1, { to: "v2" });
  const answer = goodAnswer(review);
  ((review.request as JsonObject).objects as JsonObject[])[0].metadata = "a string";
  ((answer.response as JsonObject).convertedObjects as JsonObject[])[0].metadata = {};
  assert.match(kep598Violations(enc(review), ok(answer)).join(), /repaired silently/);
});

Deno.test("fuzz reviews: the same seed and index give the same bytes; every kind is made", () => {
  assert.deepEqual(fuzzReview(5, 123), fuzzReview(5, 123));
  assert.notDeepEqual(fuzzReview(5, 123).bytes, fuzzReview(6, 123).bytes);
  const kinds = new Set(Array.from({ length: 2000 }, (_, i) => fuzzReview(1, i).kind));
  assert.deepEqual([...kinds].sort(), Object.keys(MUTATIONS).sort());
});

Deno.test("fuzz: 2,000 reviews against the real listener: no crash, no violation", async () => {
  const report = await fuzz({ count: 2000, seed: 7, concurrency: 4, batch: 250, maxSeconds: 300 });
  assert.deepEqual(report.samples, []);
  assert.equal(report.reviews, 2000);
  assert.equal(report.crashes, 0);
  assert.equal(report.violations, 0);
  assert.equal(report.livenessChecks, 8);
  assert.ok((report.byStatus["200"] ?? 0) > 0 && (report.byStatus["400"] ?? 0) > 0);
});
