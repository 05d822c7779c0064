/**
 * CEL: the standard environment, double/int semantics, result writing in both forms, compile
 * diagnostics and the per-evaluation cost bound.
 */
import assert from "node:assert/strict";
import { CEL_COST_LIMIT, CelCompileError, CelProgram } from "../../src/engine/cel_env.ts";
import {
  type AnalysisResult,
  type ConversionConfigSpec,
  ConversionError,
  type ConversionRuleSpec,
  type Direction,
  type JsonObject,
  type JsonValue,
  type SchemaNode,
  structuralError,
} from "../../src/engine/mod.ts";
import { analyzeRules, classes, convertOne, spoke } from "./_spec_rules.ts";

const int = { type: "integer" };
const num = { type: "number" };
const anything = { type: "object", "x-kubernetes-preserve-unknown-fields": true };

function config(rules: ConversionRuleSpec[]): ConversionConfigSpec {
  return {
    targetCRD: { name: "gadgets.demo.example.com" },
    hubVersion: "v2",
    spokes: [{ version: "v1", rules }],
  };
}

/** The converted object's spec (`{}` when the output has none). */
function convert(result: AnalysisResult, direction: Direction, spec: JsonObject): JsonObject {
  return (convertOne(result, direction, { spec }).spec ?? {}) as JsonObject;
}

const celRule = (params: JsonObject, acknowledgeLossy = true): ConversionRuleSpec => ({
  strategy: "CEL",
  cel: params,
  acknowledgeLossy,
  reason: "computed",
});

// Scenario 49.
const PACKED = {
  hubPaths: ["spec.packed"],
  spokePaths: ["spec.bitHigh", "spec.bitLow"],
  hubToSpoke:
    '{"spec.bitHigh": int(object.spec.packed) / 256, "spec.bitLow": int(object.spec.packed) % 256}',
  spokeToHub: '{"spec.packed": int(object.spec.bitHigh) * 256 + int(object.spec.bitLow)}',
};
const packedAnalysis = (params: JsonObject = PACKED) =>
  analyzeRules({ packed: int }, { bitHigh: int, bitLow: int }, [celRule(params)]);

Deno.test("CEL: 1025 ↔ {bitHigh: 4, bitLow: 1} via dotted result keys", () => {
  const a = packedAnalysis();
  const r = spoke(a);
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.ruleResults[0].lossless, { hubToSpoke: false, spokeToHub: false });
  assert.deepEqual(r.ruleResults[0].hubPaths, ["spec.packed"]);
  assert.deepEqual(r.ruleResults[0].spokePaths, ["spec.bitHigh", "spec.bitLow"]);
  const s = convert(a, "hubToSpoke", { packed: 1025 });
  assert.deepEqual(s, { bitHigh: 4, bitLow: 1 });
  assert.equal(typeof s.bitHigh, "number"); // CEL ints are written as JSON numbers
  assert.deepEqual(convert(a, "spokeToHub", s), { packed: 1025 });
});

Deno.test("CEL: evaluation is unconditional: a missing input field is an error", () => {
  assert.throws(
    () => convert(packedAnalysis(), "hubToSpoke", {}),
    (e: unknown) =>
      e instanceof ConversionError &&
      /CEL hubToSpoke: .*no such key|field not found: packed/.test(e.message),
  );
});

Deno.test("CEL: a missing acknowledgement is a structural error", () => {
  const rule = celRule(PACKED, false);
  assert.match(structuralError(config([rule])) ?? "", /CEL.*acknowledgeLossy/);
  // Analysis on its own reports both directions lossy and unacknowledged.
  const r = spoke(analyzeRules({ packed: int }, { bitHigh: int, bitLow: int }, [rule]));
  assert.deepEqual(classes(r), ["unacknowledged-lossy", "unacknowledged-lossy"]);
});

Deno.test("CEL: the nested result form works as well as the dotted one", () => {
  const a = packedAnalysis({
    ...PACKED,
    hubToSpoke:
      '{"spec": {"bitHigh": int(object.spec.packed) / 256, "bitLow": int(object.spec.packed) % 256}}',
  });
  assert.deepEqual(convert(a, "hubToSpoke", { packed: 1025 }), { bitHigh: 4, bitLow: 1 });
  // Nested first, then the dotted key; absent in both writes nothing; extra keys are ignored.
  const b = packedAnalysis({
    ...PACKED,
    hubToSpoke: '{"spec": {"bitHigh": 1}, "spec.bitHigh": 2, "spec.bitLow": 3, "other": 4}',
  });
  assert.deepEqual(convert(b, "hubToSpoke", { packed: 0 }), { bitHigh: 1, bitLow: 3 });
  const c = packedAnalysis({ ...PACKED, hubToSpoke: '{"spec.bitHigh": 7}' });
  assert.deepEqual(convert(c, "hubToSpoke", {}), { bitHigh: 7 });
});

Deno.test("CEL: result values — doubles, strings, bools, null, lists and maps pass through", () => {
  const a = analyzeRules({ n: num }, { out: anything }, [celRule({
    hubPaths: ["spec.n"],
    spokePaths: ["spec.out"],
    hubToSpoke:
      '{"spec.out": {"d": object.spec.n / 2.0, "i": 3, "u": 4u, "s": "x", "b": true, "z": null, "l": [1, 2.5], "m": {"k": "v"}}}',
    spokeToHub: '{"spec.n": 1.5}',
  })]);
  assert.deepEqual(convert(a, "hubToSpoke", { n: 5 }), {
    out: { d: 2.5, i: 3, u: 4, s: "x", b: true, z: null, l: [1, 2.5], m: { k: "v" } },
  });
  assert.deepEqual(convert(a, "spokeToHub", {}), { n: 1.5 });
});

Deno.test("CEL: results that are not maps or not JSON are errors", () => {
  const withH2S = (hubToSpoke: string) =>
    analyzeRules({ n: num }, { out: anything }, [celRule({
      hubPaths: ["spec.n"],
      spokePaths: ["spec.out"],
      hubToSpoke,
      spokeToHub: '{"spec.n": 1.0}',
    })]);
  assert.throws(() => convert(withH2S("1"), "hubToSpoke", {}), /result must be a map, got int/);
  assert.throws(
    () => convert(withH2S('{"spec.out": timestamp("2020-01-01T00:00:00Z")}'), "hubToSpoke", {}),
    /cannot be written as JSON/,
  );
  assert.throws(
    () => convert(withH2S('{"spec.out": {1: "a"}}'), "hubToSpoke", {}),
    /map key 1 is not a string/,
  );
  assert.throws(
    () => convert(withH2S('{"spec.out": b"abc"}'), "hubToSpoke", {}),
    /bytes value cannot be written as JSON/,
  );
});

/** Evaluates `{"r": <expr>}` against `object` and returns r. */
function evalR(expr: string, object: JsonObject = {}): JsonValue | undefined {
  return CelProgram.compile(`{"r": ${expr}}`).evaluate(object, [{ segments: ["r"], dotted: "r" }])[
    0
  ];
}

Deno.test("CEL: JSON numbers are doubles; int arithmetic needs int()", () => {
  const object = { spec: { n: 1025, neg: -7.9 } };
  assert.throws(() => evalR("object.spec.n + 1", object), /no matching overload for '_\+_'/);
  assert.equal(evalR("object.spec.n + 1.0", object), 1026);
  assert.equal(evalR("int(object.spec.n) / 256", object), 4);
  assert.equal(evalR("int(object.spec.neg)", object), -7); // truncation toward zero
  assert.equal(evalR("-7 / 2"), -3);
  assert.equal(evalR("-7 % 2"), -1); // the dividend's sign
  assert.equal(evalR("type(object.spec.n) == double", object), true);
  assert.equal(evalR("object.spec.n == 1025", object), true); // heterogeneous equality at runtime
  assert.throws(() => evalR("9223372036854775807 + 1"), /overflow/);
  assert.throws(() => evalR("int(1e30)"), /overflow/);
  assert.throws(() => evalR("1 / 0"), /divide by zero/);
});

Deno.test("CEL: standard macros and functions", () => {
  const object = { spec: { l: [1, 2, 3], s: "hello", m: { a: 1, z: null } } };
  assert.deepEqual(evalR("object.spec.l.map(x, x * 2.0)", object), [2, 4, 6]);
  assert.deepEqual(evalR("object.spec.l.map(x, x > 1.0, x * 10.0)", object), [20, 30]);
  assert.deepEqual(evalR("object.spec.l.filter(x, x > 1.0)", object), [2, 3]);
  assert.equal(evalR("object.spec.l.all(x, x > 0.0)", object), true);
  assert.equal(evalR("object.spec.l.exists(x, x == 2.0)", object), true);
  assert.equal(evalR("object.spec.l.exists_one(x, x > 2.0)", object), true);
  assert.equal(evalR("size(object.spec.l) + size(object.spec.s)", object), 8);
  assert.equal(
    evalR(
      "object.spec.s.startsWith('he') && object.spec.s.endsWith('lo') && object.spec.s.contains('ll')",
      object,
    ),
    true,
  );
  assert.equal(evalR("object.spec.s.matches('^h.*o$')", object), true);
  assert.equal(evalR("string(int(object.spec.m.a)) + '!'", object), "1!");
  assert.equal(evalR("has(object.spec.m.a) && !has(object.spec.m.b)", object), true);
  // A present null is present (has() and `in` in cel-go; the library alone says otherwise).
  assert.equal(evalR("has(object.spec.m.z)", object), true);
  assert.equal(evalR("'z' in object.spec.m", object), true);
  assert.equal(evalR("'q' in object.spec.m", object), false);
  assert.equal(evalR("2.0 in object.spec.l", object), true);
  assert.throws(() => evalR("has(object.spec.s.x)", object), /cannot select field x from a string/);
  assert.throws(() => evalR("object.spec.missing", object), /field not found: missing/);
  assert.throws(() => evalR("'a'.matches('a(?=b)')"), /error parsing regexp/);
});

Deno.test("CEL: the checker refuses what cel-go's standard environment refuses", () => {
  const bad: [string, RegExp][] = [
    ["foo", /undeclared reference to 'foo'/],
    ["object.spec.s.split(',')", /undeclared reference to 'split'/],
    ["object.spec.s.lowerAscii()", /undeclared reference to 'lowerAscii'/],
    ["object.spec.s.replace('a', 'b')", /undeclared reference to 'replace'/],
    ["'%s'.format(['x'])", /undeclared reference to 'format'/],
    ["math.greatest(1, 2)", /undeclared reference/],
    ["cel.bind(x, 1, x)", /undeclared reference/],
    ["'a' + 1", /no matching overload for '_\+_' applied to '\(string, int\)'/],
    ["1 == 1.0", /no matching overload for '_==_'/],
    ["size(1)", /no matching overload for 'size'/],
    ["size('a', 'b')", /no matching overload for 'size' with 2/],
    ["true ? 1 : 'a'", /no matching overload for '_\?_:_'/],
    ["'abc'.x", /does not support field selection/],
    ["1.map(x, x)", /cannot be the range of a comprehension/],
    ["{1.0: 2}", /unsupported map key type/],
    ["google.protobuf.Timestamp{seconds: 1}", /message construction/],
    ["object.?spec", /expecting/],
    ["1 +", /expecting/],
    ["object.l.all(k, v, true)", /undeclared reference/],
    ["   ", /empty/],
    ["1" + " + 1".repeat(300), /nests deeper than 250/],
  ];
  for (const [src, why] of bad) {
    assert.throws(() => CelProgram.compile(src), (e: unknown) => {
      assert.ok(e instanceof CelCompileError, `${src}: ${e}`);
      assert.match(e.message, why, src);
      return true;
    });
  }
  for (
    const ok of [
      "object",
      "type(1) == int && type('') == string && type(null) == null_type",
      "dyn(1) + 2",
      "object.a + 1",
      "object.spec.items.map(i, i.name)",
      "[1, 'a']",
      "{'a': 1, 'b': 'x'}",
      "timestamp('2020-01-01T00:00:00Z') + duration('1s') > timestamp('2020-01-01T00:00:00Z')",
      "'x' in object && object.x > 1.5",
    ]
  ) {
    assert.ok(CelProgram.compile(ok), ok);
  }
});

Deno.test("CEL: compile diagnostics are invalid-parameter / path-not-found; no op is built", () => {
  const diag = (params: JsonObject) =>
    spoke(analyzeRules({ packed: int }, { bitHigh: int, bitLow: int }, [celRule(params)]));
  assert.deepEqual(classes(diag({ ...PACKED, hubPaths: [] })), [
    "invalid-parameter",
    "uncovered-field",
  ]);
  assert.deepEqual(classes(diag({ ...PACKED, spokePaths: [] })), [
    "invalid-parameter",
    "uncovered-field",
    "uncovered-field",
  ]);
  assert.deepEqual(classes(diag({ ...PACKED, hubToSpoke: "" })), ["invalid-parameter"]);
  const { spokeToHub: _, ...noS2H } = PACKED;
  assert.deepEqual(classes(diag(noS2H)), ["invalid-parameter"]);
  const split = diag({ ...PACKED, hubToSpoke: '{"spec.bitHigh": object.spec.s.split(",")}' });
  assert.deepEqual(classes(split), ["invalid-parameter"]);
  assert.match(split.errors[0].message, /hubToSpoke: invalid CEL expression: .*split/);
  assert.equal(split.plan, undefined);
  assert.deepEqual(classes(diag({ ...PACKED, hubPaths: ["spec.packed", "spec.nope"] })), [
    "path-not-found",
  ]);
});

Deno.test("CEL: inside ForEach, object is the element", () => {
  const items = (props: Record<string, SchemaNode>): SchemaNode => ({
    type: "array",
    items: { type: "object", properties: props },
  });
  const a = analyzeRules({ disks: items({ sizeMiB: int }) }, { disks: items({ sizeGiB: num }) }, [{
    strategy: "ForEach",
    forEach: {
      hubItemsPath: "spec.disks",
      spokeItemsPath: "spec.disks",
      rules: [celRule({
        hubPaths: ["sizeMiB"],
        spokePaths: ["sizeGiB"],
        hubToSpoke: '{"sizeGiB": object.sizeMiB / 1024.0}',
        spokeToHub: '{"sizeMiB": int(object.sizeGiB * 1024.0)}',
      })],
    },
    acknowledgeLossy: true,
  }]);
  assert.deepEqual(convert(a, "hubToSpoke", { disks: [{ sizeMiB: 512 }, { sizeMiB: 2048 }] }), {
    disks: [{ sizeGiB: 0.5 }, { sizeGiB: 2 }],
  });
});

Deno.test("CEL: a runaway evaluation is stopped by the cost bound", () => {
  const l = Array.from({ length: 3000 }, (_, i) => i);
  // 9,000,000 inner iterations: far past the bound, stopped early.
  assert.throws(
    () => evalR("size(object.l.map(a, object.l.map(b, a + b)))", { l }),
    (e: unknown) =>
      e instanceof ConversionError && e.message.includes(`cost limit of ${CEL_COST_LIMIT}`),
  );
  assert.throws(() => evalR("object.l.all(a, object.l.all(b, true))", { l }), /cost limit/);
  // Without any input: a value doubling 40 times, compared and written out.
  const doubled = "[[1]]" + ".map(b, [b, b])".repeat(40);
  assert.throws(() => evalR(`${doubled} == ${doubled}`), /cost limit/);
  assert.throws(() => evalR(doubled), /cost limit/);
  // A list doubled 40 times by lazy concatenation, then iterated.
  assert.throws(
    () => evalR(`[[1]]${".map(b, b + b)".repeat(40)}[0].exists(e, e == 2.0)`),
    /cost limit/,
  );
  // A string doubling 40 times.
  assert.throws(() => evalR(`size(["ab"]${".map(s, s + s)".repeat(40)}[0])`), /cost limit/);
});

Deno.test("CEL: ordinary work on large inputs stays within the bound and linear", () => {
  const l = Array.from({ length: 50_000 }, (_, i) => i);
  assert.equal((evalR("object.l.map(x, x * 2.0)", { l }) as number[]).length, 50_000);
  assert.equal((evalR("object.l.filter(x, x < 10.0)", { l }) as number[]).length, 10);
  assert.equal(evalR("object.l.exists(x, x == 49999.0)", { l }), true);
});

Deno.test("CEL: the same program evaluates independently each time", () => {
  const p = CelProgram.compile('{"r": object.l.map(x, x + 1.0)}');
  const at = [{ segments: ["r"], dotted: "r" }];
  assert.deepEqual(p.evaluate({ l: [1, 2] }, at), [[2, 3]]);
  assert.deepEqual(p.evaluate({ l: [5] }, at), [[6]]);
  assert.deepEqual(p.evaluate({ l: [] }, at), [[]]);
});
