/**
 * Shared pieces of the engine benches: a CRD pair of schemas built from spec fields, its analysis
 * (which must be clean), and representative objects with realistic metadata. Not a bench itself.
 */
import { analyze } from "./analyze.ts";
import { schemaSourceFromCRD } from "./source.ts";
import type { AnalysisResult, ConversionRuleSpec, JsonObject, SchemaNode } from "./types.ts";

export const GROUP = "bench.example.com";
export const HUB = "v2";
export const SPOKE = "v1";

export const str: SchemaNode = { type: "string" };
export const int: SchemaNode = { type: "integer" };
export const bool: SchemaNode = { type: "boolean" };
export const num: SchemaNode = { type: "number" };
export const obj = (properties: Record<string, SchemaNode>): SchemaNode => ({
  type: "object",
  properties,
});
export const arr = (items: SchemaNode, maxItems?: number): SchemaNode => ({
  type: "array",
  items,
  ...(maxItems === undefined ? {} : { maxItems }),
});
export const root = (spec: Record<string, SchemaNode>): SchemaNode =>
  obj({ metadata: { type: "object" }, spec: obj(spec), status: obj({ phase: str }) });

export function analyzePair(
  hub: SchemaNode,
  spoke: SchemaNode,
  rules: ConversionRuleSpec[],
): AnalysisResult {
  const crd = {
    metadata: { name: `gadgets.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: "Gadget", plural: "gadgets" },
      versions: [
        { name: HUB, served: true, storage: true, schema: { openAPIV3Schema: hub } },
        { name: SPOKE, served: true, storage: false, schema: { openAPIV3Schema: spoke } },
      ],
    },
  } as unknown as JsonObject;
  const result = analyze(schemaSourceFromCRD(crd), {
    hubVersion: HUB,
    spokes: [{ version: SPOKE, rules }],
  });
  const errors = [...result.hardErrors, ...result.spokes.flatMap((s) => s.errors)];
  if (errors.length > 0) {
    throw new Error(`bench config invalid: ${errors.map((e) => e.message).join("; ")}`);
  }
  return result;
}

export function metadata(extra: JsonObject = {}): JsonObject {
  return {
    name: "gadget-1",
    namespace: "default",
    uid: "0d7d5c4e-3f7b-4c2a-9d7e-2b1f8f6f1a11",
    resourceVersion: "12345",
    generation: 3,
    labels: { app: "demo", tier: "backend" },
    annotations: { "demo.example.com/owner": "team-a" },
    ...extra,
  };
}

export const object = (spec: JsonObject, meta: JsonObject = {}): JsonObject => ({
  kind: "Gadget",
  metadata: metadata(meta),
  spec,
  status: { phase: "Ready" },
});
