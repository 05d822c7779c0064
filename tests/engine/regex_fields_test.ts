/** ScalarToFields / FieldsToScalar conformance. */
import assert from "node:assert/strict";
import {
  type AnalysisResult,
  ConversionError,
  type ConversionRuleSpec,
  type Direction,
  type JsonObject,
} from "../../src/engine/mod.ts";
import { analyzeRules, classes, convertOne, spoke } from "./_spec_rules.ts";

const str = { type: "string" };
const int = { type: "integer" };
const num = { type: "number" };
const bool = { type: "boolean" };

const convert = (result: AnalysisResult, direction: Direction, spec: JsonObject) =>
  convertOne(result, direction, { kind: "Gadget", spec });

/** Spec of the output (undefined when the output has no spec). */
const specOf = (out: JsonObject) => out.spec as JsonObject | undefined;

// Scenario 35/36: "50Gi" ↔ {value: 50, unit: Gi}.
const SIZE_RULE: ConversionRuleSpec = {
  strategy: "ScalarToFields",
  scalarToFields: {
    hubPath: "spec.size",
    pattern: "^(?P<value>\\d+)(?P<unit>[A-Za-z]+)$",
    spokeFields: { value: "spec.size.value", unit: "spec.size.unit" },
    joinTemplate: "{{.value}}{{.unit}}",
  },
  acknowledgeLossy: true,
  reason: "split by a pattern",
};
const SIZE_SPOKE = { size: { type: "object", properties: { value: int, unit: str } } };
const sizeAnalysis = () => analyzeRules({ size: str }, SIZE_SPOKE, [SIZE_RULE]);

Deno.test("ScalarToFields: split with integer coercion, and back", () => {
  const a = sizeAnalysis();
  assert.deepEqual(spoke(a).errors, []);
  assert.deepEqual(specOf(convert(a, "hubToSpoke", { size: "50Gi" })), {
    size: { value: 50, unit: "Gi" },
  });
  assert.deepEqual(specOf(convert(a, "spokeToHub", { size: { value: 50, unit: "Gi" } })), {
    size: "50Gi",
  });
});

Deno.test("ScalarToFields: no match is a conversion error", () => {
  assert.throws(
    () => convert(sizeAnalysis(), "hubToSpoke", { size: "fifty" }),
    (e: unknown) =>
      e instanceof ConversionError && /spec\.size: "fifty" does not match pattern/.test(e.message),
  );
});

Deno.test("ScalarToFields: a catastrophic-backtracking pattern cannot stall a conversion", () => {
  const rule: ConversionRuleSpec = {
    ...SIZE_RULE,
    scalarToFields: {
      ...(SIZE_RULE.scalarToFields as JsonObject),
      pattern: "^(?P<value>(a+)+)(?P<unit>b)$",
    },
  };
  const a = analyzeRules({ size: str }, {
    size: { type: "object", properties: { value: str, unit: str } },
  }, [rule]);
  // Exponential for a backtracking engine; RE2 answers "no match" at once.
  assert.throws(
    () => convert(a, "hubToSpoke", { size: "a".repeat(30_000) + "!" }),
    (e: unknown) => e instanceof ConversionError && /does not match pattern/.test(e.message),
  );
});

Deno.test("ScalarToFields: Go %v join, missing key, nothing present", () => {
  const a = sizeAnalysis();
  assert.deepEqual(specOf(convert(a, "spokeToHub", { size: { value: 2000000, unit: "Mi" } })), {
    size: "2e+06Mi",
  });
  assert.throws(
    () => convert(a, "spokeToHub", { size: { unit: "Mi" } }),
    (e: unknown) => e instanceof ConversionError && /no entry for key "value"/.test(e.message),
  );
  assert.equal(specOf(convert(a, "spokeToHub", { size: {} })), undefined);
  assert.equal(specOf(convert(a, "spokeToHub", {})), undefined);
});

Deno.test("ScalarToFields: an absent source writes nothing; a non-string is an error", () => {
  const a = sizeAnalysis();
  assert.equal(specOf(convert(a, "hubToSpoke", {})), undefined);
  assert.throws(() => convert(a, "hubToSpoke", { size: 50 }), /spec\.size is a number/);
});

Deno.test("ScalarToFields: captures that do not coerce fail the conversion", () => {
  const a = analyzeRules({ size: str }, SIZE_SPOKE, [{
    ...SIZE_RULE,
    scalarToFields: {
      ...SIZE_RULE.scalarToFields as JsonObject,
      pattern: "^(?P<value>\\w+?)(?P<unit>[A-Z]\\w*)$",
    },
  }]);
  assert.throws(
    () => convert(a, "hubToSpoke", { size: "xGi" }),
    (e: unknown) => e instanceof ConversionError && /group value/.test(e.message),
  );
});

Deno.test("ScalarToFields: captures coerce to number and boolean kinds; null joins as <no value>", () => {
  const a = analyzeRules(
    { flag: str },
    { ratio: num, on: bool },
    [{
      strategy: "ScalarToFields",
      scalarToFields: {
        hubPath: "spec.flag",
        pattern: "(?P<ratio>[0-9.]+)/(?P<on>\\w+)",
        spokeFields: { ratio: "spec.ratio", on: "spec.on" },
        joinTemplate: "{{.ratio}}/{{.on}}",
        losslessOverride: true,
      },
    }],
  );
  assert.deepEqual(spoke(a).errors, []);
  assert.deepEqual(specOf(convert(a, "hubToSpoke", { flag: "ratio 0.25/T" })), {
    ratio: 0.25,
    on: true,
  });
  assert.deepEqual(specOf(convert(a, "spokeToHub", { ratio: 0.25, on: null })), {
    flag: "0.25/<no value>",
  });
});

Deno.test("ScalarToFields: a group that did not participate captures the empty string", () => {
  const a = analyzeRules({ v: str }, { major: str, minor: str }, [{
    strategy: "ScalarToFields",
    scalarToFields: {
      hubPath: "spec.v",
      pattern: "^(?P<major>\\d+)(?:\\.(?P<minor>\\d+))?$",
      spokeFields: { major: "spec.major", minor: "spec.minor" },
      joinTemplate: "{{.major}}.{{.minor}}",
      losslessOverride: true,
    },
  }]);
  assert.deepEqual(specOf(convert(a, "hubToSpoke", { v: "3" })), { major: "3", minor: "" });
});

Deno.test("ScalarToFields: verdict, unverifiable warning and acknowledgement", () => {
  const { acknowledgeLossy: _, ...unacked } = SIZE_RULE;
  const r = spoke(analyzeRules({ size: str }, SIZE_SPOKE, [unacked]));
  assert.deepEqual(classes(r), ["unacknowledged-lossy", "unacknowledged-lossy"]);
  assert.deepEqual(r.warnings.map((d) => d.class), ["unverifiable"]);
  assert.deepEqual(r.ruleResults[0].lossless, { hubToSpoke: false, spokeToHub: false });

  const overridden = spoke(analyzeRules({ size: str }, SIZE_SPOKE, [{
    strategy: "ScalarToFields",
    scalarToFields: { ...SIZE_RULE.scalarToFields as JsonObject, losslessOverride: true },
  }]));
  assert.deepEqual(overridden.errors, []);
  assert.deepEqual(overridden.warnings.map((d) => d.class), ["unverifiable"]);
  assert.deepEqual(overridden.lossless, { hubToSpoke: true, spokeToHub: true });
});

Deno.test("ScalarToFields: lookahead and a missing group are invalid-parameter", () => {
  const withPattern = (pattern: string, fields = { value: "spec.size.value" }) =>
    spoke(analyzeRules({ size: str }, { size: { type: "object", properties: { value: int } } }, [{
      ...SIZE_RULE,
      scalarToFields: { ...SIZE_RULE.scalarToFields as JsonObject, pattern, spokeFields: fields },
    }]));
  const lookahead = withPattern("^(?P<value>\\d+)(?=Gi)");
  assert.deepEqual(classes(lookahead), ["invalid-parameter"]);
  assert.match(lookahead.errors[0].message, /lookaround/);
  assert.equal(lookahead.plan, undefined);

  const missing = withPattern("^(?P<number>\\d+)$");
  assert.deepEqual(classes(missing), ["invalid-parameter"]);
  assert.match(missing.errors[0].message, /no named group "value"/);
});

Deno.test("ScalarToFields: bad templates, unresolved and non-scalar fields", () => {
  const badTemplate = spoke(analyzeRules({ size: str }, SIZE_SPOKE, [{
    ...SIZE_RULE,
    scalarToFields: {
      ...SIZE_RULE.scalarToFields as JsonObject,
      joinTemplate: '{{.value | printf "%d"}}{{.unit}}',
    },
  }]));
  assert.deepEqual(classes(badTemplate), ["invalid-parameter"]);
  assert.match(badTemplate.errors[0].message, /joinTemplate/);

  const unresolved = spoke(
    analyzeRules({ size: str }, { size: { type: "object", properties: { unit: str } } }, [
      SIZE_RULE,
    ]),
  );
  assert.deepEqual(classes(unresolved), ["path-not-found"]);

  const nonScalar = spoke(analyzeRules({ size: str }, {
    size: { type: "object", properties: { value: { type: "array", items: int }, unit: str } },
  }, [SIZE_RULE]));
  assert.deepEqual(classes(nonScalar), ["type-mismatch"]);
});

Deno.test("ScalarToFields: claims and duplicate field paths", () => {
  // Two groups writing one path collide as a duplicate claim.
  const dup = spoke(analyzeRules({ size: str }, { n: int }, [{
    strategy: "ScalarToFields",
    scalarToFields: {
      hubPath: "spec.size",
      pattern: "(?P<a>\\d)(?P<b>\\d)",
      spokeFields: { a: "spec.n", b: "spec.n" },
      joinTemplate: "{{.a}}{{.b}}",
      losslessOverride: true,
    },
  }]));
  assert.deepEqual(classes(dup), ["duplicate-claim"]);
});

Deno.test("ScalarToFields: spokePaths are reported sorted, every time", () => {
  const rule: ConversionRuleSpec = {
    strategy: "ScalarToFields",
    scalarToFields: {
      hubPath: "spec.addr",
      pattern: "(?P<zeta>\\w+)-(?P<alpha>\\w+)-(?P<mid>\\w+)",
      spokeFields: { zeta: "spec.z", alpha: "spec.y", mid: "spec.a" },
      joinTemplate: "{{.zeta}}-{{.alpha}}-{{.mid}}",
      losslessOverride: true,
    },
  };
  for (let i = 0; i < 5; i++) {
    const r = spoke(analyzeRules({ addr: str }, { z: str, y: str, a: str }, [rule]));
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.ruleResults[0].hubPaths, ["spec.addr"]);
    assert.deepEqual(r.ruleResults[0].spokePaths, ["spec.a", "spec.y", "spec.z"]);
  }
});

// FieldsToScalar: the mirror strategy.
const CONTACT_RULE: ConversionRuleSpec = {
  strategy: "FieldsToScalar",
  fieldsToScalar: {
    hubFields: { name: "spec.contactName", email: "spec.contactEmail" },
    pattern: "^(?P<name>.*?)\\s*<(?P<email>[^>]+)>$",
    spokePath: "spec.contact",
    joinTemplate: "{{.name}} <{{.email}}>",
  },
  acknowledgeLossy: true,
};
const contactAnalysis = () =>
  analyzeRules({ contactName: str, contactEmail: str }, { contact: str }, [CONTACT_RULE]);

Deno.test("FieldsToScalar: join hub fields, split back", () => {
  const a = contactAnalysis();
  const r = spoke(a);
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.ruleResults[0].hubPaths, ["spec.contactEmail", "spec.contactName"]);
  assert.deepEqual(r.ruleResults[0].spokePaths, ["spec.contact"]);
  assert.deepEqual(
    specOf(convert(a, "hubToSpoke", { contactName: "Jane Doe", contactEmail: "jane@example.com" })),
    { contact: "Jane Doe <jane@example.com>" },
  );
  assert.deepEqual(specOf(convert(a, "spokeToHub", { contact: "Jane Doe <jane@example.com>" })), {
    contactName: "Jane Doe",
    contactEmail: "jane@example.com",
  });
  assert.throws(() => convert(a, "spokeToHub", { contact: "Jane Doe" }), /does not match/);
  assert.throws(
    () => convert(a, "hubToSpoke", { contactName: "Jane" }),
    /no entry for key "email"/,
  );
});

Deno.test("FieldsToScalar: verdicts and diagnostics mirror ScalarToFields", () => {
  const { acknowledgeLossy: _, ...unacked } = CONTACT_RULE;
  const r = spoke(
    analyzeRules({ contactName: str, contactEmail: str }, { contact: str }, [unacked]),
  );
  assert.deepEqual(classes(r), ["unacknowledged-lossy", "unacknowledged-lossy"]);
  assert.deepEqual(r.warnings.map((d) => d.class), ["unverifiable"]);

  const badGroup = spoke(analyzeRules({ contactName: str, contactEmail: str }, { contact: str }, [{
    ...CONTACT_RULE,
    fieldsToScalar: {
      ...CONTACT_RULE.fieldsToScalar as JsonObject,
      pattern: "^(?P<name>.*?)(?<=x)<(?P<email>[^>]+)>$",
    },
  }]));
  assert.deepEqual(classes(badGroup), ["invalid-parameter"]);
});
