/** FieldRename conformance. */
import assert from "node:assert/strict";
import { describe, errorsOf, resource, single } from "./_checks.ts";
import { analyzePair, h2s, pairPlan, s2h } from "./_helpers.ts";
import { bool, int, obj, root, str } from "./_schemas.ts";

const rename = (hubPath: string, spokePath: string) => ({
  strategy: "FieldRename",
  fieldRename: { hubPath, spokePath },
});

Deno.test("FieldRename: storageGB ↔ storageSize, and back to the original", () => {
  const plan = pairPlan(root({ storageGB: str() }), root({ storageSize: str() }), [
    rename("spec.storageGB", "spec.storageSize"),
  ]);
  const hub = resource({ spec: { storageGB: "100" } });
  const spoke = h2s(plan, hub);
  assert.deepEqual(spoke, resource({ spec: { storageSize: "100" } }));
  assert.deepEqual(s2h(plan, spoke), hub);
});

Deno.test("FieldRename on status: phase → state", () => {
  const plan = pairPlan(
    root({}, { status: { phase: str() } }),
    root({}, { status: { state: str() } }),
    [rename("status.phase", "status.state")],
  );
  assert.deepEqual(
    h2s(plan, resource({ status: { phase: "Ready" } })),
    resource({ status: { state: "Ready" } }),
  );
  assert.deepEqual(
    s2h(plan, resource({ status: { state: "Ready" } })),
    resource({ status: { phase: "Ready" } }),
  );
});

Deno.test("FieldRename: a stale undeclared-on-hub copy of the spoke field is not passed through", () => {
  const plan = pairPlan(root({ storageGB: str() }), root({ storageSize: str() }), [
    rename("spec.storageGB", "spec.storageSize"),
  ]);
  const out = h2s(plan, resource({ spec: { storageGB: "10", storageSize: "99" } }));
  assert.deepEqual(out, resource({ spec: { storageSize: "10" } }));
  // Without the hub field, the stale value still does not leak.
  assert.deepEqual(h2s(plan, resource({ spec: { storageSize: "99" } })), resource({}));
});

Deno.test("FieldRename string ↔ integer: type-mismatch naming both kinds", () => {
  const { report } = analyzePair(root({ storageGB: str() }), root({ storageSize: int() }), [
    rename("spec.storageGB", "spec.storageSize"),
  ]);
  const d = single(report.errors, "type-mismatch");
  assert.equal(d.ruleIndex, 0);
  assert.equal(d.path, "spec.storageGB");
  assert.match(d.message, /string/);
  assert.match(d.message, /integer/);
  assert.equal(report.plan, undefined);
  assert.equal(report.errors.length, 1, describe(report.errors));
});

Deno.test("FieldRename: paths that do not resolve are path-not-found on their side", () => {
  const { report } = analyzePair(root({ a: str() }), root({ b: str() }), [
    rename("spec.missing", "spec.b"),
    rename("spec.a", "spec.nope.deeper"),
  ]);
  assert.deepEqual(
    errorsOf(report, "path-not-found").map((d) => [d.ruleIndex, d.path]),
    [[0, "spec.missing"], [1, "spec.nope.deeper"]],
  );
  assert.match(
    errorsOf(report, "path-not-found")[0].message,
    /hubPath "spec\.missing".*hub schema/,
  );
  assert.match(errorsOf(report, "path-not-found")[1].message, /spokePath .*spoke schema/);
});

Deno.test("FieldRename of a structured object: its inner leaves are uncovered", () => {
  const network = obj({ cidr: str(), ipv6: bool() });
  const { report } = analyzePair(root({ network }), root({ net: network }), [
    rename("spec.network", "spec.net"),
  ]);
  assert.deepEqual(errorsOf(report, "type-mismatch"), []);
  const uncovered = errorsOf(report, "uncovered-field");
  assert.deepEqual(
    uncovered.map((d) => [d.side, d.path]),
    [["hub", "spec.network.cidr"], ["hub", "spec.network.ipv6"], ["spoke", "spec.net.cidr"], [
      "spoke",
      "spec.net.ipv6",
    ]],
  );
  assert.deepEqual(report.uncoveredHub, ["spec.network.cidr", "spec.network.ipv6"]);
  assert.deepEqual(report.uncoveredSpoke, ["spec.net.cidr", "spec.net.ipv6"]);
  assert.deepEqual(report.lossless, { hubToSpoke: false, spokeToHub: false });
});

Deno.test("FieldRename copies any value as-is, null included, deep-copied", () => {
  const plan = pairPlan(
    root({ a: str({ nullable: true }) }),
    root({ b: str({ nullable: true }) }),
    [
      rename("spec.a", "spec.b"),
    ],
  );
  assert.deepEqual(h2s(plan, resource({ spec: { a: null } })), resource({ spec: { b: null } }));
  // An object at a scalar path is still copied verbatim (no runtime type checks).
  const input = resource({ spec: { a: { x: [1] } as never } });
  const out = h2s(plan, input);
  assert.deepEqual(out.spec, { b: { x: [1] } });
  assert.notEqual((out.spec as { b: unknown }).b, (input.spec as { a: unknown }).a);
});
