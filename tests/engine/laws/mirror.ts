/**
 * Inverse pairs in the law suite. A case of one strategy of a plain pair, mirrored — hub and spoke
 * schemas swapped, the rule turned into the other strategy with its side-named parameters swapped,
 * verdict, vanishing paths and exemptions moved to the other direction — is a case of the other
 * strategy (docs/design/engine.md#inverse-pairs). laws_test.ts runs every law on these too, and
 * checks that a case and its mirror convert alike.
 */
import type { ConversionRuleSpec, Direction, JsonObject } from "../../../src/engine/mod.ts";
import { paramsKeyOf, type StrategyName } from "../../../src/engine/types.ts";
import type { LawCase } from "./registry.ts";

/** The eight inverse pairs `mirror()` builds, first strategy with A on the hub. */
export const PAIRS: readonly [StrategyName, StrategyName][] = [
  ["ScalarToObject", "ObjectToScalar"],
  ["SingletonArrayToObject", "ObjectToSingletonArray"],
  ["FieldsToMap", "MapToFields"],
  ["ToAnnotation", "FromAnnotation"],
  ["ToLabel", "FromLabel"],
  ["ScalarToFields", "FieldsToScalar"],
  ["ArrayToMapByKey", "MapToArrayByKey"],
  ["ListJoin", "ListSplit"],
];
/** The metadata pairs are tied to a direction (docs/design/engine.md#inverse-pairs): no swap law. */
const DIRECTION_TIED: ReadonlySet<string> = new Set([
  "ToAnnotation",
  "FromAnnotation",
  "ToLabel",
  "FromLabel",
]);

/** The rule of the other strategy of its pair: params named by side swap hub ↔ spoke. */
export function mirroredRule(rule: ConversionRuleSpec, inverse: string): ConversionRuleSpec {
  const swap = (k: string) =>
    k.replace(
      /hub|spoke|Hub|Spoke/g,
      (m) => ({ hub: "spoke", spoke: "hub", Hub: "Spoke", Spoke: "Hub" })[m]!,
    );
  const key = paramsKeyOf(rule.strategy as never);
  const params = Object.fromEntries(
    Object.entries(rule[key] as JsonObject).map(([k, v]) => [swap(k), v]),
  );
  const { [key]: _, ...rest } = rule;
  return { ...rest, strategy: inverse, [paramsKeyOf(inverse as never)]: params } as never;
}

const OTHER: Record<Direction, Direction> = { hubToSpoke: "spokeToHub", spokeToHub: "hubToSpoke" };

/**
 * The mirror of a single-rule case of a plain pair strategy, or undefined (metadata pairs are tied
 * to a direction; a case that prepares its inputs knows which side is which).
 */
export function mirroredCase(c: LawCase): LawCase | undefined {
  const pair = PAIRS.find((p) => p.includes(c.strategy as StrategyName));
  if (pair === undefined || DIRECTION_TIED.has(c.strategy)) return undefined;
  if (c.rules.length !== 1 || c.prepare !== undefined) return undefined;
  const inverse = pair[0] === c.strategy ? pair[1] : pair[0];
  return {
    ...c,
    name: `${c.name} (mirrored as ${inverse})`,
    strategy: inverse,
    hub: c.spoke,
    spoke: c.hub,
    rules: [mirroredRule(c.rules[0], inverse)],
    lossless: { hubToSpoke: c.lossless.spokeToHub, spokeToHub: c.lossless.hubToSpoke },
    vanishing: c.vanishing === undefined ? undefined : {
      hubToSpoke: c.vanishing.spokeToHub,
      spokeToHub: c.vanishing.hubToSpoke,
    },
    roundTripExemptions: c.roundTripExemptions?.map((e) => ({
      ...e,
      direction: OTHER[e.direction],
    })),
  };
}
