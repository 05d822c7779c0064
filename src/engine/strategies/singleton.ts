/**
 * SingletonArrayToObject / ObjectToSingletonArray: a one-element array on one side is its element
 * on the other. One inverse pair: A is the array side, B the object side.
 */
import { bindPathPair, mirror, readPathPair } from "../mirror.ts";
import type { SchemaNode } from "../types.ts";
import { ABSENT, deepCopy } from "../value.ts";
import { valueLinker } from "./_link.ts";

interface SingletonParams {
  /** The array's path (A) and the object's (B). */
  aPath: string;
  bPath: string;
}

/** Taking element 0 loses nothing only if the schema caps the array at one element. */
function atMostOne(node: SchemaNode | undefined): boolean {
  return typeof node?.maxItems === "number" && node.maxItems <= 1;
}

/** Non-array or empty array writes nothing. */
const linkFirstElement = valueLinker(() => (v) =>
  Array.isArray(v) && v.length > 0 ? deepCopy(v[0]) : ABSENT
);

/** Any present value (null included) becomes `[value]`. */
const linkWrapInArray = valueLinker(() => (v) => [deepCopy(v)]);

export const [singletonArrayToObject, objectToSingletonArray] = mirror<SingletonParams>({
  names: ["SingletonArrayToObject", "ObjectToSingletonArray"],
  translate: readPathPair,
  compile(p, sides) {
    const [array, object] = bindPathPair(sides, p, { b: true });
    return {
      aPaths: [p.aPath],
      bPaths: [p.bPath],
      lossless: { aToB: atMostOne(array.node), bToA: true },
      aToB: { op: "firstElement", from: array.segments, to: object.segments },
      bToA: { op: "wrapInArray", from: object.segments, to: array.segments },
    };
  },
  ops: { firstElement: linkFirstElement, wrapInArray: linkWrapInArray },
});
