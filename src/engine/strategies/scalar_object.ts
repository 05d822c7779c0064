/**
 * ScalarToObject / ObjectToScalar: a scalar on one side is one key of an object on the other; the
 * object's other keys can be filled from `defaultsForOtherKeys`. One inverse pair: A is the scalar
 * side, B the object side.
 */
import { isJsonObject } from "../../lib/json.ts";
import { bindPathPair, mirror, readPathPair } from "../mirror.ts";
import type { ParamReader, Resolved } from "../strategy.ts";
import type { JsonObject, SchemaNode } from "../types.ts";
import { ABSENT, deepCopy, setKey } from "../value.ts";
import { valueLinker } from "./_link.ts";

interface WrapParams {
  /** The scalar's path (A) and the object's (B). */
  aPath: string;
  bPath: string;
  key: string;
  defaultsForOtherKeys: JsonObject;
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

/** New map of the defaults, then `key` = the value (the value wins over a same-named default). */
const linkWrap = valueLinker((op) => {
  const key = op.key as string;
  const defaults = op.defaults as JsonObject;
  return (v) => {
    const wrapped = deepCopy(defaults) as JsonObject;
    setKey(wrapped, key, deepCopy(v));
    return wrapped;
  };
});

/** Only a map containing `key` unwraps; anything else writes nothing. */
const linkUnwrap = valueLinker((op) => {
  const key = op.key as string;
  return (v) => isJsonObject(v) && Object.hasOwn(v, key) ? deepCopy(v[key]) : ABSENT;
});

export const [scalarToObject, objectToScalar] = mirror<WrapParams>({
  names: ["ScalarToObject", "ObjectToScalar"],
  translate: (p: ParamReader, o) => ({
    ...readPathPair(p, o),
    key: p.path("key"),
    defaultsForOtherKeys: p.jsonMap("defaultsForOtherKeys"),
  }),
  compile(p, sides) {
    const [scalar, object] = bindPathPair(sides, p, { b: true });
    return {
      aPaths: [p.aPath],
      bPaths: [p.bPath],
      lossless: { aToB: true, bToA: onlyKey(object.node, p.key) },
      aToB: wrapOp(scalar, object, p),
      bToA: unwrapOp(object, scalar, p.key),
    };
  },
  ops: { wrap: linkWrap, unwrap: linkUnwrap },
});
