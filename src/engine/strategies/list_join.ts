/**
 * ListJoin / ListSplit (engine.md §6.22, §6.23): an array of scalars on one side is one string on
 * the other, joined and split on `separator` (Go `strings.Split` semantics; an empty separator
 * splits into code points).
 */
import { coerceScalar, type ScalarKind } from "../coerce.ts";
import { classify, isScalarKind, itemSchema } from "../schema.ts";
import type { OpLinker, Resolved, RuleContext, StrategyDefinition } from "../strategy.ts";
import type { JsonObject, JsonValue } from "../types.ts";
import { ABSENT, ConversionError, getPath, setPath, typeName } from "../value.ts";

interface ListParams {
  hubPath: string;
  spokePath: string;
  separator: string;
}

const translate: StrategyDefinition<ListParams>["translate"] = (p) => ({
  hubPath: p.path("hubPath"),
  spokePath: p.path("spokePath"),
  separator: p.optString("separator", ""),
});

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

function list(name: "ListJoin" | "ListSplit"): StrategyDefinition<ListParams> {
  const hubIsArray = name === "ListJoin";
  return {
    name,
    translate,
    compile(p, ctx) {
      const hub = ctx.resolveHub(p.hubPath, "hubPath");
      const spoke = ctx.resolveSpoke(p.spokePath, "spokePath");
      ctx.claimHub(hub);
      ctx.claimSpoke(spoke);
      const itemKind = hubIsArray ? checkShapes(hub, spoke, ctx) : checkShapes(spoke, hub, ctx);
      const join = (from: Resolved, to: Resolved) => ({
        op: "join",
        from: from.segments,
        to: to.segments,
        separator: p.separator,
      });
      const split = (from: Resolved, to: Resolved) => ({
        op: "split",
        from: from.segments,
        to: to.segments,
        separator: p.separator,
        kind: itemKind ?? "string",
      });
      return {
        hubPaths: [p.hubPath],
        spokePaths: [p.spokePath],
        lossless: { hubToSpoke: true, spokeToHub: true },
        hubToSpoke: hubIsArray ? join(hub, spoke) : split(hub, spoke),
        spokeToHub: hubIsArray ? split(spoke, hub) : join(spoke, hub),
      };
    },
    ops: { join: linkJoin, split: linkSplit },
  };
}

export const listJoin = list("ListJoin");
export const listSplit = list("ListSplit");

function linkJoin(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  const separator = op.separator as string;
  const what = from.join(".");
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    if (!Array.isArray(v)) throw new ConversionError(`${what} is a ${typeName(v)}, not an array`);
    const parts = v.map((e, i) => coerceScalar(e, "string", "Error", `${what}[${i}]`) as string);
    setPath(output, to, parts.join(separator));
  };
}

function linkSplit(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  const separator = op.separator as string;
  const kind = op.kind as ScalarKind;
  const what = from.join(".");
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    if (typeof v !== "string") {
      throw new ConversionError(`${what} is a ${typeName(v)}, not a string`);
    }
    const parts = v === "" ? [] : separator === "" ? Array.from(v) : v.split(separator);
    const out: JsonValue[] = parts.map((s, i) =>
      coerceScalar(s, kind, "Error", `${what} part ${i}`)
    );
    setPath(output, to, out);
  };
}
