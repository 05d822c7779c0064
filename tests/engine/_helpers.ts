/**
 * Shared builders for the engine tests: schema fragments, CRD manifests and schema sources,
 * configs, one-call analysis of a hub/spoke pair, plan linking and small assertions.
 */
import assert from "node:assert/strict";
import {
  type AnalysisResult,
  analyze,
  type ConversionConfigSpec,
  ConversionError,
  type ConversionRuleSpec,
  convertWithPlan,
  type Diagnostic,
  type DiagnosticClass,
  type JsonObject,
  type JsonValue,
  type LinkedPlan,
  linkPlan,
  type SchemaNode,
  type SchemaSource,
  schemaSourceFromCRD,
  type SpokeReport,
} from "../../src/engine/mod.ts";

export const GROUP = "demo.example.com";
export const KIND = "Gadget";
export const PLURAL = "gadgets";
export const HUB = "v2";
export const SPOKE = "v1";

export const apiVersion = (version: string): string => `${GROUP}/${version}`;

// --- schema fragments ---------------------------------------------------------------------------

export const str = (extra: SchemaNode = {}): SchemaNode => ({ type: "string", ...extra });
export const int = (extra: SchemaNode = {}): SchemaNode => ({ type: "integer", ...extra });
export const num = (extra: SchemaNode = {}): SchemaNode => ({ type: "number", ...extra });
export const bool = (extra: SchemaNode = {}): SchemaNode => ({ type: "boolean", ...extra });
export const obj = (
  properties: Record<string, SchemaNode>,
  extra: SchemaNode = {},
): SchemaNode => ({
  type: "object",
  properties,
  ...extra,
});
export const arr = (items: SchemaNode, extra: SchemaNode = {}): SchemaNode => ({
  type: "array",
  items,
  ...extra,
});
/** A free-form map (`additionalProperties` schema). */
export const map = (values: SchemaNode = str()): SchemaNode => ({
  type: "object",
  additionalProperties: values,
});
/** `x-kubernetes-preserve-unknown-fields`, optionally with declared properties. */
export const free = (properties?: Record<string, SchemaNode>): SchemaNode => ({
  type: "object",
  "x-kubernetes-preserve-unknown-fields": true,
  ...(properties === undefined ? {} : { properties }),
});

export interface RootOptions {
  /** `status` properties (undefined = no status declared). */
  status?: Record<string, SchemaNode>;
  /** `required` of the spec object. */
  specRequired?: string[];
  /** List `spec` in the root's `required`. */
  requireSpec?: boolean;
  /** More root-level properties. */
  extra?: Record<string, SchemaNode>;
}

/** An `openAPIV3Schema` root: `metadata` (type object only), `spec`, optionally `status`. */
export function root(spec: Record<string, SchemaNode>, o: RootOptions = {}): SchemaNode {
  const properties: Record<string, SchemaNode> = {
    metadata: { type: "object" },
    spec: obj(spec, o.specRequired === undefined ? {} : { required: o.specRequired }),
  };
  if (o.status !== undefined) properties.status = obj(o.status);
  Object.assign(properties, o.extra ?? {});
  return { type: "object", properties, ...(o.requireSpec ? { required: ["spec"] } : {}) };
}

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

// --- diagnostics --------------------------------------------------------------------------------

export function describe(ds: readonly Diagnostic[]): string {
  return ds.map((d) => `[${d.class}] ${d.path}: ${d.message}`).join("\n");
}

export const classesOf = (ds: readonly Diagnostic[]): DiagnosticClass[] => ds.map((d) => d.class);

export function errorsOf(report: SpokeReport, cls: DiagnosticClass): Diagnostic[] {
  return report.errors.filter((d) => d.class === cls);
}

export function warningsOf(report: SpokeReport, cls: DiagnosticClass): Diagnostic[] {
  return report.warnings.filter((d) => d.class === cls);
}

/** Exactly one diagnostic of `cls` in `ds`; returns it. */
export function single(ds: readonly Diagnostic[], cls: DiagnosticClass): Diagnostic {
  const found = ds.filter((d) => d.class === cls);
  assert.equal(found.length, 1, `expected one ${cls}, got:\n${describe(ds)}`);
  return found[0];
}

// --- values -------------------------------------------------------------------------------------

/** A whole object: `kind`, `metadata` (name only by default) and the given body. */
export function resource(body: JsonObject, metadata: JsonObject = { name: "g" }): JsonObject {
  return { kind: KIND, metadata, ...body };
}

/** Object.freeze, recursively. */
export function deepFreeze<T>(v: T): T {
  if (typeof v === "object" && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const key of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[key]);
  }
  return v;
}

/** `fn` throws a ConversionError whose message contains every fragment. */
export function assertConversionError(fn: () => unknown, ...fragments: (string | RegExp)[]) {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ConversionError, `expected a ConversionError, got ${caught}`);
  for (const f of fragments) {
    if (typeof f === "string") {
      assert.ok(caught.message.includes(f), `${JSON.stringify(caught.message)} lacks ${f}`);
    } else {
      assert.match(caught.message, f);
    }
  }
  return caught;
}
