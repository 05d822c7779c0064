/** SingletonArrayToObject / ObjectToSingletonArray conformance. */
import assert from "node:assert/strict";
import { describe, resource, single } from "./_checks.ts";
import { analyzePair, h2s, pairPlan, s2h } from "./_helpers.ts";
import { arr, obj, root, str } from "./_schemas.ts";

const zone = obj({ name: str() });
const s2o = (ack = false) => ({
  strategy: "SingletonArrayToObject",
  singletonArrayToObject: { hubPath: "spec.zones", spokePath: "spec.zone" },
  acknowledgeLossy: ack,
});

Deno.test("SingletonArrayToObject (maxItems 1): [{name: a}] ↔ {name: a}; [] writes nothing", () => {
  const plan = pairPlan(root({ zones: arr(zone, { maxItems: 1 }) }), root({ zone }), [s2o()]);
  assert.deepEqual(
    h2s(plan, resource({ spec: { zones: [{ name: "a" }] } })),
    resource({ spec: { zone: { name: "a" } } }),
  );
  assert.deepEqual(
    s2h(plan, resource({ spec: { zone: { name: "a" } } })),
    resource({ spec: { zones: [{ name: "a" }] } }),
  );
  const empty = h2s(plan, resource({ spec: { zones: [] } }));
  assert.deepEqual(empty, resource({}));
  assert.equal(Object.hasOwn(empty, "spec"), false, "no empty spec");
});

Deno.test("SingletonArrayToObject: maxItems 0 also counts as at most one", () => {
  const { report } = analyzePair(root({ zones: arr(zone, { maxItems: 0 }) }), root({ zone }), [
    s2o(),
  ]);
  assert.deepEqual(report.lossless, { hubToSpoke: true, spokeToHub: true });
});

Deno.test("SingletonArrayToObject: a non-array hub value writes nothing; null wraps into [null]", () => {
  const plan = pairPlan(root({ zones: arr(zone, { maxItems: 1 }) }), root({ zone }), [s2o()]);
  assert.deepEqual(h2s(plan, resource({ spec: { zones: { name: "a" } } })), resource({}));
  assert.deepEqual(s2h(plan, resource({ spec: { zone: null } })).spec, { zones: [null] });
});

Deno.test("SingletonArrayToObject without maxItems, no ack: unacknowledged-lossy hub→spoke", () => {
  const { report } = analyzePair(root({ zones: arr(zone, { maxItems: 2 }) }), root({ zone }), [
    s2o(),
  ]);
  const d = single(report.errors, "unacknowledged-lossy");
  assert.match(d.message, /hub→spoke/);
  assert.equal(report.errors.length, 1, describe(report.errors));
  const plain = analyzePair(root({ zones: arr(zone) }), root({ zone }), [s2o()]).report;
  assert.match(single(plain.errors, "unacknowledged-lossy").message, /hub→spoke/);
});

Deno.test("ObjectToSingletonArray: two spoke elements → the first becomes the hub object", () => {
  const rule = {
    strategy: "ObjectToSingletonArray",
    objectToSingletonArray: { hubPath: "spec.primaryRegion", spokePath: "spec.regions" },
  };
  const { report } = analyzePair(root({ primaryRegion: zone }), root({ regions: arr(zone) }), [
    rule,
  ]);
  assert.match(single(report.errors, "unacknowledged-lossy").message, /spoke→hub/);
  const plan = pairPlan(root({ primaryRegion: zone }), root({ regions: arr(zone) }), [
    { ...rule, acknowledgeLossy: true },
  ]);
  assert.deepEqual(
    s2h(plan, resource({ spec: { regions: [{ name: "eu" }, { name: "us" }] } })),
    resource({ spec: { primaryRegion: { name: "eu" } } }),
  );
  assert.deepEqual(
    h2s(plan, resource({ spec: { primaryRegion: { name: "eu" } } })),
    resource({ spec: { regions: [{ name: "eu" }] } }),
  );
});
