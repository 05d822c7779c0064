/**
 * EnumRemap: values of one field are translated through a table in each
 * direction. Keys are canonical: strings by content, numbers by value, never across types.
 */
import { stringifyJson } from "../../lib/json_exact.ts";
import { formatPlainNumber, goJSON } from "../go.ts";
import type { OpLinker, StrategyDefinition } from "../strategy.ts";
import type { JsonObject, JsonValue, OpData, UnknownKeyPolicy } from "../types.ts";
import { ABSENT, ConversionError, deepCopy, getPath, setPath } from "../value.ts";

interface EnumRemapParams {
  path: string;
  mapping: { hub: JsonValue; spoke: JsonValue }[];
  onUnmappedHubValue: UnknownKeyPolicy;
  onUnmappedSpokeValue: UnknownKeyPolicy;
}

const POLICIES = ["Error", "Drop"] as const;

/**
 * Canonical lookup key of a JSON value. An integer outside the double-exact range is keyed by its
 * exact digits, whether it was read as a `bigint` or (in a config) as a double, so equal values
 * meet.
 */
export function enumKey(v: JsonValue): string {
  if (v === null) return "null";
  switch (typeof v) {
    case "string":
      return "s:" + v;
    case "boolean":
      return v ? "b:true" : "b:false";
    case "number":
      if (Number.isInteger(v) && !Number.isSafeInteger(v)) return "n:" + BigInt(v).toString();
      return "n:" + formatPlainNumber(v);
    case "bigint":
      return "n:" + v.toString();
  }
  return "j:" + goJSON(v);
}

export const enumRemap: StrategyDefinition<EnumRemapParams> = {
  name: "EnumRemap",
  translate: (p) => ({
    path: p.path("path"),
    mapping: p.list("mapping").map((m, i) => {
      if (typeof m !== "object" || m === null || Array.isArray(m)) {
        throw new Error(`mapping[${i}]: expected {hub, spoke}`);
      }
      return { hub: m.hub ?? null, spoke: m.spoke ?? null };
    }),
    onUnmappedHubValue: p.choice("onUnmappedHubValue", POLICIES, "Error"),
    onUnmappedSpokeValue: p.choice("onUnmappedSpokeValue", POLICIES, "Error"),
  }),
  compile(p, ctx) {
    const hub = ctx.resolveHub(p.path, "path");
    const spoke = ctx.resolveSpoke(p.path, "path");
    ctx.claimHub(hub);
    ctx.claimSpoke(spoke);
    const toSpoke = new Map<string, JsonValue>();
    const toHub = new Map<string, JsonValue>();
    const spokeSeen = new Set<string>();
    let injective = true;
    for (const { hub: h, spoke: s } of p.mapping) {
      toSpoke.set(enumKey(h), s);
      toHub.set(enumKey(s), h);
      if (spokeSeen.has(enumKey(s))) injective = false;
      spokeSeen.add(enumKey(s));
    }
    if (!injective) {
      ctx.warn(
        "non-injective-enum",
        `several hub values map to the same spoke value; spoke→hub cannot tell them apart`,
        p.path,
      );
    }
    return {
      hubPaths: [p.path],
      spokePaths: [p.path],
      lossless: {
        hubToSpoke: p.onUnmappedHubValue === "Error",
        spokeToHub: p.onUnmappedSpokeValue === "Error" && injective,
      },
      hubToSpoke: remapOp("hub", hub.segments, toSpoke, p.onUnmappedHubValue),
      spokeToHub: remapOp("spoke", spoke.segments, toHub, p.onUnmappedSpokeValue),
    };
  },
  ops: { remap: linkRemap },
};

/** The op of one direction: values read on `side` are looked up in `table`. */
function remapOp(
  side: "hub" | "spoke",
  path: string[],
  table: Map<string, JsonValue>,
  policy: string,
): OpData {
  return { op: "remap", path, table: [...table], strict: policy === "Error", side };
}

function linkRemap(...[op]: Parameters<OpLinker>) {
  const path = op.path as string[];
  const table = new Map(op.table as [string, JsonValue][]);
  const strict = op.strict === true;
  const side = op.side as string;
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, path);
    if (v === ABSENT) return;
    const key = enumKey(v);
    if (table.has(key)) {
      setPath(output, path, deepCopy(table.get(key)!));
    } else if (strict) {
      throw new ConversionError(
        `${path.join(".")}: ${side} value ${stringifyJson(v)} has no mapping (policy Error)`,
      );
    }
  };
}
