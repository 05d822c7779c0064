/**
 * Core conformance: `when`, passthrough, metadata/kind, routing, coverage, policy Warn, claims,
 * hub/spoke versions.
 */
import assert from "node:assert/strict";
import { analyze, convertObject, createRouter, structuralError } from "../../src/engine/mod.ts";
import {
  assertConversionError,
  describe,
  errorsOf,
  resource,
  single,
  warningsOf,
} from "./_checks.ts";
import { analyzePair, configFor, crdSource, h2s, pairPlan, pairSource, s2h } from "./_helpers.ts";
import { apiVersion, arr, free, HUB, int, KIND, map, obj, root, SPOKE, str } from "./_schemas.ts";

const rename = (hubPath: string, spokePath: string, extra = {}) => ({
  strategy: "FieldRename",
  fieldRename: { hubPath, spokePath },
  ...extra,
});

// --- when ---------------------------------------------------------------------------------

const whenHub = root({ mode: str(), tuning: int(), n: int() });
const whenSpoke = root({ mode: str(), tuningLevel: int(), n: int() });

Deno.test("when: the rule applies only when mode == advanced; otherwise the field is dropped", () => {
  const rules = [
    rename("spec.tuning", "spec.tuningLevel", { when: { path: "spec.mode", equals: "advanced" } }),
  ];
  const { report } = analyzePair(whenHub, whenSpoke, rules);
  const w = single(report.warnings, "partial-coverage");
  assert.equal(w.path, "spec.mode");
  assert.deepEqual(
    report.lossless,
    { hubToSpoke: true, spokeToHub: true },
    "when does not change verdicts",
  );
  assert.deepEqual(report.uncoveredHub, [], "the gated fields still count as covered");
  const plan = pairPlan(whenHub, whenSpoke, rules);
  assert.deepEqual(
    h2s(plan, resource({ spec: { mode: "advanced", tuning: 3 } })),
    resource({ spec: { mode: "advanced", tuningLevel: 3 } }),
  );
  assert.deepEqual(
    h2s(plan, resource({ spec: { mode: "basic", tuning: 3 } })),
    resource({ spec: { mode: "basic" } }),
  );
  assert.deepEqual(h2s(plan, resource({ spec: { tuning: 3 } })), resource({}));
  // spoke→hub gates on the spoke input.
  assert.deepEqual(
    s2h(plan, resource({ spec: { mode: "advanced", tuningLevel: 4 } })),
    resource({ spec: { mode: "advanced", tuning: 4 } }),
  );
  assert.deepEqual(s2h(plan, resource({ spec: { mode: "x", tuningLevel: 4 } })).spec, {
    mode: "x",
  });
});

Deno.test("when equality: numbers by value, no string/number coercion, null equals null, absent never matches", () => {
  const gated = (equals: unknown) =>
    pairPlan(whenHub, whenSpoke, [
      rename("spec.tuning", "spec.tuningLevel", { when: { path: "spec.n", equals } }),
    ]);
  const applies = (equals: unknown, n: unknown) =>
    Object.hasOwn(
      h2s(gated(equals), resource({ spec: { tuning: 1, n: n as number } })).spec as object,
      "tuningLevel",
    );
  assert.equal(applies(1, 1.0), true);
  assert.equal(applies(1, "1"), false);
  assert.equal(applies("1", 1), false);
  assert.equal(applies(null, null), true);
  assert.equal(applies({ a: [1, 2] }, { a: [1, 2] }), true);
  assert.equal(applies([1, 2], [2, 1]), false);
  // An absent `equals` means null; an absent field never matches it.
  const plan = pairPlan(whenHub, whenSpoke, [
    rename("spec.tuning", "spec.tuningLevel", { when: { path: "spec.n" } }),
  ]);
  assert.deepEqual(h2s(plan, resource({ spec: { tuning: 1 } })), resource({}));
});

Deno.test("when.path missing on one side: path-not-found (and no partial-coverage)", () => {
  const { report } = analyzePair(
    root({ mode: str(), tuning: int() }),
    root({ tuningLevel: int() }),
    [
      rename("spec.tuning", "spec.tuningLevel", {
        when: { path: "spec.mode", equals: "advanced" },
      }),
    ],
  );
  const d = single(errorsOf(report, "path-not-found"), "path-not-found");
  assert.equal(d.path, "spec.mode");
  assert.match(d.message, /when\.path "spec\.mode" not found in the spoke schema/);
  assert.deepEqual(warningsOf(report, "partial-coverage"), []);
  // when.path is never claimed: spec.mode is still uncovered on the hub.
  assert.deepEqual(report.uncoveredHub, ["spec.mode"]);
});

Deno.test("when.path blank: structural error", () => {
  const rules = [rename("spec.a", "spec.b", { when: { path: " ", equals: 1 } })];
  assert.match(structuralError(configFor({ [SPOKE]: rules })) ?? "", /rules\[0\]\.when\.path/);
});

// --- passthrough --------------------------------------------------------------------------

Deno.test("passthrough: undeclared nested keys survive both ways; undeclared top-level keys are dropped", () => {
  const schema = root({ size: int() }, { status: { phase: str() } });
  const plan = pairPlan(schema, schema, []);
  const input = resource({
    spec: { size: 1, crossplane: { compositionRef: { name: "c" }, resourceRefs: [{ name: "r" }] } },
    status: { phase: "Ready", conditions: [{ type: "Ready", status: "True" }] },
    extraTop: { a: 1 },
  });
  const { extraTop: _, ...expected } = input;
  assert.deepEqual(h2s(plan, input), expected);
  assert.deepEqual(s2h(plan, input), expected);
  // A whole undeclared status is an undeclared top-level key.
  const noStatus = pairPlan(root({ size: int() }), root({ size: int() }), []);
  assert.deepEqual(h2s(noStatus, input), resource({ spec: input.spec }));
});

Deno.test("passthrough: known terminals are skipped, known structured nodes walked only when maps", () => {
  const schema = root({ a: obj({ b: str() }), c: arr(str()), d: map(), e: free() });
  const plan = pairPlan(schema, schema, []);
  // `a` holds a non-map: nothing under it is known-structured, and it is not a leaf either.
  assert.deepEqual(h2s(plan, resource({ spec: { a: "x" } })), resource({}));
  assert.deepEqual(
    h2s(
      plan,
      resource({ spec: { a: { b: "1", z: [1] }, c: ["q"], d: { k: "v" }, e: { any: { x: 1 } } } }),
    ).spec,
    { a: { b: "1", z: [1] }, c: ["q"], d: { k: "v" }, e: { any: { x: 1 } } },
  );
});

// --- metadata / kind / apiVersion ---------------------------------------------------------

Deno.test("kind copied, metadata always a map (null → {}), no apiVersion from the engine", () => {
  const plan = pairPlan(root({ a: str() }), root({ a: str() }), []);
  assert.deepEqual(h2s(plan, { kind: KIND, metadata: null, spec: { a: "x" } }), {
    kind: KIND,
    metadata: {},
    spec: { a: "x" },
  });
  assert.deepEqual(h2s(plan, { apiVersion: apiVersion(HUB), spec: { a: "x" } }), {
    metadata: {},
    spec: { a: "x" },
  });
  assert.deepEqual(h2s(plan, { metadata: "junk" as never }), { metadata: {} });
  const meta = { name: "g", labels: { a: "b" }, managedFields: [{ manager: "m" }] };
  const out = h2s(plan, resource({}, meta));
  assert.deepEqual(out.metadata, meta);
  assert.notEqual(out.metadata, meta, "metadata is a deep copy");
});

Deno.test("a schema declaring apiVersion makes it an identity leaf; convertObject stamps the desired one", () => {
  const schema = root({ a: str() }, { extra: { apiVersion: str(), kind: str() } });
  const result = analyze(pairSource(schema, schema), configFor({ [SPOKE]: [] }));
  const plan = pairPlan(schema, schema, []);
  const input = { apiVersion: apiVersion(HUB), kind: KIND, metadata: { name: "g" } };
  assert.equal(h2s(plan, input).apiVersion, apiVersion(HUB), "stale value copied by identity");
  const out = convertObject(createRouter(result), input, apiVersion(SPOKE));
  assert.equal(out.apiVersion, apiVersion(SPOKE));
  assert.deepEqual(out, { apiVersion: apiVersion(SPOKE), kind: KIND, metadata: { name: "g" } });
});

// --- routing ------------------------------------------------------------------------------

function threeVersions() {
  const v1 = root({ storageSize: str() });
  const v2 = root({ storageGB: str() });
  const v3 = root({ disk: obj({ size: str() }) });
  const result = analyze(
    crdSource([
      { name: "v1", schema: v1 },
      { name: "v2", schema: v2, storage: true },
      { name: "v3", schema: v3 },
      { name: "v4", schema: v2 },
    ]),
    configFor({
      v1: [rename("spec.storageGB", "spec.storageSize")],
      v3: [{
        strategy: "ScalarToObject",
        scalarToObject: { hubPath: "spec.storageGB", spokePath: "spec.disk", key: "size" },
      }],
    }),
  );
  assert.equal(result.hasErrors, false, describe(result.spokes.flatMap((s) => s.errors)));
  return { result, router: createRouter(result) };
}

Deno.test("routing: spoke→spoke equals spoke→hub→spoke", () => {
  const { router } = threeVersions();
  const v1 = resource({ spec: { storageSize: "10" } });
  const direct = router.route(v1, "v1", "v3");
  assert.deepEqual(direct, resource({ spec: { disk: { size: "10" } } }));
  assert.deepEqual(direct, router.route(router.route(v1, "v1", "v2"), "v2", "v3"));
  assert.deepEqual(router.versions(), ["v2", "v1", "v3"]);
  const obj1 = { apiVersion: apiVersion("v1"), ...v1 };
  assert.deepEqual(convertObject(router, obj1, apiVersion("v3")), {
    apiVersion: apiVersion("v3"),
    ...resource({ spec: { disk: { size: "10" } } }),
  });
});

Deno.test("routing: same version returns the input itself; unknown versions have no plan", () => {
  const { router } = threeVersions();
  const v1 = resource({ spec: { storageSize: "10" } });
  assert.equal(router.route(v1, "v1", "v1"), v1);
  assert.equal(router.route(v1, "v9", "v9"), v1, "no plan is consulted");
  assertConversionError(() => router.route(v1, "v1", "v9"), 'no compiled plan for version "v9"');
  assertConversionError(() => router.route(v1, "v4", "v2"), 'no compiled plan for version "v4"');
  assertConversionError(
    () => convertObject(router, { kind: KIND, metadata: {} }, apiVersion("v1")),
    "no apiVersion",
  );
});

// --- coverage -----------------------------------------------------------------------------

Deno.test("coverage: a hub-only field is uncovered on the hub side", () => {
  const { report } = analyzePair(root({ a: str(), hubOnly: int() }), root({ a: str() }), []);
  const d = single(report.errors, "uncovered-field");
  assert.equal(d.side, "hub");
  assert.equal(d.path, "spec.hubOnly");
  assert.equal(d.ruleIndex, -1);
  assert.deepEqual(report.lossless, { hubToSpoke: false, spokeToHub: true });
  assert.equal(report.plan, undefined);
});

Deno.test("coverage: the same path with different scalar types is uncovered on both sides", () => {
  const { report } = analyzePair(root({ size: str() }), root({ size: int() }), []);
  assert.deepEqual(report.uncoveredHub, ["spec.size"]);
  assert.deepEqual(report.uncoveredSpoke, ["spec.size"]);
  assert.deepEqual(report.lossless, { hubToSpoke: false, spokeToHub: false });
});

Deno.test("coverage: a oneOf property is uncovered, naming oneOf", () => {
  const choice = {
    type: "object",
    properties: { a: str(), b: str() },
    oneOf: [{ required: ["a"] }, { required: ["b"] }],
  };
  const { report } = analyzePair(root({ choice, x: str() }), root({ x: str() }), []);
  const d = single(report.errors, "uncovered-field");
  assert.equal(d.path, "spec.choice");
  assert.match(d.message, /oneOf/);
  // Identical construct nodes on both sides are auto-covered (and copied verbatim).
  const plan = pairPlan(root({ choice }), root({ choice }), []);
  assert.deepEqual(h2s(plan, resource({ spec: { choice: { a: "1", zz: 2 } } })).spec, {
    choice: { a: "1", zz: 2 },
  });
});

Deno.test("coverage: identical arrays with different item schemas are auto-covered", () => {
  const { report } = analyzePair(
    root({ items: arr(obj({ a: str() })), e: str({ enum: ["x"] }) }),
    root({ items: arr(obj({ b: int() })), e: str({ enum: ["y"] }) }),
    [],
  );
  assert.deepEqual(report.errors, [], describe(report.errors));
});

// --- policy Warn --------------------------------------------------------------------------

Deno.test("policy Warn: uncovered fields are warnings, a plan exists, the fields are dropped", () => {
  const extra = {
    unmappedFieldPolicy: "Warn" as const,
    unmappedFieldReason: "hubOnly is internal",
  };
  const { report, result } = analyzePair(
    root({ a: str(), hubOnly: int() }),
    root({ a: str(), spokeOnly: int() }),
    [],
    extra,
  );
  assert.deepEqual(report.errors, []);
  assert.deepEqual(report.warnings.map((d) => [d.class, d.severity, d.side, d.path]), [
    ["uncovered-field", "warning", "hub", "spec.hubOnly"],
    ["uncovered-field", "warning", "spoke", "spec.spokeOnly"],
  ]);
  assert.deepEqual(
    report.lossless,
    { hubToSpoke: true, spokeToHub: true },
    "the verdict ignores warned fields",
  );
  assert.deepEqual([report.uncoveredHub, report.uncoveredSpoke], [["spec.hubOnly"], [
    "spec.spokeOnly",
  ]]);
  assert.equal(result.overallLossless, true);
  const plan = pairPlan(
    root({ a: str(), hubOnly: int() }),
    root({ a: str(), spokeOnly: int() }),
    [],
    extra,
  );
  assert.deepEqual(
    h2s(plan, resource({ spec: { a: "x", hubOnly: 1 } })),
    resource({ spec: { a: "x" } }),
  );
  assert.deepEqual(
    s2h(plan, resource({ spec: { a: "x", spokeOnly: 1 } })),
    resource({ spec: { a: "x" } }),
  );
});

Deno.test("policy Warn without unmappedFieldReason: structural error", () => {
  for (const reason of [undefined, "", "   "]) {
    const err = structuralError(
      configFor({ [SPOKE]: [] }, { unmappedFieldPolicy: "Warn", unmappedFieldReason: reason }),
    );
    assert.match(err ?? "", /unmappedFieldReason/);
  }
  assert.equal(
    structuralError(
      configFor({ [SPOKE]: [] }, { unmappedFieldPolicy: "Warn", unmappedFieldReason: "r" }),
    ),
    undefined,
  );
});

// --- claims -------------------------------------------------------------------------------

Deno.test("duplicate claim: two rules with the same hub path", () => {
  const { report } = analyzePair(root({ a: str() }), root({ b: str(), c: str() }), [
    rename("spec.a", "spec.b"),
    rename("spec.a", "spec.c"),
  ]);
  const d = single(report.errors, "duplicate-claim");
  assert.equal(d.ruleIndex, 1);
  assert.equal(d.path, "spec.a");
  assert.match(d.message, /hub path "spec\.a" is already claimed/);
  assert.deepEqual(report.ruleResults[0].errors, []);
});

Deno.test("claims: a subtree claim collides with a rule on a leaf inside it; a plain claim does not", () => {
  const network = obj({ cidr: str() });
  const subtree = analyzePair(root({ network }), root({ networkCIDR: str(), cidr: str() }), [
    {
      strategy: "ObjectToScalar",
      objectToScalar: { hubPath: "spec.network", spokePath: "spec.networkCIDR", key: "cidr" },
    },
    rename("spec.network.cidr", "spec.cidr"),
  ]).report;
  assert.equal(single(subtree.errors, "duplicate-claim").path, "spec.network.cidr");
  const plain = analyzePair(root({ network, x: str() }), root({ net: network, cidr: str() }), [
    rename("spec.network", "spec.net"),
    rename("spec.network.cidr", "spec.cidr"),
  ]).report;
  assert.deepEqual(errorsOf(plain, "duplicate-claim"), []);
});

// --- versions -----------------------------------------------------------------------------

Deno.test("hub not storage / not found: hard analysis error, no spoke analysed", () => {
  const schema = root({ a: str() });
  const notStorage = analyze(
    crdSource([{ name: "v2", schema }, { name: "v1", schema, storage: true }]),
    configFor({ v1: [] }),
  );
  assert.equal(notStorage.hasErrors, true);
  assert.equal(notStorage.overallLossless, false);
  assert.deepEqual(notStorage.spokes, []);
  assert.equal(single(notStorage.hardErrors, "hub-version").severity, "error");
  assert.match(notStorage.hardErrors[0].message, /"v2" is not the storage version/);
  const missing = analyze(
    crdSource([{ name: "v1", schema, storage: true }]),
    configFor({ v1: [] }),
  );
  assert.match(single(missing.hardErrors, "hub-version").message, /"v2" not found/);
});

Deno.test("a spoke that is not served (or missing) gets one error and no plan; the hub need not be served", () => {
  const schema = root({ a: str() });
  const result = analyze(
    crdSource([
      { name: HUB, schema, storage: true, served: false },
      { name: "v1", schema, served: false },
      { name: "v0", schema },
    ]),
    configFor({ v1: [], v0: [], v9: [] }),
  );
  assert.deepEqual(result.hardErrors, []);
  const [v1, v0, v9] = result.spokes;
  assert.equal(single(v1.errors, "spoke-version").message.includes("not served"), true);
  assert.equal(v1.plan, undefined);
  assert.deepEqual(v0.errors, []);
  assert.ok(v0.plan !== undefined);
  assert.match(single(v9.errors, "spoke-version").message, /"v9" not found/);
  const router = createRouter(result);
  assert.deepEqual([...router.plans.keys()], ["v0"]);
  assertConversionError(() => router.route(resource({}), HUB, "v1"), "no compiled plan");
});

Deno.test("translation failures are one hard rule-translation error", () => {
  const schema = root({ a: str() });
  const unknown = analyze(
    pairSource(schema, schema),
    configFor({ [SPOKE]: [{ strategy: "Teleport", teleport: {} }] }),
  );
  assert.match(
    single(unknown.hardErrors, "rule-translation").message,
    /unknown strategy "Teleport"/,
  );
  const wrongBlock = analyze(
    pairSource(schema, schema),
    configFor({ [SPOKE]: [{ strategy: "FieldRename", typeCoerce: { path: "spec.a" } }] }),
  );
  assert.match(
    single(wrongBlock.hardErrors, "rule-translation").message,
    /requires a fieldRename params block/,
  );
  const badParam = analyze(
    pairSource(schema, schema),
    configFor({
      [SPOKE]: [{ strategy: "FieldRename", fieldRename: { hubPath: "spec.a", spokePath: 3 } }],
    }),
  );
  assert.match(
    single(badParam.hardErrors, "rule-translation").message,
    /fieldRename\.spokePath: expected a string/,
  );
  assert.deepEqual(badParam.spokes, []);
});

Deno.test("analysis report: rule results carry declared paths, verdicts and their own diagnostics", () => {
  const { report, result } = analyzePair(root({ a: str(), b: str() }), root({ x: str() }), [
    rename("spec.a", "spec.x"),
    { strategy: "Delete", delete: { path: "spec.b", existsOn: "Hub" } },
  ]);
  assert.deepEqual(
    report.ruleResults.map((r) => ({ ...r, errors: r.errors.map((d) => d.class) })),
    [
      {
        index: 0,
        strategy: "FieldRename",
        hubPaths: ["spec.a"],
        spokePaths: ["spec.x"],
        lossless: { hubToSpoke: true, spokeToHub: true },
        errors: [],
        warnings: [],
      },
      {
        index: 1,
        strategy: "Delete",
        hubPaths: ["spec.b"],
        spokePaths: ["spec.b"],
        lossless: { hubToSpoke: false, spokeToHub: true },
        errors: ["unacknowledged-lossy"],
        warnings: [],
      },
    ],
  );
  assert.equal(result.hasErrors, true);
  assert.equal(result.overallLossless, false);
  assert.equal(result.kind, "CRD");
  assert.equal(result.target, "gadgets.demo.example.com");
});

Deno.test("claims are recorded even for paths that do not resolve", () => {
  const { report } = analyzePair(root({ a: str() }), root({ b: str(), c: str() }), [
    rename("spec.nope", "spec.b"),
    rename("spec.nope", "spec.c"),
  ]);
  assert.deepEqual(
    report.errors.filter((d) => d.class !== "uncovered-field").map((
      d,
    ) => [d.class, d.ruleIndex, d.path]),
    [["path-not-found", 0, "spec.nope"], ["path-not-found", 1, "spec.nope"], [
      "duplicate-claim",
      1,
      "spec.nope",
    ]],
  );
});

Deno.test("acknowledgeLossy on a lossless rule is silently accepted", () => {
  const { report } = analyzePair(root({ a: str() }), root({ b: str() }), [
    rename("spec.a", "spec.b", { acknowledgeLossy: true, reason: "just in case" }),
  ]);
  assert.deepEqual([report.errors, report.warnings], [[], []]);
  assert.deepEqual(report.lossless, { hubToSpoke: true, spokeToHub: true });
});
