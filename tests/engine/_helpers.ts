/**
 * Shared helpers for the engine tests: CRD manifests and schema sources, configs, one-call
 * analysis of a hub/spoke pair and plan linking (schema builders are in _schemas.ts, assertions
 * in _checks.ts).
 */
import assert from "node:assert/strict";
import {
  type AnalysisResult,
  analyze,
  type ConversionConfigSpec,
  type ConversionRuleSpec,
  convertWithPlan,
  type JsonObject,
  type JsonValue,
  type LinkedPlan,
  linkPlan,
  type SchemaNode,
  type SchemaSource,
  schemaSourceFromCRD,
  schemaSourceFromXRD,
  type SpokeReport,
} from "../../src/engine/mod.ts";
import { describe } from "./_checks.ts";
import { GROUP, HUB, KIND, PLURAL, root, SPOKE } from "./_schemas.ts";

// --- targets and configs ------------------------------------------------------------------------

export interface VersionDef {
  name: string;
  schema?: SchemaNode;
  served?: boolean;
  storage?: boolean;
}

export function crdManifest(versions: VersionDef[]): JsonObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: KIND, plural: PLURAL },
      scope: "Namespaced",
      versions: versions.map((v) => {
        const out: JsonObject = {
          name: v.name,
          served: v.served ?? true,
          storage: v.storage ?? false,
        };
        if (v.schema !== undefined) {
          out.schema = { openAPIV3Schema: v.schema as unknown as JsonValue };
        }
        return out;
      }),
    },
  };
}

export function crdSource(versions: VersionDef[]): SchemaSource {
  return schemaSourceFromCRD(crdManifest(versions));
}

/** Hub `v2` (storage) and spoke `v1`. */
export function pairSource(hub: SchemaNode, spoke: SchemaNode): SchemaSource {
  return crdSource([
    { name: HUB, schema: hub, storage: true },
    { name: SPOKE, schema: spoke },
  ]);
}

export interface XRDOptions {
  apiVersion?: string;
  scope?: string;
  claimNames?: JsonObject;
  connectionSecretKeys?: string[];
  hub?: SchemaNode;
  spoke?: SchemaNode;
}

/** An XRD `xgadgets` with hub `v2` (referenceable) and spoke `v1`, both served. */
export function xrdManifest(o: XRDOptions = {}): JsonObject {
  const spec: JsonObject = {
    group: GROUP,
    names: { kind: "XGadget", plural: "xgadgets" },
    versions: [
      {
        name: HUB,
        served: true,
        referenceable: true,
        schema: { openAPIV3Schema: (o.hub ?? root({})) as unknown as JsonValue },
      },
      {
        name: SPOKE,
        served: true,
        referenceable: false,
        schema: { openAPIV3Schema: (o.spoke ?? root({})) as unknown as JsonValue },
      },
    ],
  };
  if (o.scope !== undefined) spec.scope = o.scope;
  if (o.claimNames !== undefined) spec.claimNames = o.claimNames;
  if (o.connectionSecretKeys !== undefined) spec.connectionSecretKeys = o.connectionSecretKeys;
  return {
    apiVersion: o.apiVersion ?? "apiextensions.crossplane.io/v2",
    kind: "CompositeResourceDefinition",
    metadata: { name: `xgadgets.${GROUP}` },
    spec,
  };
}

/** Hub `v2` (referenceable) and spoke `v1` of a Namespaced XRD. */
export function xrdPairSource(hub: SchemaNode, spoke: SchemaNode): SchemaSource {
  return schemaSourceFromXRD(xrdManifest({ hub, spoke }));
}

export function configFor(
  spokes: Record<string, ConversionRuleSpec[]>,
  extra: Partial<ConversionConfigSpec> = {},
): ConversionConfigSpec {
  return {
    targetCRD: { name: `${PLURAL}.${GROUP}` },
    hubVersion: HUB,
    spokes: Object.entries(spokes).map(([version, rules]) => ({ version, rules })),
    ...extra,
  };
}

export interface PairAnalysis {
  result: AnalysisResult;
  report: SpokeReport;
}

/** Analyses one hub/spoke pair with one rule list. */
export function analyzePair(
  hub: SchemaNode,
  spoke: SchemaNode,
  rules: ConversionRuleSpec[],
  extra: Partial<ConversionConfigSpec> = {},
): PairAnalysis {
  const result = analyze(pairSource(hub, spoke), configFor({ [SPOKE]: rules }, extra));
  assert.deepEqual(result.hardErrors, [], describe(result.hardErrors));
  return { result, report: result.spokes[0] };
}

/** The linked plan of an error-free report (fails the test with the errors otherwise). */
export function planOf(report: SpokeReport): LinkedPlan {
  assert.deepEqual(report.errors, [], describe(report.errors));
  assert.ok(report.plan !== undefined, "an error-free report carries a plan");
  return linkPlan(report.plan);
}

export function pairPlan(
  hub: SchemaNode,
  spoke: SchemaNode,
  rules: ConversionRuleSpec[],
  extra: Partial<ConversionConfigSpec> = {},
): LinkedPlan {
  return planOf(analyzePair(hub, spoke, rules, extra).report);
}

export const h2s = (plan: LinkedPlan, input: JsonObject): JsonObject =>
  convertWithPlan(plan, "hubToSpoke", input);
export const s2h = (plan: LinkedPlan, input: JsonObject): JsonObject =>
  convertWithPlan(plan, "spokeToHub", input);
