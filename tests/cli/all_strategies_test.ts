/**
 * Issue #4 acceptance: all 29 strategies are accepted by `convctl validate` and converted by
 * `convctl convert` with the value formats borrowed from Go and Kubernetes (numbers, quantities,
 * durations, annotation JSON). The fixture's v1 spoke uses every strategy
 * on its own fields (tests/cli/fixtures/all_strategies/).
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { convctl, crdFlags, ROOT } from "./_convctl.ts";

const DIR = "tests/cli/fixtures/all_strategies";
const CONFIG = `${DIR}/config.yaml`;
const CRD = `${DIR}/crd.yaml`;
const base = [...crdFlags(CONFIG, CRD)];

const ALL_STRATEGIES = [
  "FieldRename",
  "ScalarToObject",
  "ObjectToScalar",
  "SingletonArrayToObject",
  "ObjectToSingletonArray",
  "FieldsToMap",
  "MapToFields",
  "ToAnnotation",
  "ToLabel",
  "FromAnnotation",
  "FromLabel",
  "EnumRemap",
  "DefaultValue",
  "Constant",
  "Delete",
  "JSONPatch",
  "ForEach",
  "TypeCoerce",
  "ScalarToFields",
  "FieldsToScalar",
  "ArrayToMapByKey",
  "MapToArrayByKey",
  "NumericScale",
  "ListJoin",
  "ListSplit",
  "Quantity",
  "Duration",
  "MapKeyRename",
  "CEL",
];

interface Rule {
  strategy: string;
  forEach?: { rules?: Rule[] };
}

async function spokeRules(): Promise<Rule[]> {
  // deno-lint-ignore no-explicit-any
  const config = parse(await Deno.readTextFile(`${ROOT}${CONFIG}`)) as any;
  assert.equal(config.spec.spokes.length, 1);
  return config.spec.spokes[0].rules;
}

async function convert(sample: string, to: string): Promise<{ raw: string; out: Obj }> {
  const r = await convctl(
    "convert",
    ...base,
    "--sample",
    `${DIR}/${sample}`,
    "--to",
    to,
    "-o",
    "json",
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  return { raw: r.stdout, out: JSON.parse(r.stdout) };
}

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

Deno.test("all strategies: the fixture config uses each of the 29 strategies", async () => {
  assert.equal(new Set(ALL_STRATEGIES).size, 29);
  const used: string[] = [];
  const walk = (rules: Rule[]) => {
    for (const rule of rules) {
      used.push(rule.strategy);
      if (rule.forEach?.rules) walk(rule.forEach.rules);
    }
  };
  const rules = await spokeRules();
  walk(rules);
  assert.deepEqual([...new Set(used)].sort(), [...ALL_STRATEGIES].sort());
  // Top level alone already has all 29 (the ForEach's nested rule is an extra FieldRename).
  assert.equal(new Set(rules.map((r) => r.strategy)).size, 29);
});

Deno.test("all strategies: validate accepts the config against the CRD", async () => {
  const r = await convctl("validate", ...base);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^structurally valid: true$/m);
  assert.match(r.stdout, /^schema validated: true$/m);
  assert.doesNotMatch(r.stdout + r.stderr, /ERROR|uncovered|duplicate/i);
});

Deno.test("all strategies: analyze -o json reports every rule, no errors, 3 unverifiable", async () => {
  const r = await convctl("analyze", ...base, "-o", "json");
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.resource, "gizmos.all.dco.test");
  assert.equal(report.hubVersion, "v2");
  assert.equal(report.spokes.length, 1);
  const [spoke] = report.spokes;
  assert.equal(spoke.version, "v1");
  assert.equal(spoke.rulesEvaluated, (await spokeRules()).length);
  assert.equal(spoke.errors, undefined);
  // Acknowledged lossy rules make both directions lossy; the only warnings are the three
  // strategies that can never be verified (losslessOverride is taken on trust).
  assert.equal(spoke.losslessHubToSpoke, false);
  assert.equal(spoke.losslessSpokeToHub, false);
  assert.equal(spoke.warnings.length, 3);
  for (const [i, w] of ["JSONPatch", "ScalarToFields", "FieldsToScalar"].entries()) {
    assert.match(spoke.warnings[i], new RegExp(`^\\[unverifiable\\] .*${w}`));
  }
});

Deno.test("all strategies: hub v2 → spoke v1 with the Go/Kubernetes value formats", async () => {
  const { raw, out } = await convert("sample-v2.yaml", "v1");
  const s = out.spec;
  // TypeCoerce number → string: positional, never an exponent.
  assert.equal(s.threshold, "0.0000001");
  // Quantity: string → milli-value (binary suffix), milli-value → canonical decimal SI.
  assert.equal(s.storageMillis, 1073741824000);
  assert.equal(s.cpu, "1500m");
  // Duration: seconds → Go canonical form.
  assert.equal(s.timeout, "5m0s");
  // ToAnnotation JSON: compact, sorted keys, <, >, & escaped (also in the raw output).
  assert.equal(
    out.metadata.annotations["all.dco.test/notes"],
    '{"priority":2,"text":"a\\u003cb \\u0026\\u0026 c\\u003ed"}',
  );
  assert.ok(raw.includes(String.raw`"{\"priority\":2,\"text\":\"a\\u003cb`), raw);
  // ToLabel (String) stashes; FromAnnotation/FromLabel restore and remove their keys.
  assert.deepEqual(out.metadata.labels, { "all.dco.test/tier": "gold", team: "core" });
  assert.equal(s.legacyNote, "from <hub> & co");
  assert.equal(s.operatorTier, "premium");
  // ScalarToFields split: captures coerced to the fields' kinds.
  assert.equal(s.memoryValue, 512);
  assert.equal(s.memoryUnit, "Mi");
  // FieldsToScalar join (template with trim markers and a comment).
  assert.equal(s.endpoint, "db.internal:5432");
  // ListJoin / ListSplit.
  assert.equal(s.allowedPortList, "80;443");
  assert.deepEqual(s.hosts, ["a.example", "b.example"]);
  // MapKeyRename: listed keys renamed, others kept.
  assert.deepEqual(s.matchLabels, { application: "web", level: "frontend", zone: "eu" });
  // ArrayToMapByKey: key field removed from each entry.
  assert.deepEqual(s.portsByName, {
    Admin: { port: 8443 },
    http: { port: 80 },
    https: { port: 443 },
  });
  // MapToArrayByKey: byte-wise key order (upper case first), not input order.
  assert.deepEqual(s.tiers.map((t: Obj) => t.name), ["Gold", "gold", "silver"]);
  // NumericScale towards a number: 25 / 10.
  assert.equal(s.offset, 2.5);
  // EnumRemap, CEL (dotted-key result), JSONPatch (move).
  assert.equal(s.size, "L");
  assert.equal(s.bitHigh, 4);
  assert.equal(s.bitLow, 1);
  assert.equal(s.legacyFlagV2, true);
  // The whole object: every other strategy, and nothing leaked from the hub.
  assert.deepEqual(out, {
    apiVersion: "all.dco.test/v1",
    kind: "Gizmo",
    metadata: {
      annotations: {
        "all.dco.test/notes": '{"priority":2,"text":"a\\u003cb \\u0026\\u0026 c\\u003ed"}',
      },
      labels: { "all.dco.test/tier": "gold", team: "core" },
      name: "gizmo-hub",
      namespace: "default",
    },
    spec: {
      allowedPortList: "80;443",
      bitHigh: 4,
      bitLow: 1,
      cpu: "1500m",
      cpuRequest: "500m",
      disks: [{ sizeGB: 100 }],
      endpoint: "db.internal:5432",
      hosts: ["a.example", "b.example"],
      legacyFlagV2: true,
      legacyNote: "from <hub> & co",
      limits: { cpu: "4", memory: "8Gi" },
      matchLabels: { application: "web", level: "frontend", zone: "eu" },
      memoryRequest: "1Gi",
      memoryUnit: "Mi",
      memoryValue: 512,
      offset: 2.5,
      operatorTier: "premium",
      ownerName: "alice",
      portsByName: { Admin: { port: 8443 }, http: { port: 80 }, https: { port: 443 } },
      replicas: { count: 3, mode: "auto" },
      size: "L",
      storageMillis: 1073741824000,
      threshold: "0.0000001",
      tiers: [
        { name: "Gold", weight: 9 },
        { name: "gold", weight: 5 },
        { name: "silver", weight: 1 },
      ],
      timeout: "5m0s",
      title: "Hub Gizmo",
      volumes: [{ name: "data", size: 10 }, { name: "logs", size: 2 }],
      zone: { name: "eu-1a" },
      zoneHint: "a",
    },
  });
});

Deno.test("all strategies: spoke v1 → hub v2 with the Go/Kubernetes value formats", async () => {
  const { raw, out } = await convert("sample-v1.yaml", "v2");
  const s = out.spec;
  // TypeCoerce string → number: trimmed Go ParseFloat.
  assert.equal(s.threshold, 2.5);
  // ScalarToFields join: Go %v switches to an exponent from 1e6.
  assert.equal(s.memory, "2e+06Mi");
  // FieldsToScalar split: the port capture becomes an integer.
  assert.equal(s.hostName, "api.example");
  assert.equal(s.port, 8080);
  // Quantity: milli-value → canonical; "0.5" → 500 millis.
  assert.equal(s.storage, "1500m");
  assert.equal(s.cpuMillis, 500);
  // Duration: string → whole seconds.
  assert.equal(s.timeoutSeconds, 5400);
  // NumericScale onto an integer: -0.25 × 10 = -2.5 rounds half away from zero.
  assert.equal(s.offsetTenths, -3);
  // ToAnnotation / ToLabel restore (stash keys removed); FromAnnotation stashes as Go JSON.
  assert.deepEqual(s.notes, { priority: 7, text: "x > y" });
  assert.equal(s.tier, "silver");
  assert.deepEqual(out.metadata.annotations, {
    "all.dco.test/legacy-note": '"note \\u0026 \\u003cmore\\u003e"',
  });
  assert.ok(raw.includes(String.raw`"\"note \\u0026 \\u003cmore\\u003e\""`), raw);
  assert.deepEqual(out.metadata.labels, { "operator-tier": "basic", team: "edge" });
  // ArrayToMapByKey map → array: byte-wise key order.
  assert.deepEqual(s.ports, [
    { name: "Admin", port: 8443 },
    { name: "http", port: 80 },
    { name: "https", port: 443 },
  ]);
  // MapToArrayByKey array → map.
  assert.deepEqual(s.tiersByName, { gold: { weight: 5 }, silver: { weight: 1 } });
  // ListJoin split (coerced to integers) / ListSplit join.
  assert.deepEqual(s.allowedPorts, [8080, 9090]);
  assert.equal(s.hostsCsv, "x,y,z");
  // MapKeyRename inverse; EnumRemap; CEL (nested-map result); JSONPatch; Constant.
  assert.deepEqual(s.selector, { app: "api", other: "x", tier: "backend" });
  assert.equal(s.size, "Small");
  assert.equal(s.packed, 515);
  assert.equal(s.legacyFlag, false);
  assert.equal(s.schemaLevel, 2);
  // DefaultValue / Delete fields exist only on v1 and are dropped.
  assert.equal("zoneHint" in s, false);
  assert.equal("debugMode" in s, false);
  assert.deepEqual(out, {
    apiVersion: "all.dco.test/v2",
    kind: "Gizmo",
    metadata: {
      annotations: { "all.dco.test/legacy-note": '"note \\u0026 \\u003cmore\\u003e"' },
      labels: { "operator-tier": "basic", team: "edge" },
      name: "gizmo-spoke",
      namespace: "default",
    },
    spec: {
      allowedPorts: [8080, 9090],
      cpuLimit: "2",
      cpuMillis: 500,
      displayName: "Spoke Gizmo",
      hostName: "api.example",
      hostsCsv: "x,y,z",
      legacyFlag: false,
      memory: "2e+06Mi",
      memoryLimit: "4Gi",
      notes: { priority: 7, text: "x > y" },
      offsetTenths: -3,
      owner: { name: "bob" },
      packed: 515,
      port: 8080,
      ports: [
        { name: "Admin", port: 8443 },
        { name: "http", port: 80 },
        { name: "https", port: 443 },
      ],
      primaryDisk: { sizeGB: 50 },
      replicaCount: 5,
      requests: { cpu: "250m", memory: "512Mi" },
      schemaLevel: 2,
      selector: { app: "api", other: "x", tier: "backend" },
      size: "Small",
      storage: "1500m",
      threshold: 2.5,
      tier: "silver",
      tiersByName: { gold: { weight: 5 }, silver: { weight: 1 } },
      timeoutSeconds: 5400,
      volumes: [{ name: "cache", sizeGB: 7 }],
      zones: [{ name: "us-2b" }],
    },
  });
});
