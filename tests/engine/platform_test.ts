/** Crossplane platform paths and XRD scope. */
import assert from "node:assert/strict";
import {
  analyze,
  type ConversionRuleSpec,
  convertWithPlan,
  generatedCRDNames,
  injectedPathsForXRD,
  type JsonObject,
  type JsonValue,
  type LinkedPlan,
  linkPlan,
  type PlanData,
  resolveXRDScope,
  type SchemaNode,
  schemaSourceFromXRD,
} from "../../src/engine/mod.ts";
import { describe, single } from "./_checks.ts";
import { configFor, crdSource, xrdManifest as xrd, type XRDOptions } from "./_helpers.ts";
import { GROUP, HUB, int, obj, root, SPOKE, str } from "./_schemas.ts";

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

// --- passthrough of injected roots ----------------------------------------------------------

const renameSize: ConversionRuleSpec[] = [
  { strategy: "FieldRename", fieldRename: { hubPath: "spec.size", spokePath: "spec.capacity" } },
];
const conditions: JsonValue = [
  { type: "Synced", status: "False", reason: "ReconcileError", lastTransitionTime: "t" },
  { type: "Ready", status: "False", reason: "Creating" },
];

/** Both linkings of a plan (the compiled default and the interpreted reference). */
function linkings(plan: PlanData): [string, LinkedPlan][] {
  return [["compiled", linkPlan(plan)], ["interpreted", linkPlan(plan, { compiled: false })]];
}

Deno.test("XRD without status: Crossplane's status.conditions pass through both ways", () => {
  for (const scope of ["Namespaced", "LegacyCluster"]) {
    const report = analyzeXRD({
      scope,
      hub: root({ size: int() }),
      spoke: root({ capacity: int() }),
    }, renameSize);
    assert.deepEqual(report.errors, [], describe(report.errors));
    const plan = report.plan!;
    for (const [label, linked] of linkings(plan)) {
      const what = `${scope}, ${label}`;
      const hubObj: JsonObject = {
        kind: "XGadget",
        metadata: { name: "g" },
        spec: { size: 3, crossplane: { compositionRef: { name: "c" } } },
        status: { conditions, other: "pruned by the apiserver anyway" },
      };
      const spokeObj = convertWithPlan(linked, "hubToSpoke", hubObj);
      assert.deepEqual(spokeObj.spec, {
        capacity: 3,
        crossplane: { compositionRef: { name: "c" } },
      }, what);
      assert.deepEqual(spokeObj.status, { conditions }, what);
      const back = convertWithPlan(linked, "spokeToHub", spokeObj);
      assert.deepEqual(back.status, { conditions }, what);
      assert.deepEqual(back.spec, { size: 3, crossplane: { compositionRef: { name: "c" } } }, what);
      // No status in, none out (no empty map either).
      assert.equal(convertWithPlan(linked, "hubToSpoke", { spec: { size: 1 } }).status, undefined);
    }
    // The legacy roots under status come along; spec's are carried by the walk already.
    const copied = plan.hubToSpoke.filter((op) => op.op === "copy" && op !== plan.hubToSpoke[0]);
    assert.deepEqual(
      copied.map((op) => (op.from as string[]).join(".")),
      scope === "Namespaced"
        ? ["status.conditions"]
        : ["status.claimConditionTypes", "status.conditions", "status.connectionDetails"],
    );
    assert.deepEqual(plan.spokeToHub.slice(1), plan.hubToSpoke.slice(1));
  }
});

Deno.test("XRD with status declared as an object without properties: conditions pass through", () => {
  const bare = { status: { type: "object" } as SchemaNode };
  const report = analyzeXRD({
    scope: "Namespaced",
    hub: root({ size: int() }, { extra: bare }),
    spoke: root({ capacity: int() }, { extra: bare }),
  }, renameSize);
  for (const [label, linked] of linkings(report.plan!)) {
    const out = convertWithPlan(linked, "spokeToHub", {
      spec: { capacity: 2 },
      status: { conditions },
    });
    assert.deepEqual(out, { metadata: {}, spec: { size: 2 }, status: { conditions } }, label);
  }
});

Deno.test("XRD passthrough: a declared status, or a rule on status, keeps the plan as it was", () => {
  // status declared with properties: the walk carries undeclared nested keys (conditions).
  const declared = analyzeXRD({
    scope: "Namespaced",
    hub: root({ size: int() }, { status: { phase: str() } }),
    spoke: root({ capacity: int() }, { status: { phase: str() } }),
  }, renameSize);
  assert.deepEqual(declared.plan!.hubToSpoke.map((op) => op.op), ["copy", "carry"]);
  const out = convertWithPlan(linkPlan(declared.plan!), "hubToSpoke", {
    spec: { size: 1 },
    status: { phase: "Up", conditions },
  });
  assert.deepEqual(out.status, { phase: "Up", conditions });
  // A rule writing status as a whole owns it: no copy is added behind it.
  const ruled = analyzeXRD({
    scope: "Namespaced",
    hub: root({ size: int() }, { extra: { status: { type: "object" } } }),
    spoke: root({ capacity: int() }),
  }, [...renameSize, {
    strategy: "Delete",
    delete: { path: "status", existsOn: "Hub" },
    acknowledgeLossy: true,
    reason: "test",
  }]);
  assert.deepEqual(ruled.errors, [], describe(ruled.errors));
  assert.ok(
    !ruled.plan!.hubToSpoke.some((op) =>
      op.op === "copy" && String(op.from) === "status,conditions"
    ),
  );
});

Deno.test("CRD without status: the plan is unchanged (undeclared status dropped, no copy)", () => {
  const hub = root({ size: int() });
  const spoke = root({ capacity: int() });
  const crd = analyze(
    crdSource([{ name: HUB, schema: hub, storage: true }, { name: SPOKE, schema: spoke }]),
    configFor({ [SPOKE]: renameSize }),
  ).spokes[0].plan!;
  const carry = {
    op: "carry",
    tree: { metadata: "skip", spec: { size: "skip", capacity: "skip" } },
  };
  assert.deepEqual(crd, {
    hubVersion: HUB,
    spokeVersion: SPOKE,
    hubToSpoke: [{ op: "copy", from: ["spec", "size"], to: ["spec", "capacity"] }, carry],
    spokeToHub: [{ op: "copy", from: ["spec", "capacity"], to: ["spec", "size"] }, carry],
  });
  const out = convertWithPlan(linkPlan(crd), "hubToSpoke", {
    spec: { size: 1 },
    status: { conditions },
  });
  assert.equal(out.status, undefined);
  // The same schemas as an XRD: the same plan with one copy before the carry.
  const xrdPlan = analyzeXRD({ scope: "Namespaced", hub, spoke }, renameSize).plan!;
  const passthrough = { op: "copy", from: ["status", "conditions"], to: ["status", "conditions"] };
  assert.deepEqual(xrdPlan, {
    ...crd,
    hubToSpoke: [crd.hubToSpoke[0], passthrough, carry],
    spokeToHub: [crd.spokeToHub[0], passthrough, carry],
  });
});
