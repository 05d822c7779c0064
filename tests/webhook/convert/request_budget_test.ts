/**
 * The request budget through the answer table, over bytes: a review whose one object is a
 * `forEach` × `cel` sized to take minutes ends at `--request-timeout` with a `timeout` Failure that
 * says which budget ran out and where; a review of many objects shares one total CEL cost (the
 * real 100,000,000 units, of cheap units). The clock is injected, so these do not depend on the
 * machine's speed; one more runs over TLS with the real clock, with an object that takes minutes
 * unbudgeted and a budget far above the time its body takes to parse.
 */
import assert from "node:assert/strict";
import { CEL_COST_LIMIT } from "../../../src/engine/cel_env.ts";
import { convertObject, type JsonObject } from "../../../src/engine/mod.ts";
import { REQUEST_CEL_COST_LIMIT, RequestBudget } from "../../../src/engine/request_budget.ts";
import { compileConfig } from "../../../src/webhook/compile.ts";
import {
  type ConversionReviewResponse,
  convertContext,
  convertReviewBytes,
} from "../../../src/webhook/convert/mod.ts";
import { PlanRegistry } from "../../../src/webhook/registry.ts";
import { captureLog, startConversion } from "../_helpers.ts";

const GROUP = "budget.example.com";
const TARGET = `slows.${GROUP}`;

// One CEL evaluation per element, quadratic in the length of `l`.
const QUADRATIC = '{"n": object.l.filter(a, object.l.exists(b, b > a + 1000.0)).size()}';
// One evaluation per object, of ~800,000 units that cost little time: 40 lazy concatenations of
// `spec.l`, each charged the size of its operands.
const CONCAT = `{"spec.n": size(${Array(40).fill("object.spec.l").join(" + ")})}`;

function crd(): JsonObject {
  const item = {
    type: "object",
    properties: { l: { type: "array", items: { type: "number" } }, n: { type: "integer" } },
  };
  const schema = {
    type: "object",
    properties: {
      metadata: { type: "object" },
      spec: {
        type: "object",
        properties: {
          items: { type: "array", items: item },
          l: { type: "array", items: { type: "number" } },
          n: { type: "integer" },
        },
      },
    },
  };
  const version = (name: string, storage: boolean) => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: schema },
  });
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: TARGET, generation: 1 },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { kind: "Slow", plural: "slows" },
      versions: [version("v0", false), version("v1", false), version("v2", true)],
    },
  };
}

function compiled() {
  const cel = {
    strategy: "CEL",
    cel: { hubPaths: ["n"], spokePaths: ["n"], hubToSpoke: QUADRATIC, spokeToHub: QUADRATIC },
    acknowledgeLossy: true,
    reason: "computed",
  };
  const result = compileConfig("crd", {
    metadata: { name: "slows", generation: 1 },
    spec: {
      targetCRD: { name: TARGET },
      hubVersion: "v2",
      spokes: [{
        version: "v1",
        rules: [{
          strategy: "ForEach",
          forEach: { hubItemsPath: "spec.items", spokeItemsPath: "spec.items", rules: [cel] },
          acknowledgeLossy: true,
          reason: "computed",
        }],
      }, {
        version: "v0",
        rules: [{
          strategy: "CEL",
          cel: {
            hubPaths: ["spec.n"],
            spokePaths: ["spec.n"],
            hubToSpoke: CONCAT,
            spokeToHub: CONCAT,
          },
          acknowledgeLossy: true,
          reason: "computed",
        }],
      }],
    },
  }, crd());
  assert.ok(result.ok, result.ok ? "" : result.message);
  return result;
}

function registry(): PlanRegistry {
  const r = new PlanRegistry();
  r.install(compiled(), new Date());
  return r;
}

/** A review of `objects` Slows at v1, each with `count` elements of `length` numbers, to v2. */
function reviewBytes(objects: number, count: number, length = 100): Uint8Array {
  const l = Array.from({ length }, (_, i) => i);
  const slow = (i: number) => ({
    apiVersion: `${GROUP}/v1`,
    kind: "Slow",
    metadata: { name: `s-${i}`, namespace: "default" },
    spec: { items: Array.from({ length: count }, () => ({ l, n: 0 })) },
  });
  return new TextEncoder().encode(JSON.stringify({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: {
      uid: "uid-slow",
      desiredAPIVersion: `${GROUP}/v2`,
      objects: Array.from({ length: objects }, (_, i) => slow(i)),
    },
  }));
}

function answer(body: Uint8Array): ConversionReviewResponse {
  return JSON.parse(new TextDecoder().decode(body)) as ConversionReviewResponse;
}

Deno.test("a forEach × cel object that would run for minutes ends at the request budget with a timeout Failure", () => {
  // A clock that advances 1 ms per reading: the 50 ms budget runs out after ~50 readings, each
  // CLOCK_CHECK_UNITS units of CEL apart — a few of the 10,000 elements (~90,000 units each).
  let now = 0;
  const log = captureLog();
  const ctx = convertContext({
    registry: registry(),
    logger: log,
    requestTimeoutMs: 50,
    clock: () => (now += 1),
  });
  const out = convertReviewBytes(ctx, TARGET, reviewBytes(2, 10_000));
  assert.equal(out.status, 200);
  assert.equal(out.result, "timeout");
  assert.equal(out.direction, "v1->v2");
  const review = answer(out.body);
  assert.equal(review.response.uid, "uid-slow");
  assert.equal(review.response.result.status, "Failure");
  assert.equal(review.response.convertedObjects, undefined);
  assert.match(
    review.response.result.message ?? "",
    /^converting v1 -> v2: spoke→hub \(v2↔v1\): spec\.items\[\d\]: CEL spokeToHub: request time budget of 0\.05s exceeded in object 1 of 2; raise --request-timeout or send smaller batches$/,
  );
  // It stopped at the budget: ~50 clock readings, not one per element.
  assert.ok(now < 100, `${now} clock readings`);
});

Deno.test("the same review converts when the budget suffices; the budget before each object still applies", () => {
  let now = 0;
  const ctx = convertContext({
    registry: registry(),
    logger: captureLog(),
    requestTimeoutMs: 1_000_000,
    clock: () => (now += 1),
  });
  const ok = convertReviewBytes(ctx, TARGET, reviewBytes(2, 3));
  assert.equal(ok.result, "success");
  assert.equal(answer(ok.body).response.convertedObjects?.length, 2);

  // 10 ms per reading, a 25 ms budget, objects too cheap to read the clock inside: the budget is
  // spent between objects (each object reads the clock once).
  let t = 0;
  const between = convertContext({
    registry: registry(),
    logger: captureLog(),
    requestTimeoutMs: 25,
    clock: () => (t += 10),
  });
  const out = convertReviewBytes(between, TARGET, reviewBytes(5, 1, 5));
  assert.equal(out.result, "timeout");
  assert.match(
    answer(out.body).response.result.message ?? "",
    /^request time budget of 0\.025s exceeded after \d of 5 objects; raise --request-timeout or send smaller batches$/,
  );
});

Deno.test("over TLS with the real clock: the slow review ends at a 1.5 s budget and the server keeps serving", async () => {
  await using f = await startConversion({ requestTimeoutMs: 1500 });
  f.registry.install(compiled(), new Date());
  // Minutes of CEL without the budget (10,000 elements of ~90,000 units each).
  const res = await f.post(reviewBytes(1, 10_000), TARGET);
  assert.equal(res.status, 200);
  const review = await res.json() as ConversionReviewResponse;
  assert.equal(review.response.result.status, "Failure");
  assert.match(
    review.response.result.message ?? "",
    /: request time budget of 1\.5s exceeded in object 1 of 1; raise --request-timeout or send smaller batches$/,
  );
  await f.assertServing();
});

Deno.test("the total CEL cost is shared by the objects of a review: the object that spends it fails the review", () => {
  const r = registry();
  const ctx = convertContext({ registry: r, logger: captureLog() });
  const l = Array.from({ length: 1000 }, (_, i) => i);
  const sum = (i: number): JsonObject => ({
    apiVersion: `${GROUP}/v0`,
    kind: "Slow",
    metadata: { name: `s-${i}`, namespace: "default" },
    spec: { l, n: 0 },
  });
  // What one object's evaluation costs, through an untrippable budget.
  const router = r.get(TARGET)!.router!;
  const probe = new RequestBudget({ clock: () => 0, timeoutMs: 1, celCostLimit: Number.MAX_VALUE });
  probe.run(() => convertObject(router, sum(0), `${GROUP}/v2`));
  const perObject = probe.celUsed;
  assert.ok(perObject > 500_000 && perObject < CEL_COST_LIMIT, `${perObject}`);
  const fits = Math.floor(REQUEST_CEL_COST_LIMIT / perObject);
  const n = fits + 3;
  const bytes = new TextEncoder().encode(JSON.stringify({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: {
      uid: "uid-sum",
      desiredAPIVersion: `${GROUP}/v2`,
      objects: Array.from({ length: n }, (_, i) => sum(i)),
    },
  }));
  const out = convertReviewBytes(ctx, TARGET, bytes);
  assert.equal(out.result, "timeout");
  assert.equal(
    answer(out.body).response.result.message,
    `converting v0 -> v2: spoke→hub (v2↔v0): CEL spokeToHub: total CEL cost of the request ` +
      `exceeded the limit of ${REQUEST_CEL_COST_LIMIT} units in object ${fits + 1} of ${n}; ` +
      "simplify the CEL expressions, bound their input or send smaller batches",
  );
  // One object fewer than fits converts.
  const ok = convertReviewBytes(
    ctx,
    TARGET,
    new TextEncoder().encode(JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "ConversionReview",
      request: {
        uid: "uid-sum-ok",
        desiredAPIVersion: `${GROUP}/v2`,
        objects: Array.from({ length: fits }, (_, i) => sum(i)),
      },
    })),
  );
  assert.equal(ok.result, "success");
  assert.deepEqual(answer(ok.body).response.convertedObjects?.[0].spec, { l, n: 40_000 });
});
