import assert from "node:assert/strict";
import {
  type ConversionRuleSpec,
  invertRule,
  RehubError,
  rehubSpec,
  type SchemaSource,
  STRATEGY_NAMES,
} from "../../src/engine/mod.ts";

/** One rule of every strategy, written so that inverting it twice gives it back. */
const RULES: ConversionRuleSpec[] = [
  { strategy: "FieldRename", fieldRename: { hubPath: "spec.a", spokePath: "spec.b" } },
  {
    strategy: "ScalarToObject",
    scalarToObject: {
      hubPath: "spec.a",
      spokePath: "spec.b",
      key: "v",
      defaultsForOtherKeys: { u: 1 },
    },
  },
  {
    strategy: "ObjectToScalar",
    objectToScalar: { hubPath: "spec.a", spokePath: "spec.b", key: "v" },
  },
  {
    strategy: "SingletonArrayToObject",
    singletonArrayToObject: { hubPath: "spec.a", spokePath: "spec.b" },
  },
  {
    strategy: "ObjectToSingletonArray",
    objectToSingletonArray: { hubPath: "spec.a", spokePath: "spec.b" },
  },
  {
    strategy: "FieldsToMap",
    fieldsToMap: {
      hubPaths: ["spec.x", "spec.y"],
      spokeMapPath: "spec.m",
      keyNames: { "spec.x": "X" },
      onUnknownSpokeKey: "Drop",
    },
  },
  {
    strategy: "MapToFields",
    mapToFields: { hubMapPath: "spec.m", spokePaths: ["spec.x"], onUnknownHubKey: "Error" },
  },
  {
    strategy: "ToAnnotation",
    toAnnotation: { hubPath: "spec.a", key: "k", serialization: "JSON", restoreOnReverse: true },
  },
  { strategy: "ToLabel", toLabel: { hubPath: "spec.a", key: "k", serialization: "String" } },
  {
    strategy: "FromAnnotation",
    fromAnnotation: { spokePath: "spec.a", key: "k", stashOnReverse: true },
  },
  { strategy: "FromLabel", fromLabel: { spokePath: "spec.a", key: "k", serialization: "String" } },
  {
    strategy: "EnumRemap",
    enumRemap: {
      path: "spec.e",
      mapping: [{ hub: "A", spoke: "a" }],
      onUnmappedHubValue: "Drop",
      onUnmappedSpokeValue: "Error",
    },
  },
  { strategy: "DefaultValue", defaultValue: { path: "spec.d", existsOn: "Hub", default: 3 } },
  { strategy: "Constant", constant: { path: "spec.d", existsOn: "Spoke", value: "x" } },
  {
    strategy: "Delete",
    delete: { path: "spec.d", existsOn: "Hub" },
    acknowledgeLossy: true,
    reason: "gone",
  },
  {
    strategy: "JSONPatch",
    jsonPatch: {
      hubToSpoke: [{ op: "remove", path: "/spec/a" }],
      spokeToHub: [],
      losslessOverride: true,
    },
  },
  {
    strategy: "ForEach",
    forEach: {
      hubItemsPath: "spec.items",
      spokeItemsPath: "spec.list",
      rules: [{ strategy: "FieldRename", fieldRename: { hubPath: "a", spokePath: "b" } }],
    },
  },
  { strategy: "TypeCoerce", typeCoerce: { path: "spec.n" }, when: { path: "spec.k", equals: 1 } },
  {
    strategy: "ScalarToFields",
    scalarToFields: {
      hubPath: "spec.s",
      pattern: "^(?P<v>\\d+)$",
      spokeFields: { v: "spec.v" },
      joinTemplate: "{{.v}}",
    },
  },
  {
    strategy: "FieldsToScalar",
    fieldsToScalar: {
      hubFields: { v: "spec.v" },
      pattern: "^(?P<v>\\d+)$",
      spokePath: "spec.s",
      joinTemplate: "{{.v}}",
    },
  },
  {
    strategy: "ArrayToMapByKey",
    arrayToMapByKey: { hubPath: "spec.a", spokePath: "spec.b", keyField: "name" },
  },
  {
    strategy: "MapToArrayByKey",
    mapToArrayByKey: { hubPath: "spec.a", spokePath: "spec.b", keyField: "name" },
  },
  { strategy: "NumericScale", numericScale: { hubPath: "spec.a", spokePath: "spec.b", factor: 4 } },
  { strategy: "ListJoin", listJoin: { hubPath: "spec.a", spokePath: "spec.b", separator: "," } },
  { strategy: "ListSplit", listSplit: { hubPath: "spec.a", spokePath: "spec.b" } },
  { strategy: "Quantity", quantity: { hubPath: "spec.a", spokePath: "spec.b" } },
  { strategy: "Duration", duration: { hubPath: "spec.a", spokePath: "spec.b" } },
  {
    strategy: "MapKeyRename",
    mapKeyRename: { hubPath: "spec.a", spokePath: "spec.b", renames: { x: "y" } },
  },
  {
    strategy: "CEL",
    cel: {
      hubPaths: ["spec.a"],
      spokePaths: ["spec.b"],
      hubToSpoke: "{'spec.b': 1}",
      spokeToHub: "{'spec.a': 1}",
    },
  },
];

Deno.test("rehub: every strategy has an inverse, and inverting twice gives the rule back", () => {
  assert.deepEqual(new Set(RULES.map((r) => r.strategy)), new Set(STRATEGY_NAMES));
  for (const rule of RULES) {
    assert.deepEqual(invertRule(invertRule(rule, "r"), "r"), rule, rule.strategy);
  }
});

Deno.test("rehub: inverses swap sides, policies and directions", () => {
  const inv = (i: number) => invertRule(RULES[i], "r");
  assert.deepEqual(inv(0), {
    strategy: "FieldRename",
    fieldRename: { hubPath: "spec.b", spokePath: "spec.a" },
  });
  assert.deepEqual(inv(5), {
    strategy: "MapToFields",
    mapToFields: {
      hubMapPath: "spec.m",
      spokePaths: ["spec.x", "spec.y"],
      keyNames: { "spec.x": "X" },
      onUnknownHubKey: "Drop",
    },
  });
  assert.deepEqual(inv(7), {
    strategy: "FromAnnotation",
    fromAnnotation: { spokePath: "spec.a", key: "k", serialization: "JSON", stashOnReverse: true },
  });
  assert.deepEqual(inv(14).delete, { path: "spec.d", existsOn: "Spoke" });
  assert.equal(inv(14).reason, "gone");
  assert.deepEqual(inv(22).numericScale, { hubPath: "spec.b", spokePath: "spec.a", factor: 0.25 });
  assert.deepEqual(inv(27).mapKeyRename, {
    hubPath: "spec.b",
    spokePath: "spec.a",
    renames: { y: "x" },
  });
  assert.throws(
    () =>
      invertRule({
        strategy: "ToLabel",
        toLabel: { hubPath: "spec.a", key: "k", serialization: "JSON" },
      }, "r"),
    RehubError,
  );
});

const leaf = { type: "string" };
const schemaOf = (fields: string[]) => ({
  type: "object",
  properties: {
    spec: { type: "object", properties: Object.fromEntries(fields.map((f) => [f, leaf])) },
  },
});
const SOURCE: SchemaSource = {
  kind: "CRD",
  name: "things.demo.example.com",
  group: "demo.example.com",
  targetKind: "Thing",
  versions: [
    { name: "v1", served: true, storage: false, schema: schemaOf(["b"]) },
    { name: "v2", served: true, storage: true, schema: schemaOf(["a"]) },
    { name: "v3", served: true, storage: false, schema: schemaOf(["a"]) },
  ],
};
const RENAME_A_B = {
  strategy: "FieldRename",
  fieldRename: { hubPath: "spec.a", spokePath: "spec.b" },
};

Deno.test("rehub: the old hub becomes the first spoke; other spokes follow the moved paths", () => {
  const spec = {
    hubVersion: "v2",
    spokes: [
      { version: "v3", rules: [] },
      { version: "v1", rules: [RENAME_A_B] },
    ],
  };
  assert.deepEqual(rehubSpec(spec, SOURCE, "v1"), {
    hubVersion: "v1",
    spokes: [
      {
        version: "v2",
        rules: [{
          strategy: "FieldRename",
          fieldRename: { hubPath: "spec.b", spokePath: "spec.a" },
        }],
      },
      // v3 shared spec.a with the old hub (copied without a rule); the new hub calls it spec.b.
      {
        version: "v3",
        rules: [{
          strategy: "FieldRename",
          fieldRename: { hubPath: "spec.b", spokePath: "spec.a" },
        }],
      },
    ],
  });
  const rewritten = rehubSpec(
    {
      hubVersion: "v2",
      spokes: [{ version: "v1", rules: [RENAME_A_B] }, {
        version: "v3",
        rules: [{ strategy: "TypeCoerce", typeCoerce: { path: "spec.a" } }],
      }],
    },
    SOURCE,
    "v1",
  );
  // The hub-side path moves; the spoke side still has spec.a, so it is lifted with a rename.
  assert.deepEqual(rewritten.spokes[1].rules, [
    { strategy: "TypeCoerce", typeCoerce: { path: "spec.b" } },
    { strategy: "FieldRename", fieldRename: { hubPath: "spec.b", spokePath: "spec.a" } },
  ]);
});

Deno.test("rehub: what cannot be drafted", () => {
  const spec = { hubVersion: "v2", spokes: [{ version: "v1", rules: [RENAME_A_B] }] };
  assert.throws(() => rehubSpec(spec, SOURCE, "v2"), /v2 is already the hub/);
  assert.throws(
    () => rehubSpec(spec, SOURCE, "v9"),
    /v9 is not a spoke of the config \(spokes: v1\)/,
  );
  const cel = { hubVersion: "v2", spokes: [{ version: "v1", rules: [RULES[28]] }] };
  assert.throws(
    () => rehubSpec(cel, SOURCE, "v1"),
    /spec\.spokes\[0\]\.rules\[0\]: a CEL rule in the promoted spoke/,
  );
  const twice = {
    hubVersion: "v2",
    spokes: [{
      version: "v1",
      rules: [RENAME_A_B, {
        strategy: "FieldRename",
        fieldRename: { hubPath: "spec.a", spokePath: "spec.c" },
      }],
    }],
  };
  assert.throws(
    () => rehubSpec(twice, SOURCE, "v1"),
    /hub path spec\.a moves to both spec\.b and spec\.c/,
  );
});
