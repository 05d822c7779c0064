import assert from "node:assert/strict";
import { isAcknowledged, leafCount, leafDiff, valueAtDiffPath } from "../../src/cli/test_report.ts";

Deno.test("leafDiff: maps by key union, null equals absent, numbers by value", () => {
  assert.deepEqual(
    leafDiff(
      { a: 1, b: { c: null, d: "x" }, e: 2 },
      { a: 1.0, b: { d: "y" }, f: 3 },
    ),
    ["b.d", "e", "f"],
  );
});

Deno.test("leafDiff: arrays by index when lengths match, else one diff", () => {
  assert.deepEqual(leafDiff({ l: [1, { x: 1 }] }, { l: [1, { x: 2 }] }), ["l[1].x"]);
  assert.deepEqual(leafDiff({ l: [1, 2] }, { l: [1] }), ["l"]);
  assert.deepEqual(leafDiff({ m: { a: 1 } }, { m: "scalar" }), ["m"]);
});

Deno.test("leafDiff: ignores apiVersion, kind and server-set metadata", () => {
  assert.deepEqual(
    leafDiff(
      { apiVersion: "a/v1", kind: "K", metadata: { uid: "1", generation: 2, name: "n" } },
      { apiVersion: "a/v2", metadata: { resourceVersion: "9", name: "m" } },
    ),
    ["metadata.name"],
  );
});

Deno.test("leafCount counts non-container values; empty containers count 0", () => {
  assert.equal(leafCount({ a: 1, b: [], c: {}, d: [null, { e: "x" }], f: false }), 4);
});

Deno.test("isAcknowledged: index-free path or any dotted prefix in the lossy set", () => {
  const lossy = new Set(["spec.volumes", "spec.legacy"]);
  assert.equal(isAcknowledged("spec.volumes[3].size", lossy), true);
  assert.equal(isAcknowledged("spec.legacy", lossy), true);
  assert.equal(isAcknowledged("spec.legacyFlag", lossy), false);
  assert.equal(isAcknowledged("spec", lossy), false);
});

Deno.test("valueAtDiffPath reads through maps and indices", () => {
  const obj = { spec: { list: [{ a: 1 }, { a: [5, 6] }] } };
  assert.equal(valueAtDiffPath(obj, "spec.list[1].a[1]"), 6);
  assert.equal(valueAtDiffPath(obj, "spec.missing"), undefined);
});
