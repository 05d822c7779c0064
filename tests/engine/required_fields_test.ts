/** Required-field satisfaction and determinism. */
import assert from "node:assert/strict";
import { analyze, type ConversionRuleSpec } from "../../src/engine/mod.ts";
import { describe, single } from "./_checks.ts";
import { analyzePair, configFor, pairSource } from "./_helpers.ts";
import { int, obj, root, SPOKE, str } from "./_schemas.ts";

// Other rules write under spec (title), so spec exists in every output.
const titleRule: ConversionRuleSpec = {
  strategy: "FieldRename",
  fieldRename: { hubPath: "spec.name", spokePath: "spec.title" },
};
const WARN = {
  unmappedFieldPolicy: "Warn" as const,
  unmappedFieldReason: "size is handled by the test",
};

function requiredDiagnostics(
  hubSpec: Record<string, unknown>,
  spokeSpec: Record<string, unknown>,
  rules: ConversionRuleSpec[],
  hubRequired: string[] = [],
  spokeRequired = ["size"],
) {
  const { report } = analyzePair(
    root({ name: str(), ...hubSpec } as never, { specRequired: ["name", ...hubRequired] }),
    root({ title: str(), ...spokeSpec } as never, { specRequired: ["title", ...spokeRequired] }),
    [titleRule, ...rules],
    WARN,
  );
  return [...report.errors, ...report.warnings].filter((d) => d.class.startsWith("RequiredField"));
}

Deno.test("required spoke field written by no rule, optional on the hub: RequiredFieldUnsatisfiable", () => {
  const ds = requiredDiagnostics({ size: int() }, { size: int() }, []);
  const d = single(ds, "RequiredFieldUnsatisfiable");
  assert.deepEqual([d.severity, d.ruleIndex, d.path], ["error", -1, "spec.size"]);
  assert.match(d.message, /hub→spoke/);
  // Required on both sides: identity carries it.
  assert.deepEqual(requiredDiagnostics({ size: int() }, { size: int() }, [], ["size"]), []);
});

Deno.test("written only by a rule with when: RequiredFieldConditional naming the rule", () => {
  const gated: ConversionRuleSpec = {
    strategy: "FieldRename",
    fieldRename: { hubPath: "spec.sizeGB", spokePath: "spec.size" },
    when: { path: "spec.name", equals: "big" },
  };
  const ds = requiredDiagnostics({ sizeGB: int() }, { size: int() }, [gated], ["sizeGB"]);
  // Both directions: the gate applies to spoke→hub too, where the hub requires sizeGB.
  assert.deepEqual(
    ds.map((d) => [d.class, d.severity, d.ruleIndex, d.path, d.message.split(":")[0]]),
    [
      ["RequiredFieldConditional", "error", 1, "spec.size", "hub→spoke"],
      ["RequiredFieldConditional", "error", 1, "spec.sizeGB", "spoke→hub"],
    ],
  );
  assert.match(ds[0].message, /rule\[1\] \(FieldRename\)/);
  assert.match(ds[0].message, /convctl test --validate-output/);
});

Deno.test("FieldRename from an optional hub field: conditional; from a required one: fine", () => {
  const rename: ConversionRuleSpec = {
    strategy: "FieldRename",
    fieldRename: { hubPath: "spec.sizeGB", spokePath: "spec.size" },
  };
  assert.equal(
    single(
      requiredDiagnostics({ sizeGB: int() }, { size: int() }, [rename]),
      "RequiredFieldConditional",
    ).ruleIndex,
    1,
  );
  assert.deepEqual(
    requiredDiagnostics({ sizeGB: int() }, { size: int() }, [rename], ["sizeGB"]),
    [],
  );
});

Deno.test("written by Constant: no diagnostic", () => {
  const constant: ConversionRuleSpec = {
    strategy: "Constant",
    constant: { path: "spec.size", existsOn: "Spoke", value: 1 },
    acknowledgeLossy: true,
  };
  assert.deepEqual(requiredDiagnostics({}, { size: int() }, [constant]), []);
});

Deno.test("required with a schema default: no diagnostic", () => {
  assert.deepEqual(requiredDiagnostics({ size: int() }, { size: int({ default: 1 }) }, []), []);
});

Deno.test("required inside an optional, unwritten parent: no diagnostic", () => {
  const opt = (required: string[]) => obj({ inner: str() }, { required });
  assert.deepEqual(requiredDiagnostics({ opt: opt([]) }, { opt: opt(["inner"]) }, [], [], []), []);
  // ...but once the parent is required, the leaf counts.
  const ds = requiredDiagnostics({ opt: opt([]) }, { opt: opt(["inner"]) }, [], [], ["opt"]);
  assert.equal(single(ds, "RequiredFieldUnsatisfiable").path, "spec.opt.inner");
});

Deno.test("a required leaf under a parent written wholesale: RequiredFieldUnprovable (warning)", () => {
  const ds = requiredDiagnostics(
    { cfg: obj({ a: str() }) },
    { cfg: obj({ a: str() }, { required: ["a"] }) },
    [{ strategy: "FieldRename", fieldRename: { hubPath: "spec.cfg", spokePath: "spec.cfg" } }],
    [],
    [],
  );
  const d = single(ds, "RequiredFieldUnprovable");
  assert.deepEqual([d.severity, d.path], ["warning", "spec.cfg.a"]);
});

Deno.test("written by CEL: RequiredFieldUnprovable (warning)", () => {
  const cel: ConversionRuleSpec = {
    strategy: "CEL",
    cel: {
      hubPaths: ["spec.sizeGB"],
      spokePaths: ["spec.size"],
      hubToSpoke: "{'spec.size': int(object.spec.sizeGB)}",
      spokeToHub: "{'spec.sizeGB': int(object.spec.size)}",
    },
    acknowledgeLossy: true,
  };
  const ds = requiredDiagnostics({ sizeGB: int() }, { size: int() }, [cel], ["sizeGB"]);
  assert.deepEqual(
    ds.map((d) => [d.class, d.severity, d.ruleIndex, d.path, d.message.split(":")[0]]),
    [
      ["RequiredFieldUnprovable", "warning", 1, "spec.size", "hub→spoke"],
      ["RequiredFieldUnprovable", "warning", 1, "spec.sizeGB", "spoke→hub"],
    ],
  );
});

Deno.test("required-field diagnostics are sorted by (rule index, path), both directions", () => {
  const { report } = analyzePair(
    root({ z: int(), a: int(), name: str() }, { specRequired: ["name"] }),
    root({ z: int(), a: int(), title: str() }, { specRequired: ["z", "a", "title"] }),
    [titleRule],
    WARN,
  );
  assert.deepEqual(
    report.errors.filter((d) => d.class === "RequiredFieldUnsatisfiable").map((d) => d.path),
    ["spec.a", "spec.z"],
  );
  // spoke→hub: the hub requires name, written by the rename from the required spoke title.
  assert.ok(report.errors.every((d) => d.message.startsWith("hub→spoke")), describe(report.errors));
});

Deno.test("determinism: repeated analysis of one config yields identical reports", () => {
  const hub = root({ a: str(), b: int(), tags: obj({ env: str(), team: str() }) }, {
    specRequired: ["a"],
  });
  const spoke = root({ x: str(), env: str(), team: str(), b: int() }, { specRequired: ["x", "b"] });
  const rules: ConversionRuleSpec[] = [
    { strategy: "FieldRename", fieldRename: { hubPath: "spec.a", spokePath: "spec.x" } },
    {
      strategy: "MapToFields",
      mapToFields: { hubMapPath: "spec.tags", spokePaths: ["spec.team", "spec.env"] },
    },
  ];
  const first = analyze(pairSource(hub, spoke), configFor({ [SPOKE]: rules }));
  assert.equal(
    first.spokes[0].ruleResults[1].spokePaths.join(),
    "spec.team,spec.env",
    "config order",
  );
  for (let i = 0; i < 10; i++) {
    assert.deepEqual(analyze(pairSource(hub, spoke), configFor({ [SPOKE]: rules })), first);
  }
});
