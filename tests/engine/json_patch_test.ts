/**
 * JSONPatch: strict RFC 6902 semantics of the reference (evanphx/json-patch), claims, verdicts
 * and the copy-back of destination paths.
 */
import assert from "node:assert/strict";
import {
  ConversionError,
  type ConversionRuleSpec,
  convertWithPlan,
  type JsonObject,
  type JsonValue,
  linkPlan,
} from "../../src/engine/mod.ts";
import { analyzeRules, classes, convertOne, spoke } from "./_spec_rules.ts";
import { pointerSegments } from "../../src/engine/strategies/json_patch.ts";

const bool = { type: "boolean" };
const str = { type: "string" };

const convert = convertOne;

const patchRule = (
  hubToSpoke: JsonValue[],
  spokeToHub: JsonValue[] = [],
  extra: JsonObject = { losslessOverride: true },
): ConversionRuleSpec => ({
  strategy: "JSONPatch",
  jsonPatch: { hubToSpoke, spokeToHub, ...extra },
});

// JSONPatch move, both ways.
const MOVE_RULE: ConversionRuleSpec = {
  strategy: "JSONPatch",
  jsonPatch: {
    hubToSpoke: [{ op: "move", from: "/spec/legacyFlag", path: "/spec/legacyFlagV2" }],
    spokeToHub: [{ op: "move", from: "/spec/legacyFlagV2", path: "/spec/legacyFlag" }],
  },
  acknowledgeLossy: true,
  reason: "renamed by patch",
};
const moveAnalysis = () =>
  analyzeRules({ legacyFlag: bool, name: str }, { legacyFlagV2: bool, name: str }, [MOVE_RULE]);

Deno.test("JSONPatch: move both ways", () => {
  const a = moveAnalysis();
  const r = spoke(a);
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings.map((d) => d.class), ["unverifiable"]);
  assert.deepEqual(r.ruleResults[0].hubPaths, []);
  assert.deepEqual(r.ruleResults[0].spokePaths, []);
  const h = { kind: "Gadget", spec: { legacyFlag: true, name: "x" } };
  const s = convert(a, "hubToSpoke", h);
  assert.deepEqual(s, { kind: "Gadget", metadata: {}, spec: { legacyFlagV2: true, name: "x" } });
  assert.deepEqual(convert(a, "spokeToHub", s), { ...h, metadata: {} });
});

Deno.test("JSONPatch: moving an absent field fails the conversion", () => {
  assert.throws(
    () => convert(moveAnalysis(), "hubToSpoke", { spec: { name: "x" } }),
    (e: unknown) =>
      e instanceof ConversionError &&
      /JSON patch op 0 \(move "\/spec\/legacyFlag" → "\/spec\/legacyFlagV2"\): the "from" path does not exist/
        .test(e.message),
  );
});

Deno.test("JSONPatch: without override or acknowledgement, two unacknowledged-lossy", () => {
  const { acknowledgeLossy: _, ...unacked } = MOVE_RULE;
  const r = spoke(
    analyzeRules({ legacyFlag: bool }, { legacyFlagV2: bool }, [unacked]),
  );
  assert.deepEqual(classes(r), ["unacknowledged-lossy", "unacknowledged-lossy"]);
  assert.deepEqual(r.ruleResults[0].lossless, { hubToSpoke: false, spokeToHub: false });
});

Deno.test("JSONPatch: losslessOverride makes both directions lossless (warning stays)", () => {
  const r = spoke(analyzeRules({ legacyFlag: bool }, { legacyFlagV2: bool }, [
    patchRule(
      [{ op: "move", from: "/spec/legacyFlag", path: "/spec/legacyFlagV2" }],
      [{ op: "move", from: "/spec/legacyFlagV2", path: "/spec/legacyFlag" }],
    ),
  ]));
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.lossless, { hubToSpoke: true, spokeToHub: true });
  assert.deepEqual(r.warnings.map((d) => d.class), ["unverifiable"]);
});

Deno.test("JSONPatch: every path and from of both lists is claimed on both sides", () => {
  // Only the H2S list mentions the fields; the claims still cover both schemas.
  const ok = spoke(analyzeRules({ a: str, b: str }, { a: str, c: str }, [
    patchRule([{ op: "copy", from: "/spec/a", path: "/spec/c" }, {
      op: "remove",
      path: "/spec/b",
    }]),
  ]));
  assert.deepEqual(ok.errors, []);
  assert.deepEqual(ok.uncoveredHub, []);
  assert.deepEqual(ok.uncoveredSpoke, []);
  // A later rule on a claimed path collides.
  const dup = spoke(analyzeRules({ a: str, b: str }, { a: str, b: str }, [
    patchRule([{ op: "replace", path: "/spec/a", value: "x" }]),
    { strategy: "FieldRename", fieldRename: { hubPath: "spec.a", spokePath: "spec.a" } },
  ]));
  assert.deepEqual(classes(dup), ["duplicate-claim", "duplicate-claim"]);
});

Deno.test("JSONPatch: add needs the parent", () => {
  const a = analyzeRules({ name: str }, { name: str }, [
    patchRule([{ op: "add", path: "/spec/extra/note", value: "hi" }]),
  ]);
  assert.throws(
    () => convert(a, "hubToSpoke", { spec: { name: "x" } }),
    /the parent of the path does not exist/,
  );
  const b = analyzeRules({ name: str }, { name: str, note: str }, [
    patchRule([{ op: "add", path: "/spec/note", value: "hi" }]),
  ]);
  assert.deepEqual(convert(b, "hubToSpoke", { spec: { name: "x" } }).spec, {
    name: "x",
    note: "hi",
  });
  // No spec at all: the parent is missing.
  assert.throws(() => convert(b, "hubToSpoke", {}), /parent/);
});

Deno.test("JSONPatch: remove / replace need their target; the result is copied or deleted", () => {
  const remove = analyzeRules({ name: str }, { name: str }, [
    patchRule([{ op: "remove", path: "/metadata/labels/tmp" }]),
  ]);
  assert.throws(() => convert(remove, "hubToSpoke", { metadata: {}, spec: {} }), /does not exist/);
  const out = convert(remove, "hubToSpoke", { metadata: { labels: { tmp: "1", keep: "2" } } });
  assert.deepEqual(out.metadata, { labels: { keep: "2" } });

  const replace = analyzeRules({ name: str }, { name: str }, [
    patchRule([{ op: "replace", path: "/spec/name", value: "new" }]),
  ]);
  assert.throws(() => convert(replace, "hubToSpoke", { spec: {} }), /does not exist/);
  assert.deepEqual(convert(replace, "hubToSpoke", { spec: { name: "old" } }).spec, { name: "new" });
});

Deno.test("JSONPatch: copy needs its source; test failure is an error", () => {
  const copy = analyzeRules({ a: str }, { a: str, b: str }, [
    patchRule([{ op: "copy", from: "/spec/a", path: "/spec/b" }]),
  ]);
  assert.throws(() => convert(copy, "hubToSpoke", { spec: {} }), /"from" path does not exist/);
  assert.deepEqual(convert(copy, "hubToSpoke", { spec: { a: "v" } }).spec, { b: "v" });

  const test = analyzeRules({ mode: str }, { mode: str, tier: str }, [
    patchRule([
      { op: "test", path: "/spec/mode", value: "fast" },
      { op: "add", path: "/spec/tier", value: "gold" },
    ]),
  ]);
  assert.deepEqual(convert(test, "hubToSpoke", { spec: { mode: "fast" } }).spec, {
    mode: "fast",
    tier: "gold",
  });
  assert.throws(() => convert(test, "hubToSpoke", { spec: { mode: "slow" } }), /test failed/);
  assert.throws(() => convert(test, "hubToSpoke", { spec: {} }), /test failed/);
});

Deno.test("JSONPatch: test against null (or no value) passes when the target is absent or null", () => {
  const a = analyzeRules({ x: str }, { x: str, y: str }, [
    patchRule([{ op: "test", path: "/spec/x", value: null }, {
      op: "add",
      path: "/spec/y",
      value: "set",
    }]),
  ]);
  assert.equal((convert(a, "hubToSpoke", { spec: {} }).spec as JsonObject).y, "set");
  assert.equal((convert(a, "hubToSpoke", { spec: { x: null } }).spec as JsonObject).y, "set");
  assert.throws(() => convert(a, "hubToSpoke", { spec: { x: "v" } }), /test failed/);
});

Deno.test("JSONPatch: a null value is written as null", () => {
  const a = analyzeRules({ x: str }, { x: str }, [
    patchRule([{ op: "replace", path: "/spec/x", value: null }]),
  ]);
  assert.deepEqual(convert(a, "hubToSpoke", { spec: { x: "v" } }).spec, { x: null });
});

Deno.test("JSONPatch: an unknown op fails when applied, not at compile time", () => {
  const a = analyzeRules({ x: str }, { x: str }, [
    patchRule([{ op: "frobnicate", path: "/spec/x" }]),
  ]);
  assert.deepEqual(spoke(a).errors, []);
  assert.throws(
    () => convert(a, "hubToSpoke", { spec: { x: "v" } }),
    /unknown operation "frobnicate"/,
  );
  const libraryOnly = analyzeRules({ x: str }, { x: str }, [
    patchRule([{ op: "_get", path: "/spec/x" }]),
  ]);
  assert.throws(
    () => convert(libraryOnly, "hubToSpoke", { spec: { x: "v" } }),
    /unknown operation/,
  );
});

Deno.test("JSONPatch: inherited names are never found on an object's prototype", () => {
  const a = analyzeRules({ x: str }, { x: str }, [
    patchRule([{ op: "remove", path: "/spec/constructor" }]),
  ]);
  assert.throws(() => convert(a, "hubToSpoke", { spec: { x: "v" } }), /does not exist/);
  const b = analyzeRules({ x: str }, { x: str }, [
    patchRule([{ op: "move", from: "/spec/toString", path: "/spec/x" }]),
  ]);
  assert.throws(() => convert(b, "hubToSpoke", { spec: { x: "v" } }), /does not exist/);
});

Deno.test("JSONPatch: pointers decode ~1 to / and ~0 to ~", () => {
  assert.deepEqual(pointerSegments(""), []);
  assert.deepEqual(pointerSegments("/spec/a~1b"), ["spec", "a/b"]);
  assert.deepEqual(pointerSegments("/spec/t~0"), ["spec", "t~"]);
  assert.deepEqual(pointerSegments("/spec/~01"), ["spec", "~1"]);
  assert.deepEqual(pointerSegments("/spec/0"), ["spec", "0"]);
  const a = analyzeRules({ x: str }, { x: str }, [
    patchRule([
      { op: "add", path: "/metadata/annotations/example.com~1note", value: "n" },
      { op: "add", path: "/metadata/annotations/a~0b", value: "t" },
    ]),
  ]);
  const out = convert(a, "hubToSpoke", { metadata: { annotations: {} }, spec: { x: "v" } });
  assert.deepEqual(out.metadata, { annotations: { "example.com/note": "n", "a~b": "t" } });
});

Deno.test("JSONPatch: the patch sees the whole input, including kind and apiVersion", () => {
  const a = analyzeRules({ x: str }, { x: str, from: str }, [
    patchRule([{ op: "copy", from: "/apiVersion", path: "/spec/from" }]),
  ]);
  const out = convert(a, "hubToSpoke", { apiVersion: "demo.example.com/v2", spec: { x: "v" } });
  assert.deepEqual(out.spec, { x: "v", from: "demo.example.com/v2" });
});

Deno.test("JSONPatch: edits inside arrays are not reflected (map-only read-back)", () => {
  const a = analyzeRules({ items: { type: "array", items: str } }, {
    items: { type: "array", items: str },
  }, [patchRule([{ op: "replace", path: "/spec/items/0", value: "patched" }])]);
  const out = convert(a, "hubToSpoke", { spec: { items: ["a", "b"] } });
  assert.deepEqual(out.spec, { items: ["a", "b"] });
  assert.throws(() => convert(a, "hubToSpoke", { spec: { items: [] } }), /does not exist/);
});

Deno.test("JSONPatch: plan data is never mutated by applying it", () => {
  const a = analyzeRules({ x: str }, {
    x: str,
    obj: { type: "object", additionalProperties: str },
  }, [
    patchRule([
      { op: "add", path: "/spec/obj", value: { k: "v" } },
      { op: "add", path: "/spec/obj/extra", value: "e" },
    ]),
  ]);
  const plan = spoke(a).plan!;
  const before = JSON.stringify(plan);
  const linked = linkPlan(plan);
  for (let i = 0; i < 3; i++) {
    const out = convertWithPlan(linked, "hubToSpoke", { spec: { x: "v" } });
    assert.deepEqual(out.spec, { x: "v", obj: { k: "v", extra: "e" } });
  }
  assert.equal(JSON.stringify(plan), before);
});

Deno.test("JSONPatch: an empty list does nothing; the input is never mutated", () => {
  const a = analyzeRules({ x: str }, { x: str }, [
    patchRule([], [{ op: "remove", path: "/spec/x" }]),
  ]);
  const input = { spec: { x: "v" } };
  assert.deepEqual(convert(a, "hubToSpoke", input).spec, undefined);
  assert.deepEqual(convert(a, "spokeToHub", input).spec, undefined);
  assert.deepEqual(input, { spec: { x: "v" } });
});

Deno.test("JSONPatch: malformed operations are invalid-parameter", () => {
  for (
    const bad of [
      ["not an op"],
      [{ op: "add", value: 1 }],
      [{ op: 3, path: "/spec/x" }],
      [{ op: "add", path: "spec/x", value: 1 }],
      [{ op: "move", from: "spec/x", path: "/spec/y" }],
      [{ op: "replace", path: "", value: {} }],
    ] as JsonValue[][]
  ) {
    const r = spoke(analyzeRules({ x: str }, { x: str }, [patchRule(bad)]));
    const found = classes(r).filter((c) => c !== "uncovered-field");
    assert.deepEqual(found, ["invalid-parameter"], JSON.stringify(bad));
    assert.equal(r.plan, undefined);
  }
  // A test of the whole document is allowed (it writes nothing).
  const root = spoke(analyzeRules({ x: str }, { x: str }, [
    patchRule([{ op: "test", path: "/spec/x", value: "v" }, { op: "test", path: "", value: null }]),
  ]));
  assert.deepEqual(root.errors, []);
});
