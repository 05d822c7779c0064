/**
 * Re-hubbing a config: the spec that makes a current spoke the hub. The promoted spoke's rules
 * are inverted into the old hub's rules; the paths they move give a map old-hub path → new-hub
 * path, through which every other spoke's hub-side paths are rewritten. Pure: the caller analyses
 * the draft.
 *
 * NumericScale is inverted with factor 1/factor (hub = spoke × factor must keep holding with the
 * sides swapped).
 */
import { flatten } from "./schema.ts";
import type { ConversionConfigSpec, ConversionRuleSpec, SchemaSource, SpokeSpec } from "./types.ts";

/** A draft that cannot be made; the message says which rule and why. */
export class RehubError extends Error {
  override name = "RehubError";
}

type Params = Record<string, unknown>;

const obj = (v: unknown): Params =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? v as Params : {};
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
const stringMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(obj(v)).filter(([, x]) => typeof x === "string")) as Record<
    string,
    string
  >;

/** Drops undefined values so the draft prints only what is set. */
function defined(p: Params): Params {
  return Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined));
}

/** The params block of a rule (its key is the lower-camel strategy name; JSONPatch, CEL differ). */
function keyOf(strategy: string): string {
  if (strategy === "JSONPatch") return "jsonPatch";
  if (strategy === "CEL") return "cel";
  return strategy[0].toLowerCase() + strategy.slice(1);
}

function paramsOf(rule: ConversionRuleSpec): Params {
  return obj(rule[keyOf(rule.strategy)]);
}

/** The rule with `strategy` and `params`, keeping acknowledgeLossy, reason and when. */
function withParams(
  rule: ConversionRuleSpec,
  strategy: string,
  params: Params,
): ConversionRuleSpec {
  const out: ConversionRuleSpec = { strategy };
  if (rule.acknowledgeLossy !== undefined) out.acknowledgeLossy = rule.acknowledgeLossy;
  if (rule.reason !== undefined) out.reason = rule.reason;
  if (rule.when !== undefined) out.when = rule.when;
  out[keyOf(strategy)] = defined(params);
  return out;
}

const SWAPPED_PAIRS: Record<string, string> = {
  ScalarToObject: "ObjectToScalar",
  ObjectToScalar: "ScalarToObject",
  SingletonArrayToObject: "ObjectToSingletonArray",
  ObjectToSingletonArray: "SingletonArrayToObject",
  ArrayToMapByKey: "MapToArrayByKey",
  MapToArrayByKey: "ArrayToMapByKey",
  ListJoin: "ListSplit",
  ListSplit: "ListJoin",
};

function restrict(keyNames: unknown, paths: string[]): Record<string, string> | undefined {
  if (keyNames === undefined) return undefined;
  const names = stringMap(keyNames);
  return Object.fromEntries(paths.filter((p) => p in names).map((p) => [p, names[p]]));
}

/** The same rule written from the other side (the spoke becomes the hub). */
export function invertRule(rule: ConversionRuleSpec, where: string): ConversionRuleSpec {
  const p = paramsOf(rule);
  const s = rule.strategy;
  const swap = { hubPath: p.spokePath, spokePath: p.hubPath };
  switch (s) {
    case "FieldRename":
    case "Quantity":
    case "Duration":
      return withParams(rule, s, { ...p, ...swap });
    case "ScalarToObject":
    case "ObjectToScalar":
    case "SingletonArrayToObject":
    case "ObjectToSingletonArray":
    case "ArrayToMapByKey":
    case "MapToArrayByKey":
    case "ListJoin":
    case "ListSplit":
      return withParams(rule, SWAPPED_PAIRS[s], { ...p, ...swap });
    case "FieldsToMap": {
      const paths = strings(p.hubPaths);
      return withParams(rule, "MapToFields", {
        hubMapPath: p.spokeMapPath,
        spokePaths: paths,
        keyNames: restrict(p.keyNames, paths),
        onUnknownHubKey: p.onUnknownSpokeKey,
      });
    }
    case "MapToFields": {
      const paths = strings(p.spokePaths);
      return withParams(rule, "FieldsToMap", {
        hubPaths: paths,
        spokeMapPath: p.hubMapPath,
        keyNames: restrict(p.keyNames, paths),
        onUnknownSpokeKey: p.onUnknownHubKey,
      });
    }
    case "ToAnnotation":
    case "ToLabel": {
      const label = s === "ToLabel";
      if (label && p.serialization === "JSON") {
        throw new RehubError(
          `${where}: a ToLabel with serialization JSON has no FromLabel inverse`,
        );
      }
      return withParams(rule, label ? "FromLabel" : "FromAnnotation", {
        spokePath: p.hubPath,
        key: p.key,
        serialization: label ? p.serialization ?? "String" : p.serialization,
        stashOnReverse: p.restoreOnReverse,
      });
    }
    case "FromAnnotation":
    case "FromLabel": {
      const label = s === "FromLabel";
      return withParams(rule, label ? "ToLabel" : "ToAnnotation", {
        hubPath: p.spokePath,
        key: p.key,
        serialization: label ? p.serialization ?? "String" : p.serialization,
        restoreOnReverse: p.stashOnReverse,
      });
    }
    case "EnumRemap":
      return withParams(rule, s, {
        path: p.path,
        mapping: Array.isArray(p.mapping)
          ? p.mapping.map((m) => defined({ hub: obj(m).spoke, spoke: obj(m).hub }))
          : p.mapping,
        onUnmappedHubValue: p.onUnmappedSpokeValue,
        onUnmappedSpokeValue: p.onUnmappedHubValue,
      });
    case "DefaultValue":
    case "Constant":
    case "Delete":
      return withParams(rule, s, { ...p, existsOn: p.existsOn === "Hub" ? "Spoke" : "Hub" });
    case "JSONPatch":
      return withParams(rule, s, { ...p, hubToSpoke: p.spokeToHub, spokeToHub: p.hubToSpoke });
    case "ForEach":
      return withParams(rule, s, {
        hubItemsPath: p.spokeItemsPath,
        spokeItemsPath: p.hubItemsPath,
        rules: Array.isArray(p.rules)
          ? p.rules.map((r, i) =>
            invertRule(r as ConversionRuleSpec, `${where}.forEach.rules[${i}]`)
          )
          : p.rules,
      });
    case "TypeCoerce":
      return withParams(rule, s, p);
    case "ScalarToFields":
      return withParams(rule, "FieldsToScalar", {
        hubFields: p.spokeFields,
        pattern: p.pattern,
        spokePath: p.hubPath,
        joinTemplate: p.joinTemplate,
        losslessOverride: p.losslessOverride,
      });
    case "FieldsToScalar":
      return withParams(rule, "ScalarToFields", {
        hubPath: p.spokePath,
        pattern: p.pattern,
        spokeFields: p.hubFields,
        joinTemplate: p.joinTemplate,
        losslessOverride: p.losslessOverride,
      });
    case "NumericScale": {
      if (typeof p.factor !== "number" || p.factor === 0) {
        throw new RehubError(`${where}: NumericScale needs a non-zero factor to be inverted`);
      }
      return withParams(rule, s, { ...swap, factor: 1 / p.factor });
    }
    case "MapKeyRename": {
      const renames = stringMap(p.renames);
      const inverted: Record<string, string> = {};
      for (const [from, to] of Object.entries(renames)) {
        if (to in inverted) {
          throw new RehubError(`${where}: MapKeyRename renames two keys to ${JSON.stringify(to)}`);
        }
        inverted[to] = from;
      }
      return withParams(rule, s, { ...swap, renames: inverted });
    }
    case "CEL":
      return withParams(rule, s, {
        hubPaths: p.spokePaths,
        spokePaths: p.hubPaths,
        hubToSpoke: p.spokeToHub,
        spokeToHub: p.hubToSpoke,
      });
    default:
      throw new RehubError(`${where}: unknown strategy ${JSON.stringify(s)}`);
  }
}

const HUB_PATH_TO_SPOKE_PATH = new Set([
  "FieldRename",
  "ScalarToObject",
  "ObjectToScalar",
  "SingletonArrayToObject",
  "ObjectToSingletonArray",
  "NumericScale",
  "ListJoin",
  "ListSplit",
  "Quantity",
  "Duration",
  "MapKeyRename",
  "ArrayToMapByKey",
  "MapToArrayByKey",
]);

/** old-hub path → new-hub path pairs a promoted spoke's rule contributes. */
function pathMoves(rule: ConversionRuleSpec, where: string): [string, string][] {
  const p = paramsOf(rule);
  const s = rule.strategy;
  if (HUB_PATH_TO_SPOKE_PATH.has(s)) return [[String(p.hubPath), String(p.spokePath)]];
  switch (s) {
    case "ForEach":
      return [[String(p.hubItemsPath), String(p.spokeItemsPath)]];
    case "TypeCoerce":
    case "EnumRemap":
      return [[String(p.path), String(p.path)]];
    case "ScalarToFields":
      return [[String(p.hubPath), String(p.hubPath)]];
    case "FieldsToScalar":
      return Object.values(stringMap(p.hubFields)).map((x) => [x, x]);
    case "FieldsToMap":
      return strings(p.hubPaths).map((x) => [x, x]);
    case "MapToFields":
      return [[String(p.hubMapPath), String(p.hubMapPath)]];
    case "CEL":
    case "JSONPatch":
      throw new RehubError(
        `${where}: a ${s} rule in the promoted spoke cannot say where its hub fields move`,
      );
    default:
      return [];
  }
}

const rewrite = (map: ReadonlyMap<string, string>, path: unknown) =>
  typeof path === "string" ? map.get(path) ?? path : path;

/** The rule with its hub-side paths moved through `map`. */
function rewriteHubPaths(
  rule: ConversionRuleSpec,
  map: ReadonlyMap<string, string>,
  where: string,
): ConversionRuleSpec {
  const p = { ...paramsOf(rule) };
  const s = rule.strategy;
  if (s === "CEL" || s === "JSONPatch") {
    throw new RehubError(`${where}: a ${s} rule's hub side cannot be rewritten to the new hub`);
  }
  if (s.startsWith("From")) return rule;
  if ("hubPath" in p) p.hubPath = rewrite(map, p.hubPath);
  if ("hubMapPath" in p) p.hubMapPath = rewrite(map, p.hubMapPath);
  if ("hubItemsPath" in p) p.hubItemsPath = rewrite(map, p.hubItemsPath);
  if (s === "FieldsToMap") p.hubPaths = strings(p.hubPaths).map((x) => map.get(x) ?? x);
  if (s === "EnumRemap" || s === "TypeCoerce") p.path = rewrite(map, p.path);
  if ((s === "DefaultValue" || s === "Constant" || s === "Delete") && p.existsOn === "Hub") {
    p.path = rewrite(map, p.path);
  }
  if (s === "FieldsToScalar") {
    p.hubFields = Object.fromEntries(
      Object.entries(stringMap(p.hubFields)).map(([g, x]) => [g, map.get(x) ?? x]),
    );
  }
  return { ...rule, [keyOf(s)]: p };
}

/** The spoke-side paths a rule claims (top level; a ForEach claims its items path). */
function spokeSidePaths(rule: ConversionRuleSpec): string[] {
  const p = paramsOf(rule);
  const s = rule.strategy;
  const out = [p.spokePath, p.spokeMapPath, p.spokeItemsPath, ...strings(p.spokePaths)];
  if (s === "EnumRemap" || s === "TypeCoerce") out.push(p.path);
  if ((s === "DefaultValue" || s === "Constant" || s === "Delete") && p.existsOn === "Spoke") {
    out.push(p.path);
  }
  if (s === "ScalarToFields") out.push(...Object.values(stringMap(p.spokeFields)));
  return out.filter((x): x is string => typeof x === "string");
}

/** The spec with `to` as the hub; throws {@link RehubError} when it cannot be drafted. */
export function rehubSpec(
  spec: ConversionConfigSpec,
  source: SchemaSource,
  to: string,
): ConversionConfigSpec {
  const oldHub = spec.hubVersion;
  if (to === oldHub) throw new RehubError(`${to} is already the hub`);
  const promotedIndex = spec.spokes.findIndex((s) => s.version === to);
  if (promotedIndex < 0) {
    throw new RehubError(
      `${to} is not a spoke of the config (spokes: ${
        spec.spokes.map((s) => s.version).join(", ")
      })`,
    );
  }
  if (spec.spokes.some((s) => s.version === oldHub)) {
    throw new RehubError(`the config lists its hub ${oldHub} as a spoke too`);
  }
  const promoted = spec.spokes[promotedIndex];
  const where = (i: number, j: number) => `spec.spokes[${i}].rules[${j}]`;
  const promotedRules = promoted.rules ?? [];
  const inverted = promotedRules.map((r, j) => invertRule(r, where(promotedIndex, j)));
  const map = new Map<string, string>();
  promotedRules.forEach((r, j) => {
    for (const [from, into] of pathMoves(r, where(promotedIndex, j))) {
      const prior = map.get(from);
      if (prior !== undefined && prior !== into) {
        throw new RehubError(
          `${where(promotedIndex, j)}: hub path ${from} moves to both ${prior} and ${into}`,
        );
      }
      map.set(from, into);
    }
  });
  const moves = [...map.entries()].filter(([a, b]) => a !== b).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0
  );
  const others: SpokeSpec[] = [];
  spec.spokes.forEach((spoke, i) => {
    if (i === promotedIndex) return;
    const rules = (spoke.rules ?? []).map((r, j) => rewriteHubPaths(r, map, where(i, j)));
    const schema = source.versions.find((v) => v.name === spoke.version)?.schema;
    const leaves = new Set(flatten(schema).map((l) => l.path));
    const claimed = new Set(rules.flatMap(spokeSidePaths));
    for (const [from, into] of moves) {
      // A field the spoke shared with the old hub was copied without a rule; it needs one now.
      if (leaves.has(from) && !claimed.has(from)) {
        rules.push({ strategy: "FieldRename", fieldRename: { hubPath: into, spokePath: from } });
      }
    }
    others.push({ ...spoke, rules });
  });
  return {
    ...spec,
    hubVersion: to,
    spokes: [{ version: oldHub, rules: inverted }, ...others],
  };
}

/** The schema with `to` as its storage (referenceable) version, as it will be after promotion. */
export function withStorageVersion(source: SchemaSource, to: string): SchemaSource {
  return {
    ...source,
    versions: source.versions.map((v) => ({ ...v, storage: v.name === to })),
  };
}
