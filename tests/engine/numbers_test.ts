/**
 * Numbers in the engine: int64 values beyond 2^53 (bigints) are carried and computed exactly, or
 * the conversion fails with a message — never a silent rounding, never ±Infinity written as null.
 */
import assert from "node:assert/strict";
import { CelProgram } from "../../src/engine/cel_env.ts";
import { type ConversionRuleSpec, type JsonValue } from "../../src/engine/mod.ts";
import { assertConversionError, resource } from "./_checks.ts";
import { h2s, pairPlan, s2h } from "./_helpers.ts";
import { arr, free, int, num, obj, root, str } from "./_schemas.ts";

const scale = (factor: number, hub: "int" | "num" = "int", spoke: "int" | "num" = "int") =>
  pairPlan(
    root({ ns: hub === "int" ? int() : num() }),
    root({ us: spoke === "int" ? int() : num() }),
    [{
      strategy: "NumericScale",
      numericScale: { hubPath: "spec.ns", spokePath: "spec.us", factor },
      acknowledgeLossy: true,
      reason: "rounding",
    }],
  );

const toHub = (plan: ReturnType<typeof scale>, us: JsonValue) =>
  (s2h(plan, resource({ spec: { us } })).spec as { ns: JsonValue }).ns;
const toSpoke = (plan: ReturnType<typeof scale>, ns: JsonValue) =>
  (h2s(plan, resource({ spec: { ns } })).spec as { us: JsonValue }).us;

Deno.test("NumericScale on int64 beyond 2^53 is exact both ways", () => {
  const plan = scale(1000);
  assert.equal(toHub(plan, 9007199254740993n), 9007199254740993000n);
  assert.equal(toSpoke(plan, 9007199254740993001n), 9007199254740993n);
  // Half away from zero, on the exact value.
  assert.equal(toSpoke(plan, 9007199254740993500n), 9007199254740994n);
  assert.equal(toSpoke(plan, -9007199254740993500n), -9007199254740994n);
  assert.equal(toSpoke(plan, -9223372036854775808n), -9223372036854776n);
  // A safe input whose product passes 2^53: doubles would give 27021597764222972.
  assert.equal(toHub(scale(3), 9007199254740991), 27021597764222973n);
  // A fractional factor is taken as written: 0.001 is one thousandth.
  assert.equal(toHub(scale(0.001), 9007199254740993000n), 9007199254740993n);
  // Below 2^53 nothing changes: doubles, as before.
  assert.equal(toHub(plan, 1.5), 1500);
  assert.equal(toSpoke(plan, 2500), 3);
});

Deno.test("NumericScale fails when the result cannot be represented", () => {
  const plan = scale(1000);
  assertConversionError(
    () => toHub(plan, 9223372036854775807n),
    "spec.us: multiplying by 1000 gives 9223372036854775807000, beyond the int64 range",
  );
  assertConversionError(
    () => toHub(scale(1e10, "num", "num"), 1e300),
    "spec.us: multiplying by 10000000000 gives a value beyond the double range",
  );
  assertConversionError(
    () => toSpoke(scale(1e-10, "num", "num"), 1e300),
    "spec.ns: dividing by 1e-10 gives a value beyond the double range",
  );
});

Deno.test("NumericScale into a number field: exact when whole, else the nearest double", () => {
  const plan = scale(1e9, "int", "num");
  assert.equal(toSpoke(plan, 1764590400123456789n), 1764590400.1234568);
  assert.equal(toSpoke(plan, 9007199254740993000000000n), 9007199254740993n);
});

Deno.test("CEL: int results are int64-exact; bigint input is a CEL int", () => {
  const at = [{ segments: ["x"], dotted: "x" }];
  const run = (source: string, input = {}) => CelProgram.compile(source).evaluate(input, at)[0];
  assert.equal(run("{'x': 35184372088832 * 256 + 1}"), 9007199254740993n);
  assert.equal(run("{'x': -9223372036854775807 - 1}"), -9223372036854775808n);
  assert.equal(run("{'x': 9007199254740993u}"), 9007199254740993n);
  assert.equal(run("{'x': 18446744073709551615u}"), 18446744073709551615); // beyond int64: double
  assert.equal(run("{'x': 12 * 3}"), 36);
  const big = { spec: { n: 9007199254740993n } };
  assert.equal(run("{'x': object.spec.n + 2}", big), 9007199254740995n);
  assert.equal(run("{'x': string(object.spec.n)}", big), "9007199254740993");
  assert.equal(run("{'x': double(object.spec.n) > 1.0}", big), true);
  assert.throws(() => run("{'x': object.spec.n * 1024}", big), /overflow/);
});

Deno.test("CEL: an int64 survives a result map unchanged", () => {
  const rule: ConversionRuleSpec = {
    strategy: "CEL",
    cel: {
      hubToSpoke: "{'spec.copy': object.spec.n}",
      spokeToHub: "{'spec.n': object.spec.copy}",
      hubPaths: ["spec.n"],
      spokePaths: ["spec.copy"],
    },
    acknowledgeLossy: true,
    reason: "CEL",
  };
  const plan = pairPlan(root({ n: int() }), root({ copy: int() }), [rule]);
  const spoke = h2s(plan, resource({ spec: { n: 9223372036854775807n } }));
  assert.deepEqual(spoke.spec, { copy: 9223372036854775807n });
  assert.deepEqual(s2h(plan, spoke).spec, { n: 9223372036854775807n });
});

Deno.test("JSONPatch copy and move keep bigints; test compares them by value", () => {
  const plan = pairPlan(
    root({ a: int(), b: int(), c: free() }),
    root({ a: int(), b: int(), c: free(), d: free(), e: int() }),
    [{
      strategy: "JSONPatch",
      jsonPatch: {
        hubToSpoke: [
          { op: "test", path: "/spec/a", value: 9007199254740993 },
          { op: "copy", from: "/spec/c", path: "/spec/d" },
          { op: "move", from: "/spec/a", path: "/spec/e" },
          { op: "move", from: "/spec/b", path: "/spec/c" },
        ],
        spokeToHub: [],
        losslessOverride: true,
      },
    }],
  );
  // The config literal is a double (as the cluster reads configs): test still matches by value
  // only when the value is exactly that double; 9007199254740993 became 9007199254740992.
  assertConversionError(
    () => h2s(plan, resource({ spec: { a: 9007199254740993n, b: 1, c: { v: 1 } } })),
    "values differ",
  );
  const out = h2s(
    plan,
    resource({
      spec: { a: 9007199254740992n, b: -9223372036854775808n, c: { v: 9223372036854775807n } },
    }),
  );
  assert.deepEqual(out.spec, {
    c: -9223372036854775808n,
    d: { v: 9223372036854775807n },
    e: 9007199254740992n,
  });
});

Deno.test("EnumRemap: an int64 value matches its exact key; a config double matches its value", () => {
  const plan = pairPlan(root({ code: int() }), root({ code: str() }), [{
    strategy: "EnumRemap",
    enumRemap: {
      path: "spec.code",
      mapping: [{ hub: 9007199254740992, spoke: "two-to-the-53" }, { hub: 1, spoke: "one" }],
    },
  }]);
  assert.deepEqual(h2s(plan, resource({ spec: { code: 9007199254740992n } })).spec, {
    code: "two-to-the-53",
  });
  assertConversionError(
    () => h2s(plan, resource({ spec: { code: 9007199254740993n } })),
    "hub value 9007199254740993 has no mapping",
  );
  assert.deepEqual(s2h(plan, resource({ spec: { code: "two-to-the-53" } })).spec, {
    code: 9007199254740992,
  });
});

Deno.test("carry and ArrayToMapByKey carry bigints as values, both ways", () => {
  const plan = pairPlan(
    root({ kept: int(), items: arr(obj({ name: str(), n: int() })) }),
    root({ kept: int(), byName: { type: "object", additionalProperties: obj({ n: int() }) } }),
    [{
      strategy: "ArrayToMapByKey",
      arrayToMapByKey: { hubPath: "spec.items", spokePath: "spec.byName", keyField: "name" },
      acknowledgeLossy: true,
      reason: "map order",
    }],
  );
  const hub = resource({
    spec: { kept: -9223372036854775808n, items: [{ name: "a", n: 9223372036854775807n }] },
  });
  const spoke = h2s(plan, hub);
  assert.deepEqual(spoke.spec, {
    kept: -9223372036854775808n,
    byName: { a: { n: 9223372036854775807n } },
  });
  assert.deepEqual(s2h(plan, spoke), hub);
});

Deno.test("ToAnnotation: a bigint is stashed as its digits and restored exactly", () => {
  const KEY = "demo.example.com/n";
  const plan = pairPlan(root({ n: int(), keep: int() }), root({ keep: int() }), [{
    strategy: "ToAnnotation",
    toAnnotation: { hubPath: "spec.n", key: KEY, restoreOnReverse: true },
  }]);
  const hub = resource({ spec: { n: 9007199254740993n, keep: 1 } });
  const spoke = h2s(plan, hub);
  assert.equal(
    (spoke.metadata as { annotations: Record<string, string> }).annotations[KEY],
    "9007199254740993",
  );
  assert.deepEqual(s2h(plan, spoke), hub);
  for (const bad of ["1e400", "-1e400"]) {
    assertConversionError(
      () => s2h(plan, resource({ spec: { keep: 1 } }, { name: "g", annotations: { [KEY]: bad } })),
      "cannot restore spec.n",
      "outside the range of a double",
    );
  }
});

Deno.test("FieldsToScalar join template prints an int64 as its digits", () => {
  const plan = pairPlan(
    root({ size: str() }),
    root({ size: obj({ value: int(), unit: str() }) }),
    [{
      strategy: "ScalarToFields",
      scalarToFields: {
        hubPath: "spec.size",
        pattern: "^(?P<value>\\d+)(?P<unit>[A-Za-z]+)$",
        spokeFields: { value: "spec.size.value", unit: "spec.size.unit" },
        joinTemplate: "{{.value}}{{.unit}}",
      },
      acknowledgeLossy: true,
      reason: "split by a pattern",
    }],
  );
  const hub = s2h(plan, resource({ spec: { size: { value: 9007199254740993n, unit: "Gi" } } }));
  assert.deepEqual(hub.spec, { size: "9007199254740993Gi" });
});
