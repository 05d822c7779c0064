/**
 * ScalarToObject / ObjectToScalar (engine.md §6.2, §6.3): a scalar on one side is one key of an
 * object on the other; the other keys can be filled from `defaultsForOtherKeys`.
 */
import { isJsonObject } from "../../lib/json.ts";
import type { OpLinker, ParamReader, Resolved, StrategyDefinition } from "../strategy.ts";
import type { JsonObject, SchemaNode } from "../types.ts";
import { ABSENT, deepCopy, getPath, setKey, setPath } from "../value.ts";

interface WrapParams {
  hubPath: string;
  spokePath: string;
  key: string;
  defaultsForOtherKeys: JsonObject;
}

function translate(p: ParamReader): WrapParams {
  return {
    hubPath: p.path("hubPath"),
    spokePath: p.path("spokePath"),
    key: p.path("key"),
    defaultsForOtherKeys: p.jsonMap("defaultsForOtherKeys"),
  };
}

/** Lossless unwrap iff the object declares no property other than `key`. */
function onlyKey(node: SchemaNode | undefined, key: string): boolean {
  if (node === undefined) return false;
  return Object.keys(node.properties ?? {}).every((k) => k === key);
}

const wrapOp = (from: Resolved, to: Resolved, p: WrapParams) => ({
  op: "wrap",
  from: from.segments,
  to: to.segments,
  key: p.key,
  defaults: p.defaultsForOtherKeys,
});
const unwrapOp = (from: Resolved, to: Resolved, key: string) => ({
  op: "unwrap",
  from: from.segments,
  to: to.segments,
  key,
});

export const scalarToObject: StrategyDefinition<WrapParams> = {
  name: "ScalarToObject",
  translate,
  compile(p, ctx) {
    const hub = ctx.resolveHub(p.hubPath, "hubPath");
    const spoke = ctx.resolveSpoke(p.spokePath, "spokePath");
    ctx.claimHub(hub);
    ctx.claimSpoke(spoke, true);
    return {
      hubPaths: [p.hubPath],
      spokePaths: [p.spokePath],
      lossless: { hubToSpoke: true, spokeToHub: onlyKey(spoke.node, p.key) },
      hubToSpoke: wrapOp(hub, spoke, p),
      spokeToHub: unwrapOp(spoke, hub, p.key),
    };
  },
  ops: { wrap: linkWrap, unwrap: linkUnwrap },
};

export const objectToScalar: StrategyDefinition<WrapParams> = {
  name: "ObjectToScalar",
  translate,
  compile(p, ctx) {
    const hub = ctx.resolveHub(p.hubPath, "hubPath");
    const spoke = ctx.resolveSpoke(p.spokePath, "spokePath");
    ctx.claimHub(hub, true);
    ctx.claimSpoke(spoke);
    return {
      hubPaths: [p.hubPath],
      spokePaths: [p.spokePath],
      lossless: { hubToSpoke: onlyKey(hub.node, p.key), spokeToHub: true },
      hubToSpoke: unwrapOp(hub, spoke, p.key),
      spokeToHub: wrapOp(spoke, hub, p),
    };
  },
  ops: {},
};

/** New map of the defaults, then `key` = the value (the value wins over a same-named default). */
function linkWrap(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  const key = op.key as string;
  const defaults = op.defaults as JsonObject;
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    const wrapped = deepCopy(defaults) as JsonObject;
    setKey(wrapped, key, deepCopy(v));
    setPath(output, to, wrapped);
  };
}

/** Only a map containing `key` unwraps; anything else writes nothing. */
function linkUnwrap(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  const key = op.key as string;
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT || !isJsonObject(v) || !Object.hasOwn(v, key)) return;
    setPath(output, to, deepCopy(v[key]));
  };
}
