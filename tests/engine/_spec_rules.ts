/**
 * A hub/spoke pair that differ only in their `spec` properties, analysed with one rule list — the
 * shape the per-strategy tests of the escape-hatch strategies (CEL, JSONPatch, regex) share.
 */
import assert from "node:assert/strict";
import {
  type AnalysisResult,
  analyze,
  type ConversionRuleSpec,
  convertWithPlan,
  type Direction,
  type JsonObject,
  linkPlan,
  type SchemaNode,
  type SpokeReport,
} from "../../src/engine/mod.ts";

/** Analyses `rules` for spoke `v1` against hub `v2` of `gadgets.demo.example.com`. */
export function analyzeRules(
  hubSpec: Record<string, SchemaNode>,
  spokeSpec: Record<string, SchemaNode>,
  rules: ConversionRuleSpec[],
): AnalysisResult {
  const schema = (props: Record<string, SchemaNode>): SchemaNode => ({
    type: "object",
    properties: { spec: { type: "object", properties: props } },
  });
  return analyze({
    kind: "CRD",
    name: "gadgets.demo.example.com",
    group: "demo.example.com",
    targetKind: "Gadget",
    versions: [
      { name: "v2", served: true, storage: true, schema: schema(hubSpec) },
      { name: "v1", served: true, storage: false, schema: schema(spokeSpec) },
    ],
  }, {
    targetCRD: { name: "gadgets.demo.example.com" },
    hubVersion: "v2",
    spokes: [{ version: "v1", rules }],
  });
}

/** The one spoke's report (and no hard errors). */
export function spoke(result: AnalysisResult): SpokeReport {
  assert.deepEqual(result.hardErrors, []);
  return result.spokes[0];
}

/** The classes of a report's errors, sorted. */
export const classes = (r: SpokeReport) => r.errors.map((d) => d.class).sort();

/** Converts `obj` in `direction` with the one spoke's plan, which must exist. */
export function convertOne(
  result: AnalysisResult,
  direction: Direction,
  obj: JsonObject,
): JsonObject {
  const report = spoke(result);
  assert.ok(report.plan, `no plan: ${JSON.stringify(report.errors)}`);
  return convertWithPlan(linkPlan(report.plan), direction, obj);
}
