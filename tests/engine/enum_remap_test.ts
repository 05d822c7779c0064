/** EnumRemap conformance. */
import assert from "node:assert/strict";
import { assertConversionError, describe, resource, single } from "./_checks.ts";
import { analyzePair, h2s, pairPlan, s2h } from "./_helpers.ts";
import { bool, int, root, str } from "./_schemas.ts";

const remap = (path: string, mapping: unknown[], extra: Record<string, unknown> = {}) => ({
  strategy: "EnumRemap",
  enumRemap: { path, mapping, ...extra },
});

Deno.test("EnumRemap: strings, integers, boolean↔string; unmapped errors; Drop omits", () => {
  const plan = pairPlan(
    root({ size: str(), code: int(), enabled: bool() }),
    root({ size: str(), code: int(), enabled: str() }),
    [
      remap("spec.size", [{ hub: "Large", spoke: "L" }, { hub: "Small", spoke: "S" }]),
      remap("spec.code", [{ hub: 404, spoke: 4 }, { hub: 200, spoke: 2 }]),
      remap("spec.enabled", [{ hub: true, spoke: "on" }, { hub: false, spoke: "off" }]),
    ],
  );
  const hub = resource({ spec: { size: "Large", code: 404, enabled: true } });
  const spoke = resource({ spec: { size: "L", code: 4, enabled: "on" } });
  assert.deepEqual(h2s(plan, hub), spoke);
  assert.deepEqual(s2h(plan, spoke), hub);
  assert.deepEqual(h2s(plan, resource({ spec: { code: 404.0 } })).spec, { code: 4 });
  assertConversionError(
    () => h2s(plan, resource({ spec: { size: "XL" } })),
    "hub→spoke",
    "spec.size",
    '"XL"',
  );
  // Strings never match numbers or booleans.
  assertConversionError(() => h2s(plan, resource({ spec: { code: "404" } })), '"404"');
  assertConversionError(() => s2h(plan, resource({ spec: { enabled: true } })), "true");

  const drop = pairPlan(
    root({ size: str() }),
    root({ size: str() }),
    [
      remap("spec.size", [{ hub: "Large", spoke: "L" }], {
        onUnmappedHubValue: "Drop",
        onUnmappedSpokeValue: "Drop",
      }),
    ].map((r) => ({ ...r, acknowledgeLossy: true })),
  );
  assert.deepEqual(h2s(drop, resource({ spec: { size: "XL" } })), resource({}));
  assert.deepEqual(s2h(drop, resource({ spec: { size: "M", other: 1 } })).spec, { other: 1 });
});

Deno.test("EnumRemap: a later entry with the same key wins; objects match structurally", () => {
  const plan = pairPlan(
    root({ v: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }),
    root({ v: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }),
    [
      remap("spec.v", [
        { hub: { a: 1, b: [true] }, spoke: "first" },
        { hub: { b: [true], a: 1 }, spoke: "second" },
        { hub: null, spoke: "nothing" },
      ], { onUnmappedSpokeValue: "Drop" }),
    ].map((r) => ({ ...r, acknowledgeLossy: true })),
  );
  assert.deepEqual(h2s(plan, resource({ spec: { v: { a: 1.0, b: [true] } } })).spec, {
    v: "second",
  });
  assert.deepEqual(h2s(plan, resource({ spec: { v: null } })).spec, { v: "nothing" });
  assertConversionError(() => h2s(plan, resource({ spec: { v: { a: 1 } } })), "no mapping");
});

Deno.test("EnumRemap: path must resolve on both sides; schema enums are not compared", () => {
  const { report } = analyzePair(
    root({ size: str({ enum: ["A", "B", "C"] }) }),
    root({ other: str() }),
    [
      remap("spec.size", [{ hub: "A", spoke: "a" }]),
    ],
  );
  const d = single(report.errors, "path-not-found");
  assert.match(d.message, /spoke schema/);
  const ok = analyzePair(
    root({ size: str({ enum: ["A", "B", "C"] }) }),
    root({ size: str({ enum: ["a"] }) }),
    [
      remap("spec.size", [{ hub: "A", spoke: "a" }]),
    ],
  ).report;
  assert.deepEqual(ok.errors, [], describe(ok.errors));
  assert.deepEqual(ok.lossless, { hubToSpoke: true, spokeToHub: true });
});

Deno.test("EnumRemap non-injective, no ack: non-injective-enum warning + unacknowledged-lossy spoke→hub", () => {
  const { report } = analyzePair(root({ size: str() }), root({ size: str() }), [
    remap("spec.size", [
      { hub: "Small", spoke: "S" },
      { hub: "Tiny", spoke: "S" },
      { hub: "Large", spoke: "L" },
    ]),
  ]);
  const w = single(report.warnings, "non-injective-enum");
  assert.equal(w.path, "spec.size");
  assert.match(single(report.errors, "unacknowledged-lossy").message, /spoke→hub/);
  assert.equal(report.errors.length, 1, describe(report.errors));
  assert.deepEqual(report.lossless, { hubToSpoke: true, spokeToHub: false });
});
