/**
 * TypeCoerce: the same field with a different scalar type on each side, converted
 * by the coercion table (Go number and boolean grammar, half-away-from-zero rounding, integers
 * exact up to int64).
 */
import { coerceScalar, type FractionPolicy, type ScalarKind } from "../coerce.ts";
import { isScalarKind } from "../schema.ts";
import { bindHubSpoke, unresolved } from "./_paths.ts";
import type { OpLinker, StrategyDefinition } from "../strategy.ts";
import type { JsonObject } from "../types.ts";
import { ABSENT, getPath, setPath } from "../value.ts";

interface TypeCoerceParams {
  path: string;
  onFractionalInteger: string;
}

const POLICIES: readonly FractionPolicy[] = ["Error", "Truncate", "Round"];

export const typeCoerce: StrategyDefinition<TypeCoerceParams> = {
  name: "TypeCoerce",
  translate: (p) => ({
    path: p.path("path"),
    onFractionalInteger: p.optString("onFractionalInteger", "") || "Error",
  }),
  compile(p, ctx) {
    const paths = { hubPath: p.path, spokePath: p.path };
    const { hub, spoke, declared, kinds } = bindHubSpoke(paths, ctx, ["path", "path"]);
    const policy = p.onFractionalInteger as FractionPolicy;
    if (!POLICIES.includes(policy)) {
      ctx.error(
        "invalid-parameter",
        `onFractionalInteger must be Error, Truncate or Round (got ${JSON.stringify(policy)})`,
        p.path,
      );
    }
    if (kinds === undefined) return { ...declared, lossless: unresolved() };
    const hubKind = kinds.hub;
    const spokeKind = kinds.spoke;
    for (const [side, kind] of [["hub", hubKind], ["spoke", spokeKind]] as const) {
      if (!isScalarKind(kind)) {
        ctx.error(
          "type-mismatch",
          `${side} ${p.path} is ${kind}; TypeCoerce needs a string, integer, number or boolean`,
          p.path,
        );
      }
    }
    const strict = policy === "Error";
    return {
      ...declared,
      lossless: {
        hubToSpoke: strict || spokeKind !== "integer",
        spokeToHub: strict || hubKind !== "integer",
      },
      hubToSpoke: { op: "coerce", path: hub.segments, kind: spokeKind, policy },
      spokeToHub: { op: "coerce", path: spoke.segments, kind: hubKind, policy },
    };
  },
  ops: { coerce: linkCoerce },
};

function linkCoerce(...[op]: Parameters<OpLinker>) {
  const path = op.path as string[];
  const kind = op.kind as ScalarKind;
  const policy = op.policy as FractionPolicy;
  const what = path.join(".");
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, path);
    if (v !== ABSENT) setPath(output, path, coerceScalar(v, kind, policy, what));
  };
}
