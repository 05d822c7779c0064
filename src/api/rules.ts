/**
 * The rule vocabulary of the config kinds: one params block per strategy (what each block holds is
 * docs/strategies.md), `when`, and the nesting of `forEach` (three levels, built out explicitly
 * because a CRD schema cannot recurse). Free-form JSON values become
 * `x-kubernetes-preserve-unknown-fields` nodes. The schemas do not check "exactly one params
 * block" or "the block matches the strategy": the engine's structural and translation stages
 * report those with the right diagnostic classes.
 */
import { z } from "zod";
import { type JsonValue, STRATEGY_NAMES, type StrategyName } from "../engine/mod.ts";
import { stringMap } from "./meta.ts";

// ---------------------------------------------------------------------------------------------
// Free-form JSON

/** Plain JSON data: what a YAML/JSON decode of a manifest yields (finite numbers only). */
export function isJsonValue(v: unknown): v is JsonValue {
  if (v === null) return true;
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v);
    case "bigint": // an int64 beyond 2^53, read exactly
      return true;
    case "object":
      if (Array.isArray(v)) return v.every(isJsonValue);
      if (Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) {
        return false;
      }
      return Object.values(v).every(isJsonValue);
    default:
      return false;
  }
}

/**
 * Any JSON value (`default`, `value`, `equals`, enum mapping sides, ...). Typed as JsonValue so
 * parsed configs feed the engine without casts; in a CRD it becomes a preserve-unknown-fields node.
 */
export const jsonValue = z.unknown()
  .refine(isJsonValue, { message: "expected a JSON value" })
  .meta({ "x-kubernetes-preserve-unknown-fields": true }) as unknown as z.ZodType<JsonValue>;

export const jsonMap = z.record(z.string(), jsonValue);

/** An enum whose CRD default is applied in-cluster only; the engine substitutes the same default. */
export function policy<const T extends readonly [string, ...string[]]>(
  values: T,
  crdDefault: T[number],
  description: string,
) {
  return z.enum(values).optional().meta({ default: crdDefault }).describe(description);
}

const UNKNOWN_KEY_POLICIES = ["Error", "Drop"] as const;
const SERIALIZATIONS = ["JSON", "String"] as const;
const SIDES = ["Hub", "Spoke"] as const;
const FRACTIONAL_INTEGER_POLICIES = ["Error", "Truncate", "Round"] as const;
const JSON_PATCH_OPS = ["add", "remove", "replace", "move", "copy", "test"] as const;

// ---------------------------------------------------------------------------------------------
// Field descriptions (what `kubectl explain` prints)

/** A dotted field path on one side (`spec.size`), saying what the field holds there. */
function pathOn(side: "hub" | "spoke", what = "the field") {
  return z.string().describe(
    `Dotted path on the ${side} version (e.g. spec.size) of ${what}.`,
  );
}

function pathsOn(side: "hub" | "spoke", what: string) {
  return z.array(z.string()).describe(`Dotted paths on the ${side} version of ${what}.`);
}

/** `hubPath`/`spokePath`, with what each one holds. */
function hubSpokePaths(hub = "the field", spoke = "the field") {
  return { hubPath: pathOn("hub", hub), spokePath: pathOn("spoke", spoke) };
}

const OPTIONAL_JSON = "Any JSON value.";

const existsOn = z.enum(SIDES).describe(
  "The version that has the field: converting towards it writes the value, converting away " +
    "drops the field.",
);

const losslessOverride = z.boolean().optional().describe(
  "Declares the rule lossless in both directions (dco cannot prove it); otherwise it is lossy " +
    "and needs acknowledgeLossy.",
);

// ---------------------------------------------------------------------------------------------
// Params blocks, one per strategy

const fieldRename = z.strictObject({ ...hubSpokePaths() });

/** `ScalarToObject` (the scalar on the hub) and `ObjectToScalar` (the object on the hub). */
function scalarObject(hub: "scalar" | "object") {
  const spoke = hub === "scalar" ? "object" : "scalar";
  return z.strictObject({
    ...hubSpokePaths(`the ${hub}`, `the ${spoke}`),
    key: z.string().describe("The object key that holds the scalar."),
    defaultsForOtherKeys: jsonMap.optional().describe(
      "Values for the object's other keys when the scalar is wrapped (key → JSON value).",
    ),
  });
}

/** `SingletonArrayToObject` (the list on the hub) and `ObjectToSingletonArray`. */
function singleton(hub: "list" | "element") {
  const spoke = hub === "list" ? "element" : "list";
  const what = { list: "the one-element list", element: "the list's element" };
  return z.strictObject({ ...hubSpokePaths(what[hub], what[spoke]) });
}

const keyNames = (side: "hub" | "spoke") =>
  stringMap.optional().describe(
    `Map key per ${side} path (${side} path → key); by default a field's key is its last path ` +
      "segment.",
  );

const fieldsToMap = z.strictObject({
  hubPaths: pathsOn("hub", "the fields that become map entries"),
  spokeMapPath: pathOn("spoke", "the map"),
  keyNames: keyNames("hub"),
  onUnknownSpokeKey: policy(
    UNKNOWN_KEY_POLICIES,
    "Error",
    "A spoke map key that names no field: Error fails the conversion, Drop ignores it (lossy).",
  ),
});

const mapToFields = z.strictObject({
  hubMapPath: pathOn("hub", "the map"),
  spokePaths: pathsOn("spoke", "the fields that become map entries"),
  keyNames: keyNames("spoke"),
  onUnknownHubKey: policy(
    UNKNOWN_KEY_POLICIES,
    "Error",
    "A hub map key that names no field: Error fails the conversion, Drop ignores it (lossy).",
  ),
});

const metadataKey = (where: string) =>
  z.string().describe(`The ${where} key (e.g. example.com/tier) that stores the value.`);

/** `fromLabel` accepts only `String`; a `toLabel` value must make a valid label value. */
function serialization(crdDefault: typeof SERIALIZATIONS[number], note = "") {
  return policy(
    SERIALIZATIONS,
    crdDefault,
    "How the value is stored: JSON (compact, keys sorted) or String (the value must be a " +
      `string)${note}.`,
  );
}

function toMetadata(where: "annotation" | "label") {
  return z.strictObject({
    hubPath: pathOn("hub", "the hub-only field"),
    key: metadataKey(where),
    serialization: serialization(
      "JSON",
      where === "label" ? "; the result must be a valid label value (use String for strings)" : "",
    ),
    restoreOnReverse: z.boolean().optional().describe(
      `Restores the hub field from the ${where} on the way back (and removes the ${where}); ` +
        "otherwise the field is lost.",
    ),
  });
}

/** `fromAnnotation`/`fromLabel`: they differ only in the default serialization. */
function fromMetadata(where: "annotation" | "label", serial: typeof SERIALIZATIONS[number]) {
  return z.strictObject({
    spokePath: pathOn("spoke", `the spoke-only field, filled from the hub object's ${where}`),
    key: metadataKey(where),
    serialization: serialization(serial, where === "label" ? "; labels allow only String" : ""),
    stashOnReverse: z.boolean().optional().describe(
      `Stashes the spoke field in the hub object's ${where} on the way to the hub, so it comes ` +
        "back; otherwise the field is lost.",
    ),
  });
}

const fromAnnotation = fromMetadata("annotation", "JSON");

/** `JSON` is accepted here so the structural stage can reject it with its own class. */
const fromLabel = fromMetadata("label", "String");

const enumRemap = z.strictObject({
  path: z.string().describe("Dotted path of the field, the same on both versions."),
  mapping: z.array(z.strictObject({
    hub: jsonValue.optional().describe(`The hub value. ${OPTIONAL_JSON}`),
    spoke: jsonValue.optional().describe(`The spoke value. ${OPTIONAL_JSON}`),
  })).describe("Pairs of equivalent values."),
  onUnmappedHubValue: policy(
    UNKNOWN_KEY_POLICIES,
    "Error",
    "A hub value with no mapping: Error fails the conversion, Drop omits the field (lossy).",
  ),
  onUnmappedSpokeValue: policy(
    UNKNOWN_KEY_POLICIES,
    "Error",
    "A spoke value with no mapping: Error fails the conversion, Drop omits the field (lossy).",
  ),
});

const onePath = z.string().describe("Dotted path of the field on the version named by existsOn.");

const defaultValue = z.strictObject({
  path: onePath,
  existsOn,
  default: jsonValue.optional().describe(
    `The value written when converting towards existsOn. ${OPTIONAL_JSON}`,
  ),
});

const constant = z.strictObject({
  path: onePath,
  existsOn,
  value: jsonValue.optional().describe(
    `The value always written when converting towards existsOn. ${OPTIONAL_JSON}`,
  ),
});

const deleteField = z.strictObject({ path: onePath, existsOn });

const jsonPatchOperation = z.strictObject({
  op: z.enum(JSON_PATCH_OPS).describe("The RFC 6902 operation."),
  path: z.string().describe("JSON pointer of the target location (e.g. /spec/flag)."),
  from: z.string().optional().describe("JSON pointer of the source (move and copy)."),
  value: jsonValue.optional().describe(
    "The value for add, replace and test; null or omitted writes (or tests for) null.",
  ),
});

const jsonPatch = z.strictObject({
  hubToSpoke: z.array(jsonPatchOperation).optional().describe(
    "RFC 6902 operations applied converting hub → spoke.",
  ),
  spokeToHub: z.array(jsonPatchOperation).optional().describe(
    "RFC 6902 operations applied converting spoke → hub.",
  ),
  losslessOverride,
});

const typeCoerce = z.strictObject({
  path: z.string().describe(
    "Dotted path of the field, the same on both versions, whose type differs between them.",
  ),
  onFractionalInteger: policy(
    FRACTIONAL_INTEGER_POLICIES,
    "Error",
    "A fraction converted to an integer: Error fails, Truncate cuts toward zero, Round rounds " +
      "half away from zero.",
  ),
});

const pattern = z.string().describe(
  "RE2 pattern whose named groups ((?P<name>...)) split the string; unanchored unless ^...$.",
);
const joinTemplate = z.string().describe(
  "Go text/template joining the fields back into the string, e.g. {{.value}}{{.unit}}.",
);

const scalarToFields = z.strictObject({
  hubPath: pathOn("hub", "the string"),
  pattern,
  spokeFields: stringMap.describe("Spoke field per capture group (group name → spoke path)."),
  joinTemplate,
  losslessOverride,
});

const fieldsToScalar = z.strictObject({
  hubFields: stringMap.describe("Hub field per capture group (group name → hub path)."),
  pattern,
  spokePath: pathOn("spoke", "the string"),
  joinTemplate,
  losslessOverride,
});

const keyField = z.string().describe(
  "The item field whose (string) value is the map key; it is left out of the map entry.",
);

const arrayToMapByKey = z.strictObject({
  ...hubSpokePaths("the list of objects", "the map"),
  keyField,
});

const mapToArrayByKey = z.strictObject({
  ...hubSpokePaths("the map", "the list of objects"),
  keyField,
});

const numericScale = z.strictObject({
  ...hubSpokePaths("the number", "the number"),
  factor: z.number().describe("hub = spoke × factor (not 0)."),
});

/** The separator may be empty (split into code points), so it is optional and unvalidated. */
function listJoinSplit(hub: string, spoke: string) {
  return z.strictObject({
    ...hubSpokePaths(hub, spoke),
    separator: z.string().optional().describe(
      'Text between the items in the string; empty (the default "") splits into characters.',
    ),
  });
}

const quantity = z.strictObject({
  ...hubSpokePaths(
    "the quantity string or the integer of milli-units",
    "the quantity string or the integer of milli-units",
  ),
});

const duration = z.strictObject({
  ...hubSpokePaths(
    "the Go duration string or the integer of seconds",
    "the Go duration string or the integer of seconds",
  ),
});

const mapKeyRename = z.strictObject({
  ...hubSpokePaths("the map", "the map"),
  renames: stringMap.describe("New key per old key (hub key → spoke key); other keys are kept."),
});

const cel = z.strictObject({
  hubPaths: pathsOn("hub", "the fields the rule accounts for"),
  spokePaths: pathsOn("spoke", "the fields the rule accounts for"),
  hubToSpoke: z.string().describe(
    "CEL expression over `object` (the hub object) returning a map of spoke path → value.",
  ),
  spokeToHub: z.string().describe(
    "CEL expression over `object` (the spoke object) returning a map of hub path → value.",
  ),
});

/** `the params of <Strategy>` for every block. */
function params<B extends z.ZodType>(strategy: string, block: B) {
  return block.describe(
    `Parameters of the ${strategy} strategy (set exactly the block of the rule's strategy).`,
  );
}

/** Every params block except `forEach` (whose nested rule type depends on the nesting level). */
const PARAMS_BLOCKS = {
  fieldRename: params("FieldRename", fieldRename),
  scalarToObject: params("ScalarToObject", scalarObject("scalar")),
  objectToScalar: params("ObjectToScalar", scalarObject("object")),
  singletonArrayToObject: params("SingletonArrayToObject", singleton("list")),
  objectToSingletonArray: params("ObjectToSingletonArray", singleton("element")),
  fieldsToMap: params("FieldsToMap", fieldsToMap),
  mapToFields: params("MapToFields", mapToFields),
  toAnnotation: params("ToAnnotation", toMetadata("annotation")),
  toLabel: params("ToLabel", toMetadata("label")),
  fromAnnotation: params("FromAnnotation", fromAnnotation),
  fromLabel: params("FromLabel", fromLabel),
  enumRemap: params("EnumRemap", enumRemap),
  defaultValue: params("DefaultValue", defaultValue),
  constant: params("Constant", constant),
  delete: params("Delete", deleteField),
  jsonPatch: params("JSONPatch", jsonPatch),
  typeCoerce: params("TypeCoerce", typeCoerce),
  scalarToFields: params("ScalarToFields", scalarToFields),
  fieldsToScalar: params("FieldsToScalar", fieldsToScalar),
  arrayToMapByKey: params("ArrayToMapByKey", arrayToMapByKey),
  mapToArrayByKey: params("MapToArrayByKey", mapToArrayByKey),
  numericScale: params("NumericScale", numericScale),
  listJoin: params("ListJoin", listJoinSplit("the list", "the string")),
  listSplit: params("ListSplit", listJoinSplit("the string", "the list")),
  quantity: params("Quantity", quantity),
  duration: params("Duration", duration),
  mapKeyRename: params("MapKeyRename", mapKeyRename),
  cel: params("CEL", cel),
};

const when = z.strictObject({
  path: z.string().describe("Dotted path of a field present on both versions."),
  equals: jsonValue.optional().describe(`The value the field must equal. ${OPTIONAL_JSON}`),
}).describe("Applies the rule only to objects whose field at path equals the given value.");

/** One rule at a given ForEach level; `nestedRules` is the type of its `forEach.rules`. */
function ruleSchema<R extends z.ZodType>(nestedRules: R) {
  const optionalBlocks = Object.fromEntries(
    Object.entries(PARAMS_BLOCKS).map(([key, block]) => [key, block.optional()]),
  ) as { [K in keyof typeof PARAMS_BLOCKS]: z.ZodOptional<typeof PARAMS_BLOCKS[K]> };
  return z.strictObject({
    strategy: z.enum(STRATEGY_NAMES).describe(
      "The conversion strategy; the rule sets the params block named after it (fieldRename " +
        "for FieldRename).",
    ),
    acknowledgeLossy: z.boolean().optional().meta({ default: false }).describe(
      "Must be true when the rule loses information in either direction.",
    ),
    reason: z.string().optional().describe("Free text for reviewers, e.g. why a loss is fine."),
    when: when.optional(),
    ...optionalBlocks,
    forEach: z.strictObject({
      hubItemsPath: pathOn("hub", "the list"),
      spokeItemsPath: pathOn("spoke", "the list"),
      rules: nestedRules.optional().describe(
        "Rules applied to every item, with paths relative to one item (at most two levels of " +
          "forEach).",
      ),
    }).optional().describe("Parameters of the ForEach strategy: rules applied per list item."),
  });
}

/**
 * A third ForEach level is always rejected by the structural stage ("nesting depth exceeds the
 * supported maximum of 2"); its rules are kept free-form so that check, not the decode, reports it.
 */
const rulesAtDepth2 = z.array(ruleSchema(z.array(jsonValue)));
const rulesAtDepth1 = z.array(ruleSchema(rulesAtDepth2));
export const ConversionRuleSchema = ruleSchema(rulesAtDepth1);

export type ConversionRule = z.infer<typeof ConversionRuleSchema>;

/** Every params key the rule schema accepts (one per strategy, 29 in all). */
export const RULE_PARAMS_KEYS: readonly string[] = [...Object.keys(PARAMS_BLOCKS), "forEach"];

export function isStrategyName(name: string): name is StrategyName {
  return (STRATEGY_NAMES as readonly string[]).includes(name);
}
