/**
 * FieldsToMap / MapToFields: several fields on one side are the entries of one map on the other.
 * Keys are the fields' last segments unless `keyNames` renames them. One inverse pair: A is the
 * fields side, B the map side.
 */
import { isJsonObject } from "../../lib/json.ts";
import { hubFirst, mirror, sideParam, type Sides } from "../mirror.ts";
import type { OpLinker, Resolved, RuleContext } from "../strategy.ts";
import type { JsonObject, UnknownKeyPolicy } from "../types.ts";
import { ABSENT, ConversionError, deepCopy, getPath, setKey, setPath, typeName } from "../value.ts";

interface FieldsMapParams {
  /** The fields (A) and the map (B). */
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

/** Resolves the fields (A) and the map (B); a repeated map key would silently merge two fields. */
function resolveFields(
  p: FieldsMapParams,
  sides: Sides,
  ctx: RuleContext,
): { fields: FieldSpec[]; resolvedFields: Resolved[]; map: Resolved } {
  const resolvedFields = p.fieldPaths.map((f) => sides.a.resolve(f, `${sides.a.side}Paths`));
  const map = sides.b.resolve(p.mapPath, `${sides.b.side}MapPath`);
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

export const [fieldsToMap, mapToFields] = mirror<FieldsMapParams>({
  names: ["FieldsToMap", "MapToFields"],
  translate: (p, o) => ({
    fieldPaths: p.stringList(`${o.a}Paths`),
    mapPath: p.path(`${o.b}MapPath`),
    keyNames: p.stringMap("keyNames"),
    onUnknownKey: p.choice(sideParam(o.b, "onUnknown", "Key"), POLICIES, "Error"),
  }),
  compile(p, sides, ctx) {
    const { fields, resolvedFields, map } = resolveFields(p, sides, ctx);
    hubFirst(
      sides,
      () => resolvedFields.forEach((r) => sides.a.claim(r)),
      () => sides.b.claim(map, true),
    );
    return {
      aPaths: [...p.fieldPaths],
      bPaths: [p.mapPath],
      lossless: { aToB: true, bToA: p.onUnknownKey === "Error" },
      aToB: { op: "collapse", fields, to: map.segments },
      bToA: { op: "expand", from: map.segments, fields, onUnknownKey: p.onUnknownKey },
    };
  },
  ops: { collapse: linkCollapse, expand: linkExpand },
});
