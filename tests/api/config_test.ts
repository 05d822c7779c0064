import assert from "node:assert/strict";
import { z } from "zod";
import {
  ConversionRuleSchema,
  CRDConversionConfigSchema,
  engineSpecOf,
  parseConfig,
  RULE_PARAMS_KEYS,
  XRDConversionConfigSchema,
} from "../../src/api/mod.ts";
import {
  type ConversionConfigSpec,
  PARAMS_KEYS,
  paramsKeyOf,
  STRATEGY_NAMES,
  structuralError,
} from "../../src/engine/mod.ts";

function crdConfig(rules: unknown[], spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "CRDConversionConfig",
    metadata: { name: "c" },
    spec: {
      targetCRD: { name: "t.example.com" },
      hubVersion: "v2",
      spokes: [{ version: "v1", rules }],
      ...spec,
    },
  };
}

function errorsOf(obj: unknown): string[] {
  const r = parseConfig(obj);
  assert.equal(r.ok, false, "expected the config to be rejected");
  return r.ok ? [] : r.errors;
}

/** A valid params block for every strategy (docs/strategies.md). */
const BLOCKS: Record<string, unknown> = {
  fieldRename: { hubPath: "spec.a", spokePath: "spec.b" },
  scalarToObject: {
    hubPath: "spec.a",
    spokePath: "spec.b",
    key: "k",
    defaultsForOtherKeys: { m: { x: [1] } },
  },
  objectToScalar: { hubPath: "spec.a", spokePath: "spec.b", key: "k" },
  singletonArrayToObject: { hubPath: "spec.a", spokePath: "spec.b" },
  objectToSingletonArray: { hubPath: "spec.a", spokePath: "spec.b" },
  fieldsToMap: {
    hubPaths: ["spec.a"],
    spokeMapPath: "spec.m",
    keyNames: { "spec.a": "a" },
    onUnknownSpokeKey: "Drop",
  },
  mapToFields: { hubMapPath: "spec.m", spokePaths: ["spec.a"], onUnknownHubKey: "Error" },
  toAnnotation: { hubPath: "spec.a", key: "x/y", serialization: "JSON", restoreOnReverse: true },
  toLabel: { hubPath: "spec.a", key: "tier", serialization: "String" },
  fromAnnotation: { spokePath: "spec.a", key: "x/y", stashOnReverse: true },
  fromLabel: { spokePath: "spec.a", key: "tier", serialization: "String" },
  enumRemap: {
    path: "spec.a",
    mapping: [{ hub: true, spoke: "on" }, { hub: 1, spoke: null }],
    onUnmappedHubValue: "Drop",
  },
  defaultValue: { path: "spec.a", existsOn: "Spoke", default: { any: ["json"] } },
  constant: { path: "spec.a", existsOn: "Hub", value: 2 },
  delete: { path: "spec.a", existsOn: "Spoke" },
  jsonPatch: {
    hubToSpoke: [{ op: "move", from: "/spec/a", path: "/spec/b" }],
    spokeToHub: [{ op: "add", path: "/spec/a", value: { deep: [null] } }],
    losslessOverride: true,
  },
  forEach: { hubItemsPath: "spec.l", spokeItemsPath: "spec.k", rules: [] },
  typeCoerce: { path: "spec.a", onFractionalInteger: "Round" },
  scalarToFields: {
    hubPath: "spec.a",
    pattern: "(?P<v>\\d+)",
    spokeFields: { v: "spec.v" },
    joinTemplate: "{{.v}}",
    losslessOverride: false,
  },
  fieldsToScalar: {
    hubFields: { v: "spec.v" },
    pattern: "(?P<v>\\d+)",
    spokePath: "spec.a",
    joinTemplate: "{{.v}}",
  },
  arrayToMapByKey: { hubPath: "spec.a", spokePath: "spec.b", keyField: "name" },
  mapToArrayByKey: { hubPath: "spec.a", spokePath: "spec.b", keyField: "name" },
  numericScale: { hubPath: "spec.a", spokePath: "spec.b", factor: 1024 },
  listJoin: { hubPath: "spec.a", spokePath: "spec.b", separator: "," },
  listSplit: { hubPath: "spec.a", spokePath: "spec.b", separator: "" },
  quantity: { hubPath: "spec.a", spokePath: "spec.b" },
  duration: { hubPath: "spec.a", spokePath: "spec.b" },
  mapKeyRename: { hubPath: "spec.a", spokePath: "spec.b", renames: { app: "application" } },
  cel: { hubPaths: ["spec.a"], spokePaths: ["spec.b"], hubToSpoke: "{}", spokeToHub: "{}" },
};

Deno.test("all 29 params blocks are accepted, one rule per strategy", () => {
  assert.equal(STRATEGY_NAMES.length, 29);
  assert.deepEqual([...RULE_PARAMS_KEYS].sort(), [...PARAMS_KEYS].sort());
  assert.deepEqual(Object.keys(BLOCKS).sort(), [...PARAMS_KEYS].sort());
  const rules = STRATEGY_NAMES.map((strategy) => ({
    strategy,
    [paramsKeyOf(strategy)]: BLOCKS[paramsKeyOf(strategy)],
    ...(strategy === "CEL" ? { acknowledgeLossy: true } : {}),
  }));
  const r = parseConfig(crdConfig(rules));
  assert.ok(r.ok, r.ok ? "" : r.errors.join("\n"));
  assert.equal(r.config.spec.spokes[0].rules?.length, 29);
  // Free-form values come through untouched.
  assert.deepEqual(r.config.spec.spokes[0].rules?.[11].enumRemap?.mapping[1], {
    hub: 1,
    spoke: null,
  });
  // And the engine's structural stage is happy with every rule.
  assert.equal(structuralError(engineSpecOf(r.config)), undefined);
});

Deno.test("an unknown key in any params block is rejected with its path", () => {
  for (const [key, block] of Object.entries(BLOCKS)) {
    const errors = errorsOf(
      crdConfig([{ strategy: "FieldRename", [key]: { ...(block as object), typo: 1 } }]),
    );
    assert.deepEqual(errors, [`spec.spokes[0].rules[0].${key}.typo: unrecognized key`]);
  }
});

Deno.test("unknown keys are rejected at every level, inside nested forEach rules too", () => {
  const nested = (rules: unknown[]) => ({
    strategy: "ForEach",
    forEach: { hubItemsPath: "a", spokeItemsPath: "b", rules },
  });
  assert.deepEqual(
    errorsOf(
      crdConfig([
        nested([
          nested([{ strategy: "FieldRename", fieldRename: { hubPth: "a", spokePath: "b" } }]),
        ]),
      ]),
    ),
    [
      "spec.spokes[0].rules[0].forEach.rules[0].forEach.rules[0].fieldRename.hubPath: required",
      "spec.spokes[0].rules[0].forEach.rules[0].forEach.rules[0].fieldRename.hubPth: unrecognized key" +
      ' (did you mean "hubPath"?)',
    ],
  );
  assert.deepEqual(
    errorsOf(
      crdConfig([{ strategy: "Delete", delete: { path: "a", existsOn: "Hub" }, reson: "x" }]),
    ),
    [
      'spec.spokes[0].rules[0].reson: unrecognized key (did you mean "reason"?)',
    ],
  );
  assert.deepEqual(errorsOf({ ...crdConfig([]), extra: true }), ["extra: unrecognized key"]);
  assert.deepEqual(errorsOf(crdConfig([], { targetXRD: { name: "x" } })), [
    'spec.targetXRD: unrecognized key (did you mean "targetCRD"?)',
  ]);
  assert.deepEqual(
    errorsOf(
      crdConfig([{
        strategy: "FieldRename",
        when: { path: "a", equal: 1 },
        fieldRename: BLOCKS.fieldRename,
      }]),
    ),
    ['spec.spokes[0].rules[0].when.equal: unrecognized key (did you mean "equals"?)'],
  );
});

Deno.test("a third ForEach level decodes, and the structural stage rejects it", () => {
  const forEach = (rules: unknown[]) => ({
    strategy: "ForEach",
    forEach: { hubItemsPath: "a", spokeItemsPath: "b", rules },
  });
  const r = parseConfig(crdConfig([forEach([forEach([forEach([])])])]));
  assert.ok(r.ok);
  assert.match(
    structuralError(engineSpecOf(r.config)) ?? "",
    /nesting depth exceeds the supported maximum of 2/,
  );
});

Deno.test("params-block exclusivity and matching are left to the engine", () => {
  const twoBlocks = parseConfig(
    crdConfig([{
      strategy: "FieldRename",
      fieldRename: BLOCKS.fieldRename,
      delete: BLOCKS.delete,
    }]),
  );
  assert.ok(twoBlocks.ok);
  assert.match(structuralError(engineSpecOf(twoBlocks.config)) ?? "", /exactly one params block/);
  const noBlock = parseConfig(crdConfig([{ strategy: "FieldRename" }]));
  assert.ok(noBlock.ok);
  // CEL without acknowledgeLossy and FromLabel JSON are structural errors, not decode errors.
  assert.ok(parseConfig(crdConfig([{ strategy: "CEL", cel: BLOCKS.cel }])).ok);
  assert.ok(
    parseConfig(
      crdConfig([{
        strategy: "FromLabel",
        fromLabel: { spokePath: "a", key: "k", serialization: "JSON" },
      }]),
    ).ok,
  );
});

Deno.test("defaults are applied to the spec", () => {
  const r = parseConfig(crdConfig([], { spokes: [{ version: "v1" }] }));
  assert.ok(r.ok);
  assert.deepEqual(r.config.spec, {
    targetCRD: { name: "t.example.com" },
    hubVersion: "v2",
    spokes: [{ version: "v1", rules: [] }],
    conversionReviewVersions: ["v1"],
    unmappedFieldPolicy: "Error",
    driftPolicy: "KeepServingStale",
  });
  // Explicit values win; `rules: null` (an empty YAML value) is kept for the engine.
  const explicit = parseConfig(crdConfig([], {
    spokes: [{ version: "v1", rules: null }],
    conversionReviewVersions: ["v1", "v1beta1"],
    unmappedFieldPolicy: "Warn",
    unmappedFieldReason: "legacy",
    driftPolicy: "FailClosed",
  }));
  assert.ok(explicit.ok);
  assert.equal(explicit.config.spec.spokes[0].rules, null);
  assert.deepEqual(explicit.config.spec.conversionReviewVersions, ["v1", "v1beta1"]);
  assert.equal(explicit.config.spec.driftPolicy, "FailClosed");
  // Params-level CRD defaults are not applied offline (the engine substitutes the same ones).
  const rule = ConversionRuleSchema.parse({
    strategy: "ToAnnotation",
    toAnnotation: { hubPath: "a", key: "k" },
  });
  assert.deepEqual(rule, { strategy: "ToAnnotation", toAnnotation: { hubPath: "a", key: "k" } });
});

Deno.test("wrong types and enum values name the path", () => {
  assert.deepEqual(
    errorsOf(
      crdConfig([{ strategy: "Rename", delete: { path: 3, existsOn: "Both" } }], {
        unmappedFieldPolicy: "Ignore",
      }),
    ),
    [
      'spec.spokes[0].rules[0].strategy: must be one of "FieldRename", "ScalarToObject", "ObjectToScalar", ' +
      '"SingletonArrayToObject", "ObjectToSingletonArray", "FieldsToMap", "MapToFields", "ToAnnotation", "ToLabel", ' +
      '"FromAnnotation", "FromLabel", "EnumRemap", "DefaultValue", "Constant", "Delete", "JSONPatch", "ForEach", ' +
      '"TypeCoerce", "ScalarToFields", "FieldsToScalar", "ArrayToMapByKey", "MapToArrayByKey", "NumericScale", ' +
      '"ListJoin", "ListSplit", "Quantity", "Duration", "MapKeyRename", "CEL", got "Rename"',
      "spec.spokes[0].rules[0].delete.path: expected a string, got a number",
      'spec.spokes[0].rules[0].delete.existsOn: must be one of "Hub", "Spoke", got "Both"',
      'spec.unmappedFieldPolicy: must be one of "Error", "Warn", got "Ignore"',
    ],
  );
  assert.deepEqual(errorsOf({ ...crdConfig([]), apiVersion: "terasky.com/v1" }), [
    'apiVersion: must be "terasky.com/v1alpha1", got "terasky.com/v1"',
  ]);
  assert.deepEqual(errorsOf(crdConfig([], { hubVersion: undefined, spokes: "v1" })), [
    "spec.hubVersion: required",
    "spec.spokes: expected a list, got a string",
  ]);
  assert.deepEqual(
    errorsOf(
      crdConfig([{
        strategy: "Constant",
        constant: { path: "a", existsOn: "Hub", value: Infinity },
      }]),
    ),
    ["spec.spokes[0].rules[0].constant.value: expected a JSON value"],
  );
});

Deno.test("conversionReviewVersions: a set of v1/v1beta1 that contains v1", () => {
  const versions = (v: unknown) => crdConfig([], { conversionReviewVersions: v });
  for (const ok of [["v1"], ["v1", "v1beta1"], ["v1beta1", "v1"], []]) {
    const r = parseConfig(versions(ok));
    assert.ok(r.ok, JSON.stringify(ok));
    assert.deepEqual(r.config.spec.conversionReviewVersions, ok);
  }
  const rule = 'spec.conversionReviewVersions: must contain "v1" (an empty list means ["v1"]); ' +
    'the ConversionReview versions are "v1" and "v1beta1"';
  assert.deepEqual(errorsOf(versions(["v1beta1"])), [rule]);
  assert.deepEqual(errorsOf(versions(["v1beta1", "v1beta1"])), [
    "spec.conversionReviewVersions: must not list a version twice",
    rule,
  ]);
  assert.deepEqual(errorsOf(versions(["v1", "v2"])), [
    'spec.conversionReviewVersions[1]: must be one of "v1", "v1beta1", got "v2"',
  ]);
  assert.deepEqual(errorsOf(versions(["v1", "v1"])), [
    "spec.conversionReviewVersions: must not list a version twice",
  ]);
});

Deno.test("kind dispatch: missing and unknown kinds; XRD configs need targetXRD", () => {
  assert.deepEqual(errorsOf({ apiVersion: "terasky.com/v1alpha1" }), ["kind: missing kind"]);
  assert.deepEqual(errorsOf({ kind: "Widget" }), [
    'kind: unrecognized kind "Widget" (expected XRDConversionConfig or CRDConversionConfig)',
  ]);
  const xrd = parseConfig({
    apiVersion: "terasky.com/v1alpha1",
    kind: "XRDConversionConfig",
    metadata: { name: "x", labels: { a: "b" }, uid: "u" },
    spec: {
      targetXRD: { name: "xthings.example.com" },
      hubVersion: "v2",
      spokes: [{ version: "v1" }],
    },
    status: {
      phase: "Applied",
      conditions: [{ type: "Validated", status: "True" }],
      futureField: 1,
    },
  });
  assert.ok(xrd.ok);
  assert.equal(xrd.config.kind, "XRDConversionConfig");
  assert.deepEqual(errorsOf({ ...crdConfig([]), kind: "XRDConversionConfig" }), [
    "spec.targetXRD: required",
    'spec.targetCRD: unrecognized key (did you mean "targetXRD"?)',
  ]);
});

Deno.test("a parsed spec is the engine's ConversionConfigSpec", () => {
  const r = parseConfig(
    crdConfig([{
      strategy: "FieldRename",
      fieldRename: BLOCKS.fieldRename,
      when: { path: "spec.x", equals: [1] },
    }]),
  );
  assert.ok(r.ok);
  const spec: ConversionConfigSpec = r.config.spec; // compile-time check
  assert.deepEqual(spec.spokes[0].rules?.[0].when, { path: "spec.x", equals: [1] });
});

Deno.test("the schemas convert to structural OpenAPI: no $ref, no unions, free-form marked", () => {
  for (const schema of [CRDConversionConfigSchema, XRDConversionConfigSchema]) {
    const json = JSON.stringify(z.toJSONSchema(schema, { io: "input", target: "openapi-3.0" }));
    assert.ok(!json.includes("$ref"), "no $ref");
    assert.ok(!json.includes("anyOf") && !json.includes("oneOf"), "no unions");
    assert.ok(json.includes('"x-kubernetes-preserve-unknown-fields":true'));
    assert.ok(json.includes('"minItems":1'));
  }
});
