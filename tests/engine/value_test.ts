/** Runtime path helpers and the engine's equality. */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/engine/mod.ts";
import {
  ABSENT,
  ConversionError,
  deepCopy,
  deleteAndPrune,
  deletePath,
  getPath,
  jsonEqual,
  setKey,
  setPath,
  typeName,
} from "../../src/engine/value.ts";

Deno.test("getPath: walks maps; missing or non-map intermediates are absent; null is present", () => {
  const o: JsonObject = { a: { b: null, c: [1], d: "s" } };
  assert.equal(getPath(o, ["a", "b"]), null);
  assert.deepEqual(getPath(o, ["a", "c"]), [1]);
  assert.equal(getPath(o, ["a", "x"]), ABSENT);
  assert.equal(getPath(o, ["a", "b", "x"]), ABSENT, "through null");
  assert.equal(getPath(o, ["a", "c", "0"]), ABSENT, "no array indices");
  assert.equal(getPath(o, ["a", "d", "length"]), ABSENT, "not into strings");
  assert.equal(getPath(o, []), o, "empty path is the object itself");
  assert.equal(getPath(o, ["toString"]), ABSENT, "inherited properties are absent");
  assert.equal(getPath(o, ["__proto__"]), ABSENT);
});

Deno.test("setPath: creates intermediates, merges with siblings, fails on non-maps and the empty path", () => {
  const o: JsonObject = { spec: { keep: 1 } };
  setPath(o, ["spec", "a", "b"], 2);
  setPath(o, ["spec", "a", "c"], null);
  assert.deepEqual(o, { spec: { keep: 1, a: { b: 2, c: null } } });
  setPath(o, ["spec", "keep"], { replaced: true });
  assert.deepEqual(o.spec, { keep: { replaced: true }, a: { b: 2, c: null } });
  for (const blocker of [null, "s", [1], 0]) {
    const p: JsonObject = { spec: blocker };
    assert.throws(
      () => setPath(p, ["spec", "x"], 1),
      (e: unknown) =>
        e instanceof ConversionError && /cannot write spec\.x: spec is not a map/.test(e.message),
    );
  }
  assert.throws(() => setPath({}, [], 1), ConversionError);
});

Deno.test("deletePath: no-op when missing or not a map", () => {
  const o: JsonObject = { a: { b: 1, c: 2 }, s: "x" };
  deletePath(o, ["a", "b"]);
  deletePath(o, ["a", "zz"]);
  deletePath(o, ["s", "length"]);
  deletePath(o, ["q", "r"]);
  deletePath(o, []);
  assert.deepEqual(o, { a: { c: 2 }, s: "x" });
});

Deno.test("deleteAndPrune: removes ancestors that became empty, never the root", () => {
  const o: JsonObject = { metadata: { annotations: { k: "v" } } };
  deleteAndPrune(o, ["metadata", "annotations", "k"]);
  assert.deepEqual(o, {});
  const p: JsonObject = { metadata: { name: "n", annotations: { k: "v" } } };
  deleteAndPrune(p, ["metadata", "annotations", "k"]);
  assert.deepEqual(p, { metadata: { name: "n" } });
  const q: JsonObject = { metadata: { annotations: { k: "v", j: "w" } } };
  deleteAndPrune(q, ["metadata", "annotations", "k"]);
  assert.deepEqual(q, { metadata: { annotations: { j: "w" } } });
  const root: JsonObject = { k: 1 };
  deleteAndPrune(root, ["k"]);
  assert.deepEqual(root, {});
});

Deno.test("__proto__ keys are ordinary own keys everywhere", () => {
  const input = JSON.parse(
    '{"__proto__": {"polluted": true}, "a": {"__proto__": 1}}',
  ) as JsonObject;
  assert.deepEqual(getPath(input, ["__proto__", "polluted"]), true);
  const copy = deepCopy(input) as JsonObject;
  assert.ok(Object.hasOwn(copy, "__proto__"));
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.ok(jsonEqual(copy, input));
  const out: JsonObject = {};
  setPath(out, ["__proto__", "x"], 1);
  setPath(out, ["b", "__proto__"], 2);
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.equal(({} as Record<string, unknown>).x, undefined, "Object.prototype untouched");
  assert.equal(JSON.stringify(out), '{"__proto__":{"x":1},"b":{"__proto__":2}}');
  const s: JsonObject = {};
  setKey(s, "__proto__", { y: 1 });
  assert.deepEqual(Object.keys(s), ["__proto__"]);
  deletePath(out, ["__proto__", "x"]);
  assert.equal(JSON.stringify(out), '{"__proto__":{},"b":{"__proto__":2}}');
});

Deno.test("deepCopy: no shared containers", () => {
  const v: JsonObject = { a: [{ b: 1 }], c: { d: null } };
  const c = deepCopy(v) as JsonObject;
  assert.deepEqual(c, v);
  assert.notEqual(c.a, v.a);
  assert.notEqual((c.a as JsonObject[])[0], (v.a as JsonObject[])[0]);
  assert.notEqual(c.c, v.c);
  assert.equal(deepCopy("s"), "s");
  assert.equal(deepCopy(null), null);
});

Deno.test("jsonEqual: numbers by value, maps by key set, arrays by position, no cross-type equality", () => {
  assert.ok(jsonEqual(1, 1.0));
  assert.ok(jsonEqual(0, -0));
  assert.ok(jsonEqual(null, null));
  assert.ok(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2.0 }], a: 1 }));
  assert.ok(!jsonEqual("1", 1));
  assert.ok(!jsonEqual(true, 1));
  assert.ok(!jsonEqual(null, {}));
  assert.ok(!jsonEqual([], {}));
  assert.ok(!jsonEqual({}, []));
  assert.ok(!jsonEqual([1, 2], [2, 1]));
  assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: undefined as never }));
  assert.ok(!jsonEqual({ a: 1, b: 2 }, { a: 1, c: 2 }));
  assert.ok(!jsonEqual(NaN, NaN));
});

Deno.test("typeName", () => {
  assert.deepEqual([null, [], {}, "s", 1, true].map(typeName), [
    "null",
    "array",
    "map",
    "string",
    "number",
    "boolean",
  ]);
});
