/** Crossplane platform paths and XRD scope. */
import assert from "node:assert/strict";
import {
  analyze,
  type ConversionRuleSpec,
  generatedCRDNames,
  injectedPathsForXRD,
  type JsonObject,
  type JsonValue,
  resolveXRDScope,
  type SchemaNode,
  schemaSourceFromXRD,
} from "../../src/engine/mod.ts";
import { describe, single } from "./_checks.ts";
import { configFor, crdSource } from "./_helpers.ts";
import { GROUP, HUB, obj, root, SPOKE, str } from "./_schemas.ts";

interface XRDOptions {
  apiVersion?: string;
  scope?: string;
  claimNames?: JsonObject;
  connectionSecretKeys?: string[];
  hub?: SchemaNode;
  spoke?: SchemaNode;
}

function xrd(o: XRDOptions = {}): JsonObject {
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

function analyzeXRD(o: XRDOptions, rules: ConversionRuleSpec[] = []) {
  const result = analyze(schemaSourceFromXRD(xrd(o)), {
    targetXRD: { name: `xgadgets.${GROUP}` },
    ...configFor({ [SPOKE]: rules }, { unmappedFieldPolicy: "Warn", unmappedFieldReason: "test" }),
  });
  assert.deepEqual(result.hardErrors, []);
  return result.spokes[0];
}

const ref = obj({ name: str() });

Deno.test("Namespaced XRD: an authored spec.crossplane is AuthoredFieldShadowedByPlatform (error)", () => {
  const report = analyzeXRD({
    scope: "Namespaced",
    spoke: root({ crossplane: obj({ x: str() }) }),
  });
  const d = single(report.errors, "AuthoredFieldShadowedByPlatform");
  assert.equal(d.path, "spec.crossplane");
  assert.equal(d.ruleIndex, -1);
  assert.match(d.message, /spoke schema/);
  assert.equal(report.plan, undefined);
  // A status.conditions declared by both schemas: one diagnostic naming both.
  const both = analyzeXRD({
    scope: "Cluster",
    hub: root({}, { status: { conditions: { type: "array", items: { type: "object" } } } }),
    spoke: root({}, { status: { conditions: { type: "array", items: { type: "object" } } } }),
  });
  const c = single(both.errors, "AuthoredFieldShadowedByPlatform");
  assert.equal(c.path, "status.conditions");
  assert.match(c.message, /hub and spoke schema/);
});

const ontoCompositionRef: ConversionRuleSpec[] = [
  {
    strategy: "FieldRename",
    fieldRename: { hubPath: "spec.ref", spokePath: "spec.compositionRef" },
  },
];

Deno.test("LegacyCluster XRD: a FieldRename onto spec.compositionRef is RuleTargetsInjectedPath (error)", () => {
  const report = analyzeXRD(
    { scope: "LegacyCluster", hub: root({ ref }), spoke: root({ compositionRef: ref }) },
    ontoCompositionRef,
  );
  const d = single(report.errors, "RuleTargetsInjectedPath");
  assert.equal(d.ruleIndex, 0);
  assert.equal(d.path, "spec.compositionRef");
  assert.match(d.message, /spoke path spec\.compositionRef lies under spec\.compositionRef/);
  assert.equal(
    single(report.errors, "AuthoredFieldShadowedByPlatform").path,
    "spec.compositionRef",
  );
  // The same config against a Namespaced XRD: compositionRef is an ordinary field there.
  const modern = analyzeXRD(
    { scope: "Namespaced", hub: root({ ref }), spoke: root({ compositionRef: ref }) },
    ontoCompositionRef,
  );
  assert.deepEqual(modern.errors, [], describe(modern.errors));
});

Deno.test("indeterminate scope: both diagnostics become warnings carrying the reason", () => {
  const report = analyzeXRD(
    { apiVersion: "example.org/v9", hub: root({ ref }), spoke: root({ compositionRef: ref }) },
    ontoCompositionRef,
  );
  assert.deepEqual(report.errors, [], describe(report.errors));
  const shadow = single(report.warnings, "AuthoredFieldShadowedByPlatform");
  const target = single(report.warnings, "RuleTargetsInjectedPath");
  for (const d of [shadow, target]) {
    assert.equal(d.severity, "warning");
    assert.match(
      d.message,
      /uncertain: no spec\.scope and unrecognised apiVersion "example\.org\/v9"/,
    );
  }
  assert.ok(report.plan !== undefined);
});

Deno.test("scope resolution", () => {
  const legacy = resolveXRDScope(
    xrd({ scope: "Namespaced", claimNames: { kind: "Gadget", plural: "gadgets" } }),
  );
  assert.deepEqual([legacy.scope, legacy.confidence], ["LegacyCluster", "inferred"]);
  assert.equal(resolveXRDScope(xrd({ connectionSecretKeys: ["k"] })).scope, "LegacyCluster");
  assert.deepEqual(
    [
      resolveXRDScope(xrd({ scope: "Cluster" })).scope,
      resolveXRDScope(xrd({ scope: "Cluster" })).confidence,
    ],
    ["Cluster", "explicit"],
  );
  assert.equal(
    resolveXRDScope(xrd({ apiVersion: "apiextensions.crossplane.io/v1" })).scope,
    "LegacyCluster",
  );
  assert.equal(
    resolveXRDScope(xrd({ apiVersion: "apiextensions.crossplane.io/v2" })).scope,
    "Namespaced",
  );
  assert.equal(resolveXRDScope(xrd({ apiVersion: "x/v1" })).scope, "Indeterminate");
  assert.equal(resolveXRDScope(xrd({ scope: "Galactic" })).scope, "Indeterminate");
});

Deno.test("injected roots by scope", () => {
  assert.deepEqual(injectedPathsForXRD(xrd({ scope: "Namespaced" })).roots, [
    "spec.crossplane",
    "status.conditions",
  ]);
  const legacy = injectedPathsForXRD(xrd({ scope: "LegacyCluster" })).roots;
  assert.ok(legacy.includes("spec.writeConnectionSecretToRef"));
  assert.ok(!legacy.includes("spec.resourceRef"));
  assert.ok(!legacy.includes("spec.crossplane"));
  const claims = injectedPathsForXRD(xrd({ claimNames: { kind: "Gadget" } })).roots;
  assert.ok(claims.includes("spec.resourceRef") && claims.includes("spec.compositeDeletePolicy"));
  const unknown = injectedPathsForXRD(xrd({ apiVersion: "x/v1" }));
  assert.equal(unknown.uncertain, true);
  assert.ok(unknown.roots.includes("spec.crossplane") && unknown.roots.includes("spec.claimRef"));
  assert.deepEqual(unknown.roots, [...unknown.roots].sort());
});

Deno.test("GeneratedCRDNames: composite then claim", () => {
  assert.deepEqual(generatedCRDNames(xrd({ claimNames: { kind: "Gadget", plural: "gadgets" } })), [
    { name: `xgadgets.${GROUP}`, role: "composite", namespaced: false },
    { name: `gadgets.${GROUP}`, role: "claim", namespaced: true },
  ]);
  assert.deepEqual(generatedCRDNames(xrd({ scope: "Namespaced" })), [
    { name: `xgadgets.${GROUP}`, role: "composite", namespaced: true },
  ]);
  assert.throws(
    () => generatedCRDNames(xrd({ claimNames: { plural: "gadgets" } })),
    /claimNames\.kind/,
  );
  const noGroup = xrd();
  delete (noGroup.spec as JsonObject).group;
  assert.throws(() => generatedCRDNames(noGroup), /spec\.group/);
});

Deno.test("plain CRDs have no injected paths: a spec.crossplane field is ordinary", () => {
  const schema = root({ crossplane: obj({ x: str() }) });
  const source = crdSource([{ name: HUB, schema, storage: true }, { name: SPOKE, schema }]);
  assert.equal(source.injected, undefined);
  const report = analyze(source, configFor({ [SPOKE]: [] })).spokes[0];
  assert.deepEqual(report.errors, [], describe(report.errors));
  assert.deepEqual(report.warnings, []);
});
