/** FieldsToMap / MapToFields conformance. */
import assert from "node:assert/strict";
import { analyze, createRouter } from "../../src/engine/mod.ts";
import { assertConversionError, describe, resource, single } from "./_checks.ts";
import { analyzePair, configFor, crdSource, h2s, pairPlan, s2h } from "./_helpers.ts";
import { HUB, map, obj, root, str } from "./_schemas.ts";

const fieldsToMap = (extra: Record<string, unknown> = {}) => ({
  strategy: "FieldsToMap",
  fieldsToMap: {
    hubPaths: ["spec.cpuLimit", "spec.memoryLimit"],
    spokeMapPath: "spec.limits",
    keyNames: { "spec.cpuLimit": "cpu", "spec.memoryLimit": "memory" },
    ...extra,
  },
});
const hubLimits = root({ cpuLimit: str(), memoryLimit: str() });
const spokeLimits = root({ limits: map(str()) });

Deno.test("FieldsToMap: {cpuLimit: 4} → limits {cpu: 4}; an unknown key is a runtime error", () => {
  const plan = pairPlan(hubLimits, spokeLimits, [fieldsToMap()]);
  assert.deepEqual(
    h2s(plan, resource({ spec: { cpuLimit: "4" } })),
    resource({ spec: { limits: { cpu: "4" } } }),
  );
  assert.deepEqual(
    s2h(plan, resource({ spec: { limits: { cpu: "1", memory: "2Gi" } } })),
    resource({ spec: { cpuLimit: "1", memoryLimit: "2Gi" } }),
  );
  assertConversionError(
    () => s2h(plan, resource({ spec: { limits: { cpu: "1", gpu: "2" } } })),
    "spoke→hub",
    "spec.limits",
    '"gpu"',
  );
});

Deno.test("FieldsToMap: nothing present writes no map; nulls are entries; Drop ignores unknown keys", () => {
  const plan = pairPlan(hubLimits, spokeLimits, [
    { ...fieldsToMap({ onUnknownSpokeKey: "Drop" }), acknowledgeLossy: true },
  ]);
  assert.deepEqual(h2s(plan, resource({ spec: {} })), resource({}));
  assert.deepEqual(
    h2s(plan, resource({ spec: { memoryLimit: null } })).spec,
    { limits: { memory: null } },
  );
  assert.deepEqual(
    s2h(plan, resource({ spec: { limits: { cpu: "1", gpu: "2" } } })).spec,
    { cpuLimit: "1" },
  );
  assert.deepEqual(s2h(plan, resource({ spec: { limits: {} } })), resource({}));
  assertConversionError(() => s2h(plan, resource({ spec: { limits: "cpu=1" } })), "not a map");
});

Deno.test("FieldsToMap verdicts: Error is lossless, Drop is lossy spoke→hub", () => {
  assert.deepEqual(analyzePair(hubLimits, spokeLimits, [fieldsToMap()]).report.lossless, {
    hubToSpoke: true,
    spokeToHub: true,
  });
  const drop = analyzePair(hubLimits, spokeLimits, [fieldsToMap({ onUnknownSpokeKey: "Drop" })])
    .report;
  assert.deepEqual(drop.lossless, { hubToSpoke: true, spokeToHub: false });
  assert.match(single(drop.errors, "unacknowledged-lossy").message, /spoke→hub/);
});

Deno.test("MapToFields with Drop keeps env and team; the Error-policy spoke fails", () => {
  const hub = root({ tags: map(str()) });
  const spoke = root({ env: str(), team: str() });
  const rule = (policy: string) => ({
    strategy: "MapToFields",
    mapToFields: {
      hubMapPath: "spec.tags",
      spokePaths: ["spec.env", "spec.team"],
      onUnknownHubKey: policy,
    },
    acknowledgeLossy: policy === "Drop",
  });
  const result = analyze(
    crdSource([
      { name: HUB, schema: hub, storage: true },
      { name: "v1", schema: spoke },
      { name: "v1beta1", schema: spoke },
    ]),
    configFor({ v1: [rule("Drop")], v1beta1: [rule("Error")] }),
  );
  assert.equal(result.hasErrors, false, describe(result.spokes.flatMap((s) => s.errors)));
  const router = createRouter(result);
  const tagged = resource({ spec: { tags: { env: "dev", team: "a", owner: "bob" } } });
  assert.deepEqual(router.route(tagged, HUB, "v1"), resource({ spec: { env: "dev", team: "a" } }));
  assertConversionError(() => router.route(tagged, HUB, "v1beta1"), "hub→spoke", '"owner"');
  assert.deepEqual(
    router.route(resource({ spec: { env: "dev", team: "a" } }), "v1beta1", HUB),
    resource({ spec: { tags: { env: "dev", team: "a" } } }),
  );
});

Deno.test("FieldsToMap: two fields with the same map key are invalid-parameter", () => {
  const { report } = analyzePair(
    root({ a: obj({ x: str() }), b: obj({ x: str() }) }),
    spokeLimits,
    [{
      strategy: "FieldsToMap",
      fieldsToMap: { hubPaths: ["spec.a.x", "spec.b.x"], spokeMapPath: "spec.limits" },
    }],
  );
  const d = single(report.errors, "invalid-parameter");
  assert.match(d.message, /"x"/);
});
