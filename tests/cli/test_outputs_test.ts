/**
 * `convctl test` beyond grading: --validate-output, the golden corpus, --fuzz, --max-samples,
 * --concurrency, and the CI-native outputs (github, sarif, markdown).
 */
import assert from "node:assert/strict";
import { convctl, crdFlags, FIELD_RENAME } from "./_convctl.ts";
import { tempFiles } from "./_fixtures.ts";
import { sarifValidator } from "./_sarif.ts";

const GAUGES = "tests/cli/fixtures/validate_output";
const gaugeFlags = [
  ...crdFlags(`${GAUGES}/config.yaml`, `${GAUGES}/crd.yaml`),
  "-s",
  `${GAUGES}/samples`,
  "--quiet",
];

interface Issue {
  field: string;
  from: string;
  to: string;
  type: string;
  detail: string;
}

function issuesOf(report: { samples: { paths: { issues?: Issue[] }[] }[] }): Issue[] {
  return report.samples.flatMap((s) => s.paths.flatMap((p) => p.issues ?? []));
}

Deno.test("test --validate-output: required, enum, type and CEL violations of the target schema", async () => {
  const r = await convctl("test", ...gaugeFlags, "--validate-output", "-o", "json");
  assert.equal(r.code, 1, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.summary.errors, 1);
  const violations = issuesOf(report).filter((i) => i.type === "schema-violation");
  assert.deepEqual(
    violations.map((i) => [i.field, i.from, i.to, i.detail]),
    [
      ["spec.owner", "v1", "v2", "required: required field is missing (v1:rule[0]:CEL)"],
      ["spec.tier", "v1", "v2", 'enum: "bronze" is not one of "gold", "silver" (v1:rule[0]:CEL)'],
      [
        "spec.replicas",
        "v1",
        "v2",
        "type: must be of type integer, got string (v1:rule[0]:CEL)",
      ],
      ["spec", "v1", "v2", "x-kubernetes-validations: min must not exceed max (v1:rule[0]:CEL)"],
    ],
  );
  // Off by default: the same run passes.
  const plain = await convctl("test", ...gaugeFlags, "-o", "json");
  assert.equal(plain.code, 0, plain.stderr);
  assert.deepEqual(issuesOf(JSON.parse(plain.stdout)), []);
});

Deno.test("test -o github: one workflow command per finding, at the rule's line in the config", async () => {
  const r = await convctl("test", ...gaugeFlags, "--validate-output", "-o", "github");
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  const configLines = (await Deno.readTextFile(`${GAUGES}/config.yaml`)).split("\n");
  const ruleLine = configLines.findIndex((l) => l.includes("- strategy: CEL")) + 1;
  const column = configLines[ruleLine - 1].indexOf("strategy") + 1;
  assert.deepEqual(
    lines.slice(0, 2),
    [
      `::error file=${GAUGES}/config.yaml,line=${ruleLine},col=${column},` +
      "title=convctl/schema-violation::gauge-v1.yaml v1→v2: spec.owner: required: required " +
      "field is missing (v1:rule[0]:CEL)",
      `::error file=${GAUGES}/config.yaml,line=${ruleLine},col=${column},` +
      'title=convctl/schema-violation::gauge-v1.yaml v1→v2: spec.tier: enum: "bronze" is not ' +
      'one of "gold", "silver" (v1:rule[0]:CEL)',
    ],
  );
  assert.equal(lines.filter((l) => l.startsWith("::error ")).length, 4);
  assert.match(lines[4], /^::warning file=.*title=convctl\/rule-never-exercised::/);
});

Deno.test("test -o github: appends a Markdown table to $GITHUB_STEP_SUMMARY", async () => {
  const dir = await tempFiles({});
  const summary = `${dir}/summary.md`;
  const command = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "-A",
      "src/main/convctl.ts",
      "test",
      ...gaugeFlags,
      "--validate-output",
      "-o",
      "github",
    ],
    env: { GITHUB_STEP_SUMMARY: summary, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  });
  const { code } = await command.output();
  assert.equal(code, 1);
  const text = await Deno.readTextFile(summary);
  assert.match(text, /^### convctl test: CRD gauges\.demo\.example\.com\n/);
  assert.match(text, /\| error \| `convctl\/schema-violation` \| .*config\.yaml:\d+:\d+ \|/);
});

Deno.test("test -o sarif: valid SARIF 2.1.0 with stable rule ids and regions", async () => {
  const r = await convctl("test", ...gaugeFlags, "--validate-output", "-o", "sarif");
  assert.equal(r.code, 1, r.stderr);
  const log = JSON.parse(r.stdout);
  const validate = await sarifValidator();
  assert.ok(validate(JSON.parse(r.stdout)), JSON.stringify(validate.errors, null, 2));
  // A log the schema rejects, so the check above can fail.
  assert.equal(validate({ ...log, version: "2.0.0" }), false);
  const run = log.runs[0];
  assert.deepEqual(run.tool.driver.rules.map((r: { id: string }) => r.id), [
    "convctl/rule-never-exercised",
    "convctl/schema-violation",
  ]);
  assert.equal(run.results[0].ruleId, "convctl/schema-violation");
  assert.equal(run.results[0].level, "error");
  assert.deepEqual(run.results[0].locations[0].physicalLocation.artifactLocation, {
    uri: `${GAUGES}/config.yaml`,
  });
  assert.equal(typeof run.results[0].locations[0].physicalLocation.region.startLine, "number");
});

Deno.test("test -o markdown: a deterministic table", async () => {
  const a = await convctl("test", ...gaugeFlags, "--validate-output", "-o", "markdown");
  const b = await convctl("test", ...gaugeFlags, "--validate-output", "-o", "markdown");
  assert.equal(a.code, 1);
  assert.equal(a.stdout, b.stdout);
  assert.match(
    a.stdout,
    /^### convctl test: CRD gauges\.demo\.example\.com\n\n4 error\(s\), 1 warning\(s\), 0 note\(s\)\n\n\| Level \| Finding \| Location \| Message \|\n/,
  );
  const clean = await convctl(
    "test",
    ...FIELD_RENAME.flags,
    "-s",
    FIELD_RENAME.samples,
    "-o",
    "markdown",
    "--quiet",
  );
  assert.equal(clean.code, 0);
  assert.match(clean.stdout, /No findings\.\n$/);
});

const ENUM = "examples/enum-remap";
const enumFlags = (config: string) => [
  ...crdFlags(config, `${ENUM}/crd.yaml`),
  "-s",
  `${ENUM}/samples`,
  "--quiet",
];

Deno.test("test --record / --golden: drift after a rule change names the files and fields", async () => {
  const dir = await tempFiles({});
  const corpus = `${dir}/golden`;
  const recorded = await convctl("test", ...enumFlags(`${ENUM}/config.yaml`), "--record", corpus);
  assert.equal(recorded.code, 0, recorded.stderr);
  assert.match(recorded.stderr, /recorded 6 converted object\(s\) under /);
  const golden = await Deno.readTextFile(`${corpus}/orders-v1alpha1.yaml/v1alpha1-to-v1.yaml`);
  assert.match(golden, /size: M\n/);
  assert.match(
    await Deno.readTextFile(`${corpus}/manifest.yaml`),
    /^convctlVersion: .*\nplanHash: sha256:[0-9a-f]{64}\nschemaHash: sha256:[0-9a-f]{64}\n$/,
  );

  // Replaying the same config: no drift, byte for byte.
  const same = await convctl(
    "test",
    ...enumFlags(`${ENUM}/config.yaml`),
    "--golden",
    corpus,
    "-o",
    "json",
  );
  assert.equal(same.code, 0, same.stderr);
  assert.deepEqual(JSON.parse(same.stdout).golden.drift, []);

  // Swap two enum mappings: the two samples that use them drift at spec.size.
  const original = await Deno.readTextFile(`${ENUM}/config.yaml`);
  const changed = original.replace("{ hub: S, spoke: small }", "{ hub: S, spoke: medium }")
    .replace("{ hub: M, spoke: medium }", "{ hub: M, spoke: small }");
  assert.notEqual(changed, original);
  await Deno.writeTextFile(`${dir}/config.yaml`, changed);
  await Deno.writeTextFile(`${corpus}/stale.yaml/v1-to-v1.yaml`, "{}\n").catch(async () => {
    await Deno.mkdir(`${corpus}/stale.yaml`);
    await Deno.writeTextFile(`${corpus}/stale.yaml/v1-to-v1.yaml`, "{}\n");
  });
  const drift = await convctl(
    "test",
    ...enumFlags(`${dir}/config.yaml`),
    "--golden",
    corpus,
    "--fail-on",
    "none",
    "-o",
    "json",
  );
  assert.equal(drift.code, 1, "drift fails whatever --fail-on says");
  assert.match(
    drift.stderr,
    /WARNING: golden corpus .*: the corpus was recorded with another config/,
  );
  assert.deepEqual(JSON.parse(drift.stdout).golden.drift, [
    { file: "audit-v1alpha1.yaml/v1alpha1-to-v1.yaml", kind: "changed", fields: ["spec.size"] },
    { file: "orders-v1alpha1.yaml/v1alpha1-to-v1.yaml", kind: "changed", fields: ["spec.size"] },
    { file: "stale.yaml/v1-to-v1.yaml", kind: "orphaned" },
  ]);

  const github = await convctl(
    "test",
    ...enumFlags(`${dir}/config.yaml`),
    "--golden",
    corpus,
    "-o",
    "github",
  );
  assert.equal(github.code, 1);
  assert.match(
    github.stdout,
    new RegExp(
      `^::error file=${corpus}/audit-v1alpha1\\.yaml/v1alpha1-to-v1\\.yaml,title=convctl/golden-drift::` +
        "changed: audit-v1alpha1\\.yaml/v1alpha1-to-v1\\.yaml: spec\\.size$",
      "m",
    ),
  );

  const junit = await convctl(
    "test",
    ...enumFlags(`${dir}/config.yaml`),
    "--golden",
    corpus,
    "-o",
    "junit",
  );
  assert.equal(junit.code, 1);
  assert.match(
    junit.stdout,
    /<testsuites name="CRD conversion test: databases\.demo\.example\.com" tests="9" failures="3" errors="0"/,
  );
  assert.match(
    junit.stdout,
    /<testcase name="golden: audit-v1alpha1\.yaml\/v1alpha1-to-v1\.yaml" classname="databases-conversion\.golden" time="0\.000000">\n {6}<failure message="golden drift">changed: audit-v1alpha1\.yaml\/v1alpha1-to-v1\.yaml: spec\.size<\/failure>/,
  );

  const both = await convctl(
    "test",
    ...enumFlags(`${ENUM}/config.yaml`),
    "--golden",
    corpus,
    "--record",
    corpus,
  );
  assert.equal(both.code, 2);
  assert.equal(both.stderr, "error: flags --record and --golden cannot be used together\n");
});

Deno.test("test --fuzz --seed: generated hub objects, seed printed, reproducible", async () => {
  const run = () =>
    convctl("test", ...FIELD_RENAME.flags, "--fuzz", "20", "--seed", "7", "-o", "json", "--quiet");
  const a = await run();
  assert.equal(a.code, 0, a.stderr);
  assert.equal(a.stderr, "FUZZ: 20 generated object(s), seed 7\n");
  const report = JSON.parse(a.stdout);
  assert.equal(report.summary.samples, 20);
  assert.equal(report.samples[0].file, "fuzz-7-0");
  assert.equal(report.fuzz.seed, 7);
  assert.match(report.fuzz.reproduce, /convctl test .* --fuzz 20 --seed 7$/);
  const b = await run();
  const strip = (text: string) => {
    const r = JSON.parse(text);
    delete r.meta;
    for (const s of r.samples) for (const p of s.paths) p.timingMicros = 0;
    return r;
  };
  assert.deepEqual(strip(a.stdout), strip(b.stdout));

  const bad = await convctl("test", ...FIELD_RENAME.flags, "--fuzz", "0");
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /^error: invalid value "0" for --fuzz: expected an integer from 1 to 10000\n$/,
  );
});

Deno.test("test --record-failures: each failing object becomes a sample file", async () => {
  const dir = await tempFiles({});
  const r = await convctl(
    "test",
    ...gaugeFlags,
    "--validate-output",
    "--record-failures",
    `${dir}/failures`,
  );
  assert.equal(r.code, 1);
  assert.match(r.stderr, /wrote 1 failing sample\(s\) to /);
  const text = await Deno.readTextFile(`${dir}/failures/gauge-v1.yaml`);
  assert.match(text, /^apiVersion: demo\.example\.com\/v1\n/);
  // The written file is an ordinary sample: testing the directory fails the same way.
  const again = await convctl(
    "test",
    ...crdFlags(`${GAUGES}/config.yaml`, `${GAUGES}/crd.yaml`),
    "-s",
    `${dir}/failures`,
    "--validate-output",
    "-o",
    "json",
  );
  assert.equal(JSON.parse(again.stdout).summary.errors, 1);
});

Deno.test("test --max-samples / --sample-strategy on a directory", async () => {
  const object = (name: string, created: string) => ({
    apiVersion: "demo.example.com/v1",
    kind: "Widget",
    metadata: { name, creationTimestamp: created },
    spec: { storageSize: 1, region: "eu" },
  });
  const dir = await tempFiles({
    "a.yaml": object("a", "2024-01-03T00:00:00Z"),
    "b.yaml": object("b", "2024-01-01T00:00:00Z"),
    "c.yaml": object("c", "2024-01-04T00:00:00Z"),
    "d.yaml": object("d", "2024-01-02T00:00:00Z"),
  });
  const files = async (...extra: string[]) => {
    const r = await convctl(
      "test",
      ...FIELD_RENAME.flags,
      "-s",
      dir,
      "--quiet",
      "-o",
      "json",
      ...extra,
    );
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    return {
      files: report.samples.map((s: { file: string }) => s.file),
      sampling: report.sampling,
    };
  };
  assert.deepEqual(await files("--max-samples", "2"), {
    files: ["a.yaml", "b.yaml"],
    sampling: { strategy: "first", population: 4, tested: 2 },
  });
  assert.deepEqual((await files("--max-samples", "2", "--sample-strategy", "newest")).files, [
    "a.yaml",
    "c.yaml",
  ]);
  const random = await files("--max-samples", "2", "--sample-strategy", "random", "--seed", "5");
  assert.equal(random.files.length, 2);
  assert.deepEqual(random.sampling, { strategy: "random", population: 4, tested: 2, seed: 5 });
  assert.deepEqual(
    (await files("--max-samples", "2", "--sample-strategy", "random", "--seed", "5")).files,
    random.files,
  );
  assert.deepEqual((await files("--max-samples", "9")).sampling, undefined);
  const junit = await convctl(
    "test",
    ...FIELD_RENAME.flags,
    "-s",
    dir,
    "--quiet",
    "--max-samples",
    "3",
    "-o",
    "junit",
  );
  assert.match(
    junit.stdout,
    /<properties>\n {6}<property name="sampled" value="true"\/>\n {6}<property name="samplePopulation" value="4"\/>\n {6}<property name="sampleTested" value="3"\/>\n {4}<\/properties>/,
  );
  const table = await convctl(
    "test",
    ...FIELD_RENAME.flags,
    "-s",
    dir,
    "--quiet",
    "--max-samples",
    "1",
  );
  assert.match(
    table.stdout,
    /\nSAMPLED: 1 of 4 object\(s\), strategy first — this run did NOT cover every object\n/,
  );
});

Deno.test("test --concurrency: Workers grade the samples, report order and content unchanged", async () => {
  const files: Record<string, unknown> = {};
  for (let i = 0; i < 9; i++) {
    files[`w${i}.yaml`] = {
      apiVersion: `demo.example.com/${i % 2 === 0 ? "v1" : "v2"}`,
      kind: "Widget",
      metadata: { name: `w${i}` },
      spec: i % 2 === 0 ? { storageSize: i, region: "eu" } : { storageGB: i, region: "us" },
    };
  }
  const dir = await tempFiles(files);
  const run = async (n: string) => {
    const r = await convctl(
      "test",
      ...FIELD_RENAME.flags,
      "-s",
      dir,
      "--concurrency",
      n,
      "-o",
      "json",
    );
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    for (const s of report.samples) for (const p of s.paths) p.timingMicros = 0;
    return {
      samples: report.samples,
      summary: report.summary,
      coverage: report.ruleCoverage,
      stderr: r.stderr,
    };
  };
  const serial = await run("1");
  const parallel = await run("3");
  assert.deepEqual(parallel.samples, serial.samples);
  assert.deepEqual(parallel.summary, serial.summary);
  assert.deepEqual(parallel.coverage, serial.coverage);
  assert.deepEqual(serial.samples.map((s: { file: string }) => s.file), Object.keys(files));
  // Progress is for terminals only; on a pipe stderr stays empty in both modes.
  assert.equal(parallel.stderr, serial.stderr);
});
