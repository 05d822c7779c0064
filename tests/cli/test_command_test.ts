import assert from "node:assert/strict";
import { assertToolError, convctl, crdFlags, FIELD_RENAME } from "./_convctl.ts";
import { tempFiles } from "./_fixtures.ts";

/** Per example: samples, paths, passes, acknowledged losses (none has a failure or an error). */
const EXPECTED_SUMMARIES: Record<string, [number, number, number, number]> = {
  "field-rename": [2, 4, 4, 0],
  "enum-remap": [3, 6, 5, 1],
  "foreach-volumes": [3, 6, 6, 0],
  "annotation-stash": [3, 6, 6, 0],
};

for (
  const [example, [samples, pathsTested, pass, acknowledgedLoss]] of Object.entries(
    EXPECTED_SUMMARIES,
  )
) {
  Deno.test(`test: example ${example} passes (exit 0) with the expected summary`, async () => {
    const dir = `examples/${example}`;
    const r = await convctl(
      "test",
      ...crdFlags(`${dir}/config.yaml`, `${dir}/crd.yaml`),
      "-s",
      `${dir}/samples`,
      "-o",
      "json",
      "--quiet",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    const report = JSON.parse(r.stdout);
    assert.deepEqual(report.summary, {
      samples,
      pathsTested,
      pass,
      acknowledgedLoss,
      unacknowledgedLoss: 0,
      errors: 0,
    });
    assert.equal(report.meta.resourceKind, "CRD");
    assert.match(report.meta.generatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    for (const rule of report.ruleCoverage) assert.ok(rule.matchedSamples > 0, rule.ruleId);
  });
}

Deno.test("test: report details of an acknowledged loss", async () => {
  const r = await convctl(
    "test",
    ...crdFlags("examples/enum-remap/config.yaml", "examples/enum-remap/crd.yaml"),
    "-s",
    "examples/enum-remap/samples",
    "-o",
    "json",
    "--quiet",
  );
  const report = JSON.parse(r.stdout);
  assert.deepEqual(report.meta.servedVersions, ["v1alpha1", "v1"]);
  assert.deepEqual(report.samples.map((s: { file: string }) => s.file), [
    "audit-v1alpha1.yaml",
    "catalog-v1.yaml",
    "orders-v1alpha1.yaml",
  ]);
  const audit = report.samples[0];
  assert.equal(audit.assertedVersion, "v1alpha1");
  assert.deepEqual(audit.paths[0].rulesMatched, ["(identity)"]);
  const loss = audit.paths[1];
  assert.equal(loss.result, "loss");
  assert.deepEqual(loss.rulesMatched, [
    "v1alpha1:rule[0]:EnumRemap",
    "v1alpha1:rule[1]:EnumRemap",
    "v1alpha1:rule[2]:Delete",
  ]);
  assert.deepEqual(loss.issues, [{
    field: "spec.legacyBackupSchedule",
    from: "v1alpha1",
    to: "v1",
    type: "acknowledged-loss",
    detail: '"0 3 * * *" came back as absent',
    sample: "audit-v1alpha1.yaml",
  }]);
  assert.deepEqual(report.ruleCoverage, [
    { ruleId: "v1alpha1:rule[0]:EnumRemap", matchedSamples: 3 },
    { ruleId: "v1alpha1:rule[1]:EnumRemap", matchedSamples: 3 },
    { ruleId: "v1alpha1:rule[2]:Delete", matchedSamples: 3 },
  ]);
});

/** A v1 Widget carrying an undeclared top-level key: conversions drop it, no rule owns it. */
async function lossySamples(): Promise<string> {
  return await tempFiles({
    "nested/widget.yml": {
      apiVersion: "demo.example.com/v1",
      kind: "Widget",
      metadata: { name: "w" },
      spec: { storageSize: 1 },
      extraTop: "dropped by every conversion",
    },
    "ignored.txt": "not yaml, not read",
  });
}

const widgetTest = (samples: string, ...more: string[]) =>
  convctl("test", ...FIELD_RENAME.flags, "-s", samples, ...more);

Deno.test("test: an unacknowledged loss exits 1 (and 0 with --fail-on none)", async () => {
  const samples = await lossySamples();
  const r = await widgetTest(samples, "-o", "json");
  assert.equal(r.code, 1);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(report.summary, {
    samples: 1,
    pathsTested: 2,
    pass: 1,
    acknowledgedLoss: 0,
    unacknowledgedLoss: 1,
    errors: 0,
  });
  assert.equal(report.samples[0].file, "nested/widget.yml");
  assert.deepEqual(report.samples[0].paths[1].issues, [{
    field: "extraTop",
    from: "v1",
    to: "v2",
    type: "unacknowledged-loss",
    detail: '"dropped by every conversion" came back as absent',
    sample: "nested/widget.yml",
  }]);

  const table = await widgetTest(samples);
  assert.equal(table.code, 1);
  assert.match(table.stdout, /^ +v1→v2 +FAIL +4 +\d+ +v1:rule\[0\]:FieldRename$/m);
  assert.match(table.stdout, /^ISSUES \(1\)$/m);
  assert.match(
    table.stdout,
    /^SUMMARY: 1 samples, 2 paths — 1 PASS, 0 LOSS\(acknowledged\), 1 FAIL\(unacknowledged loss\), 0 ERROR$/m,
  );

  assert.equal((await widgetTest(samples, "--fail-on", "none")).code, 0);
});

Deno.test("test: a sample at a version without a plan is an error path", async () => {
  const samples = await tempFiles({
    "w.yaml": { apiVersion: "demo.example.com/v3", kind: "Widget", metadata: { name: "w" } },
  });
  const r = await widgetTest(samples, "-o", "json");
  assert.equal(r.code, 1);
  const path = JSON.parse(r.stdout).samples[0].paths;
  assert.equal(path.length, 1);
  assert.equal(path[0].result, "error");
  assert.equal(path[0].issues[0].field, "(sample)");
  assert.equal(path[0].issues[0].type, "error");
});

Deno.test("test: an unexercised rule fails only with --strict or --fail-on warn", async () => {
  // Only v1 samples and only v1 as a target: the v1 spoke's plan never runs.
  const args = ["--version-pair", "v1", "-o", "json"];
  const samples = await tempFiles({
    "w.yaml": await Deno.readTextFile(`${FIELD_RENAME.samples}/widget-v1.yaml`),
  });
  const r = await widgetTest(samples, ...args);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(report.samples[0].paths.map((p: { to: string }) => p.to), ["v1"]);
  assert.deepEqual(report.ruleCoverage, [{ ruleId: "v1:rule[0]:FieldRename", matchedSamples: 0 }]);
  assert.equal((await widgetTest(samples, ...args, "--strict")).code, 1);
  assert.equal((await widgetTest(samples, ...args, "--fail-on", "warn")).code, 1);
  assert.equal((await widgetTest(samples, ...args, "--strict", "--fail-on", "none")).code, 0);
  const table = await widgetTest(samples, "--version-pair", "v1");
  assert.match(table.stdout, /v1:rule\[0\]:FieldRename +NOT EXERCISED by any sample \(warning\)/);
});

Deno.test("test: --skip-identity and --version-pair pick the target versions", async () => {
  const r = await widgetTest(FIELD_RENAME.samples, "--skip-identity", "-o", "json", "--quiet");
  assert.equal(r.code, 0);
  const paths = JSON.parse(r.stdout).samples.map((s: { paths: { from: string; to: string }[] }) =>
    s.paths.map((p) => `${p.from}→${p.to}`)
  );
  assert.deepEqual(paths, [["v1→v2"], ["v2→v1"]]);
  const pair = await widgetTest(
    FIELD_RENAME.samples,
    "--version-pair=v1:v9",
    "-o",
    "json",
    "--quiet",
  );
  assert.deepEqual(
    JSON.parse(pair.stdout).samples.map((s: { paths: { to: string }[] }) =>
      s.paths.map((p) => p.to)
    ),
    [["v1"], ["v1"]],
  );
});

Deno.test("test: junit output", async () => {
  const r = await widgetTest(await lossySamples(), "-o", "junit");
  assert.equal(r.code, 1);
  assert.ok(r.stdout.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n'));
  assert.match(
    r.stdout,
    /<testsuites name="CRD conversion test: widgets\.demo\.example\.com" tests="2" failures="1" errors="0" time="\d+\.\d{6}">/,
  );
  assert.match(r.stdout, /<testsuite name="CRD\/widgets\.demo\.example\.com" tests="2"/);
  assert.match(
    r.stdout,
    /<testcase name="nested\/widget\.yml: v1→v2" classname="widgets-conversion\.v2" time="\d\.\d{6}">\n\s+<failure message="unacknowledged loss">unacknowledged-loss: extraTop \(v1 -&gt; v2\): &quot;dropped by every conversion&quot; came back as absent<\/failure>/,
  );
});

Deno.test("test: --output-file writes the report and prints the summary", async () => {
  const dir = await tempFiles({});
  const file = `${dir}/report.json`;
  const r = await widgetTest(FIELD_RENAME.samples, "-o", "json", "--output-file", file);
  assert.equal(r.code, 0);
  assert.equal(
    r.stdout,
    `output written to file ${file}\n` +
      "SUMMARY: 2 samples, 4 paths — 4 PASS, 0 LOSS(acknowledged), 0 FAIL(unacknowledged loss), 0 ERROR\n",
  );
  assert.equal(JSON.parse(await Deno.readTextFile(file)).summary.pass, 4);
  // Progress lines are for terminals only (tests/cli/output_test.ts); stderr here is a pipe.
  assert.equal(r.stderr, "");
});

Deno.test("test: usage and setup errors exit 2", async () => {
  const badOutput = await widgetTest(FIELD_RENAME.samples, "-o", "yaml");
  assertToolError(
    badOutput,
    'unknown output format "yaml" (use table|json|junit|github|sarif|markdown)',
  );

  const badFailOn = await widgetTest(FIELD_RENAME.samples, "--fail-on", "always");
  assert.equal(badFailOn.code, 2);

  const noSamples = await convctl("test", ...FIELD_RENAME.flags);
  assertToolError(noSamples, "one of the flags --samples, --live, --fuzz is required");

  const empty = await widgetTest(
    await tempFiles({ "cm.yaml": { apiVersion: "v1", kind: "ConfigMap" } }),
  );
  assertToolError(empty, /^error: no Widget\.demo\.example\.com objects under /);

  const contexts = await widgetTest(FIELD_RENAME.samples, "--contexts", "a,b");
  assertToolError(contexts, "--contexts requires --live");
});
