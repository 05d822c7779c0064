/** DefaultValue / Constant / Delete conformance. */
import assert from "node:assert/strict";
import { describe, resource, single } from "./_checks.ts";
import { analyzePair, h2s, pairPlan, s2h } from "./_helpers.ts";
import { bool, int, root, str } from "./_schemas.ts";

Deno.test("DefaultValue existsOn Spoke: always written towards the spoke; dropped back", () => {
  const rule = {
    strategy: "DefaultValue",
    defaultValue: { path: "spec.maxPods", existsOn: "Spoke", default: 4 },
    acknowledgeLossy: true,
  };
  const plan = pairPlan(root({ name: str() }), root({ name: str(), maxPods: int() }), [rule]);
  assert.deepEqual(h2s(plan, resource({})), resource({ spec: { maxPods: 4 } }));
  assert.deepEqual(
    h2s(plan, resource({ spec: { name: "n" } })),
    resource({ spec: { name: "n", maxPods: 4 } }),
  );
  assert.deepEqual(
    s2h(plan, resource({ spec: { name: "n", maxPods: 8 } })),
    resource({ spec: { name: "n" } }),
  );
  const { report } = analyzePair(root({}), root({ maxPods: int() }), [{
    ...rule,
    acknowledgeLossy: false,
  }]);
  assert.match(single(report.errors, "unacknowledged-lossy").message, /spoke→hub/);
  assert.deepEqual(report.ruleResults[0].hubPaths, ["spec.maxPods"]);
  assert.deepEqual(report.ruleResults[0].spokePaths, ["spec.maxPods"]);
});

Deno.test("DefaultValue: an object default is deep-copied per conversion", () => {
  const plan = pairPlan(root({}), root({ cfg: { type: "object", additionalProperties: true } }), [{
    strategy: "DefaultValue",
    defaultValue: { path: "spec.cfg", existsOn: "Spoke", default: { a: [1] } },
    acknowledgeLossy: true,
  }]);
  const first = h2s(plan, resource({}));
  (first.spec as { cfg: { a: number[] } }).cfg.a.push(2);
  assert.deepEqual(h2s(plan, resource({})).spec, { cfg: { a: [1] } });
});

Deno.test("Constant existsOn Hub value 2: always apiLevel 2 on the hub; dropped towards the spoke", () => {
  const rule = {
    strategy: "Constant",
    constant: { path: "spec.apiLevel", existsOn: "Hub", value: 2 },
    acknowledgeLossy: true,
  };
  const plan = pairPlan(root({ apiLevel: int() }), root({}), [rule]);
  assert.deepEqual(s2h(plan, resource({})), resource({ spec: { apiLevel: 2 } }));
  assert.deepEqual(
    s2h(plan, resource({ spec: { apiLevel: 7 } })),
    resource({ spec: { apiLevel: 2 } }),
  );
  assert.deepEqual(h2s(plan, resource({ spec: { apiLevel: 5 } })), resource({}));
  const { report } = analyzePair(root({ apiLevel: int() }), root({}), [{
    ...rule,
    acknowledgeLossy: false,
  }]);
  assert.match(single(report.errors, "unacknowledged-lossy").message, /hub→spoke/);
});

Deno.test("Delete existsOn Spoke: debugMode dropped; without ack unacknowledged-lossy", () => {
  const rule = { strategy: "Delete", delete: { path: "spec.debugMode", existsOn: "Spoke" } };
  const plan = pairPlan(root({}), root({ debugMode: bool() }), [{
    ...rule,
    acknowledgeLossy: true,
  }]);
  assert.deepEqual(s2h(plan, resource({ spec: { debugMode: true } })), resource({}));
  assert.deepEqual(h2s(plan, resource({ spec: { debugMode: true } })), resource({}));
  const { report } = analyzePair(root({}), root({ debugMode: bool() }), [rule]);
  assert.match(single(report.errors, "unacknowledged-lossy").message, /spoke→hub/);
  assert.equal(report.errors.length, 1, describe(report.errors));
});

Deno.test("Delete of a required field warns required-field-deleted", () => {
  const { report } = analyzePair(root({ name: str() }, { specRequired: ["name"] }), root({}), [{
    strategy: "Delete",
    delete: { path: "spec.name", existsOn: "Hub" },
    acknowledgeLossy: true,
  }]);
  const w = single(report.warnings, "required-field-deleted");
  assert.equal(w.path, "spec.name");
  assert.match(w.message, /hub/);
});

Deno.test("presence strategies: existsOn other than Hub/Spoke is invalid-parameter; the field is claimed on its side only", () => {
  const { report } = analyzePair(root({ x: int() }), root({}), [{
    strategy: "Constant",
    constant: { path: "spec.x", existsOn: "Both", value: 1 },
    acknowledgeLossy: true,
  }]);
  assert.match(single(report.errors, "invalid-parameter").message, /existsOn/);
  // existsOn Spoke resolves on the spoke only; a hub field at the same path stays uncovered.
  const { report: r2 } = analyzePair(root({ x: int() }), root({ x: int() }), [{
    strategy: "DefaultValue",
    defaultValue: { path: "spec.x", existsOn: "Spoke", default: 1 },
    acknowledgeLossy: true,
  }]);
  assert.deepEqual(r2.uncoveredHub, ["spec.x"]);
  assert.deepEqual(r2.uncoveredSpoke, []);
});
