/** Config → engine rules: structural checks and translation. */
import assert from "node:assert/strict";
import {
  type ConversionConfigSpec,
  type ConversionRuleSpec,
  structuralError,
  translateRules,
  TranslationError,
} from "../../src/engine/mod.ts";
import { configFor } from "./_helpers.ts";
import { HUB, SPOKE } from "./_schemas.ts";

const ok: ConversionRuleSpec = {
  strategy: "FieldRename",
  fieldRename: { hubPath: "spec.a", spokePath: "spec.b" },
};
const check = (rules: unknown[], extra: Partial<ConversionConfigSpec> = {}) =>
  structuralError(configFor({ [SPOKE]: rules as ConversionRuleSpec[] }, extra));
const forEach = (rules: unknown[]): ConversionRuleSpec => ({
  strategy: "ForEach",
  forEach: { hubItemsPath: "spec.x", spokeItemsPath: "spec.x", rules },
});

Deno.test("structural: a valid config passes; rules may be empty or absent", () => {
  assert.equal(check([ok, forEach([ok, forEach([ok])])]), undefined);
  assert.equal(check([]), undefined);
  assert.equal(structuralError({ hubVersion: HUB, spokes: [{ version: SPOKE }] }), undefined);
});

Deno.test("structural: spokes non-empty, not the hub, not duplicated", () => {
  assert.match(
    structuralError({ hubVersion: HUB, spokes: [] }) ?? "",
    /spec\.spokes: at least one spoke/,
  );
  assert.match(
    structuralError({ hubVersion: HUB, spokes: [{ version: HUB, rules: [] }] }) ?? "",
    /spec\.spokes\[0\]\.version: "v2" is the hub version/,
  );
  assert.match(
    structuralError({
      hubVersion: HUB,
      spokes: [{ version: "v1" }, { version: "v0" }, { version: "v1" }],
    }) ?? "",
    /spec\.spokes\[2\]\.version: duplicate spoke version "v1"/,
  );
});

Deno.test("structural: exactly one params block, counting all 29 keys (null blocks do not count)", () => {
  assert.match(
    check([{ strategy: "FieldRename" }]) ?? "",
    /rules\[0\]: exactly one params block is required \(found none\)/,
  );
  assert.match(
    check([{ ...ok, typeCoerce: { path: "spec.a" } }]) ?? "",
    /found fieldRename, typeCoerce/,
  );
  assert.match(check([{ ...ok, cel: {} }]) ?? "", /found fieldRename, cel/);
  assert.match(check([{ ...ok, jsonPatch: {} }]) ?? "", /found fieldRename, jsonPatch/);
  assert.equal(check([{ ...ok, typeCoerce: null }]), undefined);
  // Which block it is is not checked here (stage 3 does).
  assert.equal(check([{ strategy: "FieldRename", typeCoerce: { path: "spec.a" } }]), undefined);
});

Deno.test("structural: when.path non-blank; CEL needs ack; FromLabel JSON; label keys", () => {
  assert.match(check([{ ...ok, when: { path: "", equals: 1 } }]) ?? "", /rules\[0\]\.when\.path/);
  assert.match(check([{ ...ok, when: { equals: 1 } }]) ?? "", /rules\[0\]\.when\.path/);
  assert.equal(check([{ ...ok, when: { path: "spec.m", equals: null } }]), undefined);
  const cel = {
    strategy: "CEL",
    cel: { hubPaths: ["spec.a"], spokePaths: ["spec.b"], hubToSpoke: "{}", spokeToHub: "{}" },
  };
  assert.match(
    check([cel]) ?? "",
    /rules\[0\]: strategy CEL is always lossy and requires acknowledgeLossy: true/,
  );
  assert.equal(check([{ ...cel, acknowledgeLossy: true }]), undefined);
  assert.match(
    check([{
      strategy: "FromLabel",
      fromLabel: { spokePath: "spec.a", key: "k", serialization: "JSON" },
    }]) ?? "",
    /rules\[0\]\.fromLabel\.serialization/,
  );
  assert.match(
    check([{ strategy: "ToLabel", toLabel: { hubPath: "spec.a", key: "a/b/c" } }]) ?? "",
    /rules\[0\]\.toLabel\.key: label key "a\/b\/c" has more than one "\/"/,
  );
  assert.match(
    check([{
      strategy: "FromLabel",
      fromLabel: { spokePath: "spec.a", key: "UPPER.example.com/x" },
    }]) ?? "",
    /rules\[0\]\.fromLabel\.key: .*DNS-1123/,
  );
});

Deno.test("structural: a third ForEach level is rejected; two are fine", () => {
  assert.equal(check([forEach([forEach([ok])])]), undefined);
  assert.match(
    check([ok, forEach([ok, forEach([ok, forEach([])])])]) ?? "",
    /^spec\.spokes\[0\]\.rules\[1\]\.forEach\.rules\[1\]\.forEach\.rules\[1\]: ForEach nesting depth exceeds the supported maximum of 2$/,
  );
});

Deno.test("structural: nested rules are checked with their full path", () => {
  assert.match(
    check([forEach([ok, { strategy: "FieldRename" }])]) ?? "",
    /^spec\.spokes\[0\]\.rules\[0\]\.forEach\.rules\[1\]: exactly one params block/,
  );
  assert.match(
    check([forEach([{ ...ok, when: { path: " " } }])]) ?? "",
    /rules\[0\]\.forEach\.rules\[0\]\.when\.path/,
  );
});

Deno.test("structural: the first failure wins", () => {
  const err = structuralError({
    hubVersion: HUB,
    unmappedFieldPolicy: "Warn",
    spokes: [{ version: HUB, rules: [{ strategy: "X" }] }],
  });
  assert.match(err ?? "", /unmappedFieldReason/);
  assert.match(
    check([{ strategy: "FieldRename" }, { ...ok, when: { path: "" } }]) ?? "",
    /rules\[0\]: exactly one params block/,
  );
  assert.match(
    structuralError({
      hubVersion: HUB,
      spokes: [{ version: "v1", rules: [{ ...ok, when: { path: "" } }] }, { version: "v1" }],
    }) ?? "",
    /spokes\[0\]\.rules\[0\]\.when\.path/,
    "the rules of spoke 0 fail before spoke 1's duplicate version",
  );
});

Deno.test("structural: malformed rule lists", () => {
  assert.match(
    structuralError({ hubVersion: HUB, spokes: [{ version: "v1", rules: "nope" as never }] }) ?? "",
    /rules: expected a list of rules/,
  );
  assert.match(check(["rule"]) ?? "", /rules\[0\]: expected a rule object/);
});

Deno.test("translate: rules become engine rules with defaults", () => {
  const [rule] = translateRules([{ ...ok, reason: "why", when: { path: "spec.m" } }], "r");
  assert.deepEqual(rule, {
    strategy: "FieldRename",
    params: { hubPath: "spec.a", spokePath: "spec.b" },
    acknowledgeLossy: false,
    reason: "why",
    when: { path: "spec.m", equals: null },
  });
  assert.deepEqual(translateRules(undefined, "r"), []);
  assert.deepEqual(translateRules(null, "r"), []);
  const [fm] = translateRules([{
    strategy: "FieldsToMap",
    fieldsToMap: { hubPaths: ["spec.a"], spokeMapPath: "spec.m", onUnknownSpokeKey: "" },
  }], "r");
  assert.equal(
    (fm.params as { onUnknownKey: string }).onUnknownKey,
    "Error",
    "empty policy → default",
  );
  const [ta] = translateRules([{
    strategy: "ToAnnotation",
    toAnnotation: { hubPath: "spec.a", key: "k" },
  }], "r");
  assert.equal((ta.params as { serialization: string }).serialization, "JSON");
  const [fl] = translateRules([{
    strategy: "FromLabel",
    fromLabel: { spokePath: "spec.a", key: "k" },
  }], "r");
  assert.equal((fl.params as { serialization: string }).serialization, "String");
});

Deno.test("translate: failures are TranslationErrors naming the offending path", () => {
  const fails = (rules: unknown, re: RegExp) =>
    assert.throws(
      () => translateRules(rules, "spec.spokes[0].rules"),
      (e: unknown) => e instanceof TranslationError && re.test(e.message),
    );
  fails([{ strategy: "Nope", nope: {} }], /rules\[0\]\.strategy: unknown strategy "Nope"/);
  fails([{ fieldRename: {} }], /rules\[0\]\.strategy: required/);
  fails(
    [{ strategy: "FieldRename", typeCoerce: {} }],
    /rules\[0\]: strategy FieldRename requires a fieldRename params block/,
  );
  fails(
    [{ strategy: "FieldRename", fieldRename: { hubPath: " ", spokePath: "b" } }],
    /fieldRename\.hubPath: expected a non-empty path/,
  );
  fails(
    [{ strategy: "FieldsToMap", fieldsToMap: { hubPaths: "spec.a", spokeMapPath: "m" } }],
    /fieldsToMap\.hubPaths: expected a list of strings/,
  );
  fails(
    [{
      strategy: "FieldsToMap",
      fieldsToMap: { hubPaths: ["a"], spokeMapPath: "m", onUnknownSpokeKey: "Ignore" },
    }],
    /onUnknownSpokeKey: expected one of Error, Drop \(got "Ignore"\)/,
  );
  fails([{ ...ok, acknowledgeLossy: "yes" }], /rules\[0\]\.acknowledgeLossy: expected a boolean/);
  fails([{ ...ok, when: "spec.a" }], /rules\[0\]\.when: expected \{path, equals\}/);
  fails(
    [{ strategy: "EnumRemap", enumRemap: { path: "spec.a", mapping: ["x"] } }],
    /enumRemap: mapping\[0\]: expected \{hub, spoke\}/,
  );
  fails(
    [forEach([{ strategy: "Nope", nope: {} }])],
    /rules\[0\]\.forEach\.rules\[0\]\.strategy: unknown strategy/,
  );
  fails({}, /expected a list of rules/);
});
