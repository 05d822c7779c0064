/**
 * FieldsToMap / MapToFields (engine.md §6.6, §6.7): several fields on one side are the entries of
 * one map on the other. Keys are the fields' last segments unless `keyNames` renames them.
 */
import { isJsonObject } from "../../lib/json.ts";
import type { OpLinker, Resolved, RuleContext, StrategyDefinition } from "../strategy.ts";
import type { JsonObject, UnknownKeyPolicy } from "../types.ts";
import { ABSENT, ConversionError, deepCopy, getPath, setKey, setPath, typeName } from "../value.ts";

interface FieldsMapParams {
  fieldPaths: string[];
  mapPath: string;
  keyNames: Record<string, string>;
  onUnknownKey: UnknownKeyPolicy;
}

interface FieldSpec {
  key: string;
  path: string[];
}

const POLICIES = ["Error", "Drop"] as const;

function keyFor(path: string, keyNames: Record<string, string>): string {
  const named = keyNames[path];
  if (named !== undefined && named !== "") return named;
  return path.slice(path.lastIndexOf(".") + 1);
}

/** Resolves the fields and the map; a repeated map key would silently merge two fields. */
function resolveFields(
  p: FieldsMapParams,
  ctx: RuleContext,
  fieldsOn: "hub" | "spoke",
): { fields: FieldSpec[]; resolvedFields: Resolved[]; map: Resolved } {
  const resolveField = fieldsOn === "hub" ? ctx.resolveHub : ctx.resolveSpoke;
  const resolveMap = fieldsOn === "hub" ? ctx.resolveSpoke : ctx.resolveHub;
  const param = fieldsOn === "hub" ? "hubPaths" : "spokePaths";
  const resolvedFields = p.fieldPaths.map((f) => resolveField(f, param));
  const map = resolveMap(p.mapPath, fieldsOn === "hub" ? "spokeMapPath" : "hubMapPath");
  const seen = new Map<string, string>();
  const fields = resolvedFields.map((r) => {
    const key = keyFor(r.path, p.keyNames);
    const other = seen.get(key);
    if (other !== undefined) {
      ctx.error(
        "invalid-parameter",
        `${other} and ${r.path} both map to key ${JSON.stringify(key)}`,
        r.path,
      );
    }
    seen.set(key, r.path);
    return { key, path: r.segments };
  });
  return { fields, resolvedFields, map };
}

export const fieldsToMap: StrategyDefinition<FieldsMapParams> = {
  name: "FieldsToMap",
  translate: (p) => ({
    fieldPaths: p.stringList("hubPaths"),
    mapPath: p.path("spokeMapPath"),
    keyNames: p.stringMap("keyNames"),
    onUnknownKey: p.choice("onUnknownSpokeKey", POLICIES, "Error"),
  }),
  compile(p, ctx) {
    const { fields, resolvedFields, map } = resolveFields(p, ctx, "hub");
    for (const r of resolvedFields) ctx.claimHub(r);
    ctx.claimSpoke(map, true);
    return {
      hubPaths: [...p.fieldPaths],
      spokePaths: [p.mapPath],
      lossless: { hubToSpoke: true, spokeToHub: p.onUnknownKey === "Error" },
      hubToSpoke: { op: "collapse", fields, to: map.segments },
      spokeToHub: { op: "expand", from: map.segments, fields, onUnknownKey: p.onUnknownKey },
    };
  },
  ops: { collapse: linkCollapse, expand: linkExpand },
};

export const mapToFields: StrategyDefinition<FieldsMapParams> = {
  name: "MapToFields",
  translate: (p) => ({
    fieldPaths: p.stringList("spokePaths"),
    mapPath: p.path("hubMapPath"),
    keyNames: p.stringMap("keyNames"),
    onUnknownKey: p.choice("onUnknownHubKey", POLICIES, "Error"),
  }),
  compile(p, ctx) {
    const { fields, resolvedFields, map } = resolveFields(p, ctx, "spoke");
    ctx.claimHub(map, true);
    for (const r of resolvedFields) ctx.claimSpoke(r);
    return {
      hubPaths: [p.mapPath],
      spokePaths: [...p.fieldPaths],
      lossless: { hubToSpoke: p.onUnknownKey === "Error", spokeToHub: true },
      hubToSpoke: { op: "expand", from: map.segments, fields, onUnknownKey: p.onUnknownKey },
      spokeToHub: { op: "collapse", fields, to: map.segments },
    };
  },
  ops: {},
};

/** Present fields (nulls included) become map entries; nothing present writes no map. */
function linkCollapse(...[op]: Parameters<OpLinker>) {
  const fields = op.fields as FieldSpec[];
  const to = op.to as string[];
  return (input: JsonObject, output: JsonObject) => {
    let map: JsonObject | undefined;
    for (const f of fields) {
      const v = getPath(input, f.path);
      if (v === ABSENT) continue;
      map ??= {};
      setKey(map, f.key, deepCopy(v));
    }
    if (map !== undefined) setPath(output, to, map);
  };
}

/** Known keys go to their fields; unknown keys are an error under `Error`, ignored under `Drop`. */
function linkExpand(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const fields = op.fields as FieldSpec[];
  const strict = op.onUnknownKey === "Error";
  const known = new Set(fields.map((f) => f.key));
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    if (!isJsonObject(v)) {
      throw new ConversionError(`${from.join(".")} is a ${typeName(v)}, not a map`);
    }
    for (const f of fields) {
      if (Object.hasOwn(v, f.key)) setPath(output, f.path, deepCopy(v[f.key]));
    }
    if (strict) {
      for (const key of Object.keys(v)) {
        if (!known.has(key)) {
          throw new ConversionError(
            `${from.join(".")} has key ${JSON.stringify(key)} that maps to no field (policy Error)`,
          );
        }
      }
    }
  };
}
