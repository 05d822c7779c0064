import assert from "node:assert/strict";
import {
  exitCodeFor,
  isAcknowledged,
  leafCount,
  leafDiff,
  liveLines,
  propagationLines,
  renderJunit,
  type TestReport,
  valueAtDiffPath,
} from "../../src/cli/test_report.ts";

Deno.test("leafDiff: maps by key union, null equals absent, numbers by value", () => {
  assert.deepEqual(
    leafDiff(
      { a: 1, b: { c: null, d: "x" }, e: 2 },
      { a: 1.0, b: { d: "y" }, f: 3 },
    ),
    ["b.d", "e", "f"],
  );
});

Deno.test("leafDiff: arrays by index when lengths match, else one diff", () => {
  assert.deepEqual(leafDiff({ l: [1, { x: 1 }] }, { l: [1, { x: 2 }] }), ["l[1].x"]);
  assert.deepEqual(leafDiff({ l: [1, 2] }, { l: [1] }), ["l"]);
  assert.deepEqual(leafDiff({ m: { a: 1 } }, { m: "scalar" }), ["m"]);
});

Deno.test("leafDiff: ignores apiVersion, kind and server-set metadata", () => {
  assert.deepEqual(
    leafDiff(
      { apiVersion: "a/v1", kind: "K", metadata: { uid: "1", generation: 2, name: "n" } },
      { apiVersion: "a/v2", metadata: { resourceVersion: "9", name: "m" } },
    ),
    ["metadata.name"],
  );
});

Deno.test("leafCount counts non-container values; empty containers count 0", () => {
  assert.equal(leafCount({ a: 1, b: [], c: {}, d: [null, { e: "x" }], f: false }), 4);
});

Deno.test("isAcknowledged: index-free path or any dotted prefix in the lossy set", () => {
  const lossy = new Set(["spec.volumes", "spec.legacy"]);
  assert.equal(isAcknowledged("spec.volumes[3].size", lossy), true);
  assert.equal(isAcknowledged("spec.legacy", lossy), true);
  assert.equal(isAcknowledged("spec.legacyFlag", lossy), false);
  assert.equal(isAcknowledged("spec", lossy), false);
});

Deno.test("valueAtDiffPath reads through maps and indices", () => {
  const obj = { spec: { list: [{ a: 1 }, { a: [5, 6] }] } };
  assert.equal(valueAtDiffPath(obj, "spec.list[1].a[1]"), 6);
  assert.equal(valueAtDiffPath(obj, "spec.missing"), undefined);
});

/** A live XRD report: one composite and one claim sample, each with one passing path. */
function xrdReport(): TestReport {
  const path = {
    from: "v1",
    to: "v2",
    result: "pass" as const,
    timingMicros: 3,
    fieldsConverted: 1,
  };
  return {
    meta: {
      resourceKind: "XRD",
      resource: "xnets.example.org",
      config: "nets",
      hubVersion: "v1",
      servedVersions: ["v1", "v2"],
      generatedAt: "2026-01-01T00:00:00Z",
      durationMs: 1,
    },
    summary: {
      samples: 2,
      pathsTested: 2,
      pass: 2,
      acknowledgedLoss: 0,
      unacknowledgedLoss: 0,
      errors: 0,
    },
    samples: [
      {
        file: "cluster:a@v1",
        assertedVersion: "v1",
        crd: "xnets.example.org",
        crdRole: "composite",
        paths: [path],
      },
      {
        file: "cluster:ns/b@v1",
        assertedVersion: "v1",
        crd: "nets.example.org",
        crdRole: "claim",
        paths: [path],
      },
    ],
    live: {
      cluster: "kind-a",
      crd: "xnets.example.org",
      conversionStrategy: "Webhook",
      versions: ["v1", "v2"],
      namespace: "ns",
      crds: [
        {
          name: "xnets.example.org",
          role: "composite",
          conversionStrategy: "Webhook",
          versions: ["v1", "v2"],
          population: 1,
          objects: 1,
          samples: 2,
        },
        {
          name: "nets.example.org",
          role: "claim",
          conversionStrategy: "None",
          versions: ["v1"],
          namespace: "ns",
          population: 4,
          objects: 1,
          samples: 1,
        },
      ],
    },
  };
}

Deno.test("liveLines: one line per generated CRD with its sample count", () => {
  assert.equal(
    liveLines(xrdReport().live!),
    "LIVE: cluster kind-a, xnets.example.org read at v1, v2 through its conversion webhook: " +
      "2 sample(s) of 1 composite object(s)\n" +
      "LIVE: cluster kind-a, nets.example.org in namespace ns read at v1 (storage version only: " +
      "conversion strategy None): 1 sample(s) of 1 claim object(s)\n",
  );
});

Deno.test("renderJunit: a live XRD sample's testcase carries crd and crdRole", () => {
  const xml = renderJunit(xrdReport());
  assert.ok(
    xml.includes(
      `    <testcase name="cluster:ns/b@v1: v1→v2" classname="nets.v1" time="0.000003">\n` +
        "      <properties>\n" +
        `        <property name="crd" value="nets.example.org"/>\n` +
        `        <property name="crdRole" value="claim"/>\n` +
        "      </properties>\n" +
        "    </testcase>\n",
    ),
    xml,
  );
});

Deno.test("--verify-propagation: a webhook not propagated fails the run; the lines say where", () => {
  const report = xrdReport();
  assert.equal(exitCodeFor(report, "loss", false), 0);
  report.propagation = {
    propagated: false,
    reason: "NotPropagated",
    message: "generated CRD nets.example.org of XRD xnets.example.org does not carry …",
    xrd: "xnets.example.org",
    webhook: "service dco-system/main:443/convert/xnets",
    crds: [
      {
        name: "xnets.example.org",
        role: "composite",
        state: "propagated",
        observedCABundleHash: "",
      },
      {
        name: "nets.example.org",
        role: "claim",
        state: "mismatch",
        observedCABundleHash: "",
        message: 'conversion strategy is "None", not "Webhook"',
      },
    ],
    config: {
      name: "nets",
      found: true,
      condition: { status: "True", reason: "Propagated" },
      agrees: false,
    },
  };
  assert.equal(exitCodeFor(report, "loss", false), 1);
  assert.equal(exitCodeFor(report, "none", false), 0);
  assert.equal(
    propagationLines(report.propagation),
    "PROPAGATION: NOT PROPAGATED (NotPropagated): generated CRD nets.example.org of XRD " +
      "xnets.example.org does not carry …\n" +
      "  composite xnets.example.org: propagated\n" +
      '  claim nets.example.org: mismatch — conversion strategy is "None", not "Webhook"\n' +
      "  config nets: ConversionPropagated=True (Propagated) — DISAGREES\n",
  );
});
