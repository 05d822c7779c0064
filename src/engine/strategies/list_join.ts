/**
 * ListJoin / ListSplit: an array of scalars on one side is one string on the other, joined and
 * split on `separator` (Go `strings.Split` semantics; an empty separator splits into code points).
 * One inverse pair: A is the array side, B the string side.
 */
import { coerceScalar, type ScalarKind } from "../coerce.ts";
import { bindPathPair, mirror, readPathPair } from "../mirror.ts";
import { spend } from "../request_budget.ts";
import { classify, isScalarKind, itemSchema } from "../schema.ts";
import type { Resolved, RuleContext } from "../strategy.ts";
import type { JsonValue } from "../types.ts";
import { valueLinker, wrongType } from "./_link.ts";

interface ListParams {
  /** The array's path (A) and the string's (B). */
  aPath: string;
  bPath: string;
  separator: string;
}

/** Checks the array side (scalar item kind) and the string side; returns the item kind. */
function checkShapes(arr: Resolved, str: Resolved, ctx: RuleContext): ScalarKind | undefined {
  let itemKind: ScalarKind | undefined;
  if (arr.node !== undefined) {
    const items = itemSchema(arr.node);
    const kind = items === undefined ? undefined : classify(items).kind;
    if (kind === undefined || !isScalarKind(kind)) {
      ctx.error(
        "type-mismatch",
        `${arr.path} must be an array of strings, integers, numbers or booleans`,
        arr.path,
      );
    } else {
      itemKind = kind as ScalarKind;
    }
  }
  if (str.node !== undefined && classify(str.node).kind !== "string") {
    ctx.error("type-mismatch", `${str.path} must be a string`, str.path);
  }
  return itemKind;
}

const linkJoin = valueLinker((op, what) => {
  const separator = op.separator as string;
  return (v) => {
    if (!Array.isArray(v)) throw wrongType(what, v, "an array");
    spend(v.length); // the request budget, before the pass
    const parts = v.map((e, i) => coerceScalar(e, "string", "Error", `${what}[${i}]`) as string);
    return parts.join(separator);
  };
});

const linkSplit = valueLinker((op, what) => {
  const separator = op.separator as string;
  const kind = op.kind as ScalarKind;
  return (v) => {
    if (typeof v !== "string") throw wrongType(what, v, "a string");
    const parts = v === "" ? [] : separator === "" ? Array.from(v) : v.split(separator);
    spend(parts.length); // the request budget, before the pass
    return parts.map((s, i): JsonValue => coerceScalar(s, kind, "Error", `${what} part ${i}`));
  };
});

export const [listJoin, listSplit] = mirror<ListParams>({
  names: ["ListJoin", "ListSplit"],
  translate: (p, o) => ({ ...readPathPair(p, o), separator: p.optString("separator", "") }),
  compile(p, sides, ctx) {
    const [array, str] = bindPathPair(sides, p);
    const itemKind = checkShapes(array, str, ctx);
    return {
      aPaths: [p.aPath],
      bPaths: [p.bPath],
      lossless: { aToB: true, bToA: true },
      aToB: { op: "join", from: array.segments, to: str.segments, separator: p.separator },
      bToA: {
        op: "split",
        from: str.segments,
        to: array.segments,
        separator: p.separator,
        kind: itemKind ?? "string",
      },
    };
  },
  ops: { join: linkJoin, split: linkSplit },
});
