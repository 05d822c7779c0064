/**
 * ToAnnotation / ToLabel / FromAnnotation / FromLabel conformance: stashing, restoring, Go JSON
 * output and label rules.
 */
import assert from "node:assert/strict";
import { structuralError } from "../../src/engine/mod.ts";
import { assertConversionError, describe, resource, single } from "./_checks.ts";
import { analyzePair, configFor, h2s, pairPlan, s2h } from "./_helpers.ts";
import { int, obj, root, SPOKE, str } from "./_schemas.ts";

const KEY = "demo.example.com/description";
const toAnnotation = (params: Record<string, unknown>) => ({
  strategy: "ToAnnotation",
  toAnnotation: { hubPath: "spec.description", key: KEY, ...params },
});

Deno.test("ToAnnotation JSON: Go escapes <>&; restore removes only that key", () => {
  const plan = pairPlan(root({ description: str(), size: int() }), root({ size: int() }), [
    toAnnotation({ restoreOnReverse: true }),
  ]);
  const hub = resource({ spec: { description: "a <b> & c", size: 1 } }, {
    name: "g",
    annotations: { keep: "me" },
  });
  const spoke = h2s(plan, hub);
  assert.deepEqual(
    spoke,
    resource({ spec: { size: 1 } }, {
      name: "g",
      annotations: { keep: "me", [KEY]: '"a \\u003cb\\u003e \\u0026 c"' },
    }),
  );
  assert.deepEqual(s2h(plan, spoke), hub);
});

Deno.test("ToAnnotation JSON of an object: sorted keys, compact", () => {
  const plan = pairPlan(root({ description: obj({ note: str(), level: int() }) }), root({}), [
    toAnnotation({ restoreOnReverse: true }),
  ]);
  const out = h2s(plan, resource({ spec: { description: { note: "hi", level: 2 } } }));
  assert.deepEqual(out.metadata, { name: "g", annotations: { [KEY]: '{"level":2,"note":"hi"}' } });
  assert.equal(Object.hasOwn(out, "spec"), false);
});

Deno.test("ToAnnotation without restore: spoke→hub strips the key; the hub field is absent", () => {
  const { report } = analyzePair(root({ description: str() }), root({}), [toAnnotation({})]);
  assert.match(single(report.errors, "unacknowledged-lossy").message, /spoke→hub/);
  const plan = pairPlan(root({ description: str() }), root({}), [
    { ...toAnnotation({}), acknowledgeLossy: true },
  ]);
  const back = s2h(plan, resource({}, { name: "g", annotations: { [KEY]: '"x"', other: "y" } }));
  assert.deepEqual(back, resource({}, { name: "g", annotations: { other: "y" } }));
  // The emptied annotations map is pruned; metadata itself stays.
  assert.deepEqual(
    s2h(plan, resource({}, { name: "g", annotations: { [KEY]: '"x"' } })),
    resource({}),
  );
});

Deno.test("ToAnnotation String: a non-string value is a runtime error; a string is stored verbatim", () => {
  const plan = pairPlan(root({ description: str() }), root({}), [
    toAnnotation({ serialization: "String", restoreOnReverse: true }),
  ]);
  assert.deepEqual(h2s(plan, resource({ spec: { description: "a <b>" } })).metadata, {
    name: "g",
    annotations: { [KEY]: "a <b>" },
  });
  assertConversionError(
    () => h2s(plan, resource({ spec: { description: 5 } })),
    "spec.description",
    "String",
  );
  assertConversionError(
    () => s2h(plan, resource({}, { name: "g", annotations: { [KEY]: 5 } })),
    "not a string",
  );
});

const LABEL = "tier";
const toLabel = (params: Record<string, unknown>) => ({
  strategy: "ToLabel",
  toLabel: { hubPath: "spec.tier", key: LABEL, restoreOnReverse: true, ...params },
});

Deno.test('ToLabel String: tier gold; JSON integer 3 → label "3" restored as number 3', () => {
  const plan = pairPlan(root({ tier: str() }), root({}), [toLabel({ serialization: "String" })]);
  const spoke = h2s(plan, resource({ spec: { tier: "gold" } }));
  assert.deepEqual(spoke, resource({}, { name: "g", labels: { tier: "gold" } }));
  assert.deepEqual(s2h(plan, spoke), resource({ spec: { tier: "gold" } }));

  const json = pairPlan(root({ tier: int() }), root({}), [toLabel({})]);
  const labelled = h2s(json, resource({ spec: { tier: 3 } }));
  assert.deepEqual(labelled.metadata, { name: "g", labels: { tier: "3" } });
  const back = s2h(json, labelled);
  assert.deepEqual(back, resource({ spec: { tier: 3 } }));
  assert.equal(typeof (back.spec as { tier: unknown }).tier, "number");
});

Deno.test("ToLabel: an invalid label value is a runtime error", () => {
  const plan = pairPlan(root({ tier: str() }), root({}), [toLabel({ serialization: "String" })]);
  assertConversionError(
    () => h2s(plan, resource({ spec: { tier: "not valid!" } })),
    "hub→spoke",
    "label value",
    '"not valid!"',
  );
  // Default JSON serialization of a string always fails (quotes are not allowed in a label value).
  const json = pairPlan(root({ tier: str() }), root({}), [toLabel({})]);
  assertConversionError(() => h2s(json, resource({ spec: { tier: "gold" } })), "label value");
});

Deno.test("ToLabel: an invalid key is invalid-parameter at compile time and a structural error", () => {
  const rules = [toLabel({ key: "-bad-" })];
  const { report } = analyzePair(root({ tier: str() }), root({}), rules);
  assert.match(single(report.errors, "invalid-parameter").message, /label key/);
  const err = structuralError(configFor({ [SPOKE]: rules }));
  assert.match(err ?? "", /spec\.spokes\[0\]\.rules\[0\]\.toLabel\.key/);
});

const NOTE = "demo.example.com/operator-note";

Deno.test("FromAnnotation: JSON annotation → spoke field; key removed, empty map pruned", () => {
  const plan = pairPlan(root({}), root({ operatorNote: str() }), [{
    strategy: "FromAnnotation",
    fromAnnotation: { spokePath: "spec.operatorNote", key: NOTE, stashOnReverse: true },
  }]);
  const hub = resource({}, { name: "g", annotations: { [NOTE]: '"handle with care"' } });
  const spoke = h2s(plan, hub);
  assert.deepEqual(spoke, resource({ spec: { operatorNote: "handle with care" } }));
  assert.equal(Object.hasOwn(spoke.metadata as object, "annotations"), false);
  assert.deepEqual(s2h(plan, spoke), hub);
  assertConversionError(
    () => h2s(plan, resource({}, { name: "g", annotations: { [NOTE]: "handle with care" } })),
    "hub→spoke",
    "not valid JSON",
  );
});

Deno.test("FromAnnotation without stash: spoke→hub drops the field and strips a stale key", () => {
  const rule = {
    strategy: "FromAnnotation",
    fromAnnotation: { spokePath: "spec.operatorNote", key: NOTE },
  };
  const { report } = analyzePair(root({}), root({ operatorNote: str() }), [rule]);
  assert.deepEqual(report.lossless, { hubToSpoke: true, spokeToHub: false });
  const plan = pairPlan(root({}), root({ operatorNote: str() }), [
    { ...rule, acknowledgeLossy: true },
  ]);
  assert.deepEqual(
    s2h(
      plan,
      resource({ spec: { operatorNote: "x" } }, { name: "g", annotations: { [NOTE]: '"y"' } }),
    ),
    resource({}),
  );
});

Deno.test("FromLabel: label → spoke field, other labels kept; JSON is rejected", () => {
  const rule = {
    strategy: "FromLabel",
    fromLabel: { spokePath: "spec.operatorTier", key: "operator-tier", stashOnReverse: true },
  };
  const plan = pairPlan(root({}), root({ operatorTier: str() }), [rule]);
  const hub = resource({}, { name: "g", labels: { "operator-tier": "silver", app: "db" } });
  const spoke = h2s(plan, hub);
  assert.deepEqual(
    spoke,
    resource({ spec: { operatorTier: "silver" } }, { name: "g", labels: { app: "db" } }),
  );
  assert.deepEqual(s2h(plan, spoke), hub);

  const json = { ...rule, fromLabel: { ...rule.fromLabel, serialization: "JSON" } };
  assert.match(
    structuralError(configFor({ [SPOKE]: [json] })) ?? "",
    /fromLabel\.serialization: JSON is not allowed/,
  );
  const { report } = analyzePair(root({}), root({ operatorTier: str() }), [json]);
  assert.match(single(report.errors, "invalid-parameter").message, /JSON/);
});

Deno.test("metadata strategies claim nothing in metadata and their hub/spoke paths as declared", () => {
  const { report } = analyzePair(root({ description: str() }), root({ note: str() }), [
    { ...toAnnotation({ restoreOnReverse: true }) },
    {
      strategy: "FromAnnotation",
      fromAnnotation: { spokePath: "spec.note", key: "n", stashOnReverse: true },
    },
  ]);
  assert.deepEqual(report.errors, [], describe(report.errors));
  assert.deepEqual(report.ruleResults.map((r) => [r.hubPaths, r.spokePaths]), [
    [["spec.description"], []],
    [[], ["spec.note"]],
  ]);
});
