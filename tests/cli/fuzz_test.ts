import assert from "node:assert/strict";
import type { JsonObject, SchemaNode } from "../../src/engine/mod.ts";
import { repairByDeletion, shrink, withoutEmptyObjects } from "../../src/cli/shrink.ts";
import { assertToolError, convctl, crdFlags, FIELD_RENAME } from "./_convctl.ts";
import { conversionConfig, schemaDocument, tempFiles, widgetConfig } from "./_fixtures.ts";

const FIXTURES = "tests/cli/fixtures/fuzz";
/** FieldsToMap declared lossless both ways, yet `settings: {}` and unknown keys break. */
const BROKEN = [...crdFlags(`${FIXTURES}/config.yaml`, `${FIXTURES}/crd.yaml`)];
const XRD = ["-c", `${FIXTURES}/xrd-config.yaml`, "-x", `${FIXTURES}/xrd.yaml`];

interface Finding {
  class: string;
  from: string;
  to: string;
  directions: { spoke: string; direction: string; lossless: boolean }[];
  fields?: { field: string; detail: string }[];
  leg?: string;
  error?: string;
  seed: number;
  version: string;
  index: number;
  occurrences: number;
  shrinkSteps: number;
  object: Record<string, unknown>;
}

const fuzz = (...args: string[]) => convctl("fuzz", ...args);

async function fuzzJson(...args: string[]) {
  const r = await fuzz(...args, "-o", "json", "--quiet");
  return { ...r, report: r.stdout === "" ? undefined : JSON.parse(r.stdout) };
}

/** Per example: the target's plural (`<plural>.demo.example.com`, config `<plural>-conversion`) and its versions. */
const EXAMPLES: Record<string, [string, string[]]> = {
  "field-rename": ["widgets", ["v1", "v2"]],
  "enum-remap": ["databases", ["v1alpha1", "v1"]],
  "foreach-volumes": ["virtualmachines", ["v1", "v2"]],
  "annotation-stash": ["caches", ["v1", "v2"]],
};

for (const [example, [plural, versions]] of Object.entries(EXAMPLES)) {
  Deno.test(`fuzz: example ${example} has no finding (exit 0)`, async () => {
    const dir = `examples/${example}`;
    const r = await fuzzJson(
      ...crdFlags(`${dir}/config.yaml`, `${dir}/crd.yaml`),
      "--count",
      "1000",
      "--seed",
      "1",
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stderr, "");
    assert.deepEqual(r.report, {
      resourceKind: "CRD",
      resource: `${plural}.demo.example.com`,
      config: `${plural}-conversion`,
      hubVersion: versions.includes("v2") ? "v2" : "v1",
      versions,
      seed: 1,
      perVersion: 1000,
      pathsTested: 2000,
      skipped: 0,
      findings: [],
    });
  });
}

Deno.test("fuzz: finds a planted loss forced through losslessOverride, shrunk", async () => {
  const r = await fuzzJson(
    ...crdFlags(`${FIXTURES}/override-config.yaml`, `${FIXTURES}/override-crd.yaml`),
    "--count",
    "1000",
    "--seed",
    "1",
  );
  assert.equal(r.code, 1, r.stderr);
  const findings = r.report.findings as Finding[];
  assert.equal(findings.length, 1);
  const [f] = findings;
  assert.equal(f.class, "round-trip-loss");
  assert.equal(`${f.from}->${f.to}`, "v2->v1");
  assert.ok(f.directions.every((d) => d.lossless), "only declared-lossless paths are findings");
  assert.deepEqual(f.fields, [{ field: "spec.size", detail: '"050Gi" came back as "50Gi"' }]);
  assert.deepEqual(f.object, {
    apiVersion: "demo.example.com/v2",
    kind: "Volume",
    metadata: { name: `fuzz-v2-${f.index}` },
    spec: { size: "050Gi" },
  });
});

Deno.test("fuzz: an XRD config", async () => {
  const r = await fuzzJson(...XRD, "-n", "50");
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.report.resourceKind, "XRD");
  assert.equal(r.report.resource, "xnetworks.demo.example.com");
  assert.equal(r.report.pathsTested, 100);
  assert.equal(r.report.skipped, 0);
  assert.deepEqual(r.report.findings, []);
  // spec.cidr's pattern is beyond the generator today: the optional field is left out instead.
  for (const g of r.report.generatorGaps ?? []) {
    assert.deepEqual([g.field, g.constraint, g.skipped], ["spec.cidr", "pattern", 0]);
  }

  const table = await fuzz(...XRD, "-n", "50", "--quiet");
  assert.equal(table.code, 0);
  assert.match(table.stdout, /^XRD Conversion Fuzz Report$/m);
  assert.match(table.stdout, /^SUMMARY: no findings in 100 round trips: /m);
});

Deno.test("fuzz: a declared-lossless FieldsToMap that loses data exits 1 with shrunk objects", async () => {
  const r = await fuzzJson(...BROKEN);
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(r.report.pathsTested, 400);
  const findings = r.report.findings as Finding[];
  assert.deepEqual(findings.map((f) => f.class).sort(), ["conversion-error", "round-trip-loss"]);
  const bothWays = [
    { spoke: "v1", direction: "spokeToHub", lossless: true },
    { spoke: "v1", direction: "hubToSpoke", lossless: true },
  ];

  // `settings: {}` expands to nothing and nothing collapses to no map.
  const loss = findings.find((f) => f.class === "round-trip-loss")!;
  assert.equal(loss.from, "v1");
  assert.equal(loss.to, "v2");
  assert.deepEqual(loss.directions, bothWays);
  assert.deepEqual(loss.fields, [{ field: "spec.settings", detail: "{} came back as absent" }]);
  assert.equal(loss.seed, 1);
  assert.equal(loss.version, "v1");
  assert.ok(loss.occurrences > 1);
  assert.ok(loss.shrinkSteps > 0);
  // Shrunk to the minimum: the required owner stays, at its simplest valid value (minLength 2).
  assert.deepEqual(loss.object, {
    apiVersion: "demo.example.com/v1",
    kind: "Gadget",
    metadata: { name: `fuzz-v1-${loss.index}` },
    spec: { owner: "aa", settings: {} },
  });

  // A key no hub field takes is a runtime error under policy Error, though the schema allows it.
  const error = findings.find((f) => f.class === "conversion-error")!;
  assert.equal(error.from, "v1");
  assert.equal(error.to, "v2");
  assert.equal(error.leg, "forward");
  assert.deepEqual(error.directions, bothWays);
  assert.equal(error.fields, undefined);
  const settings = (error.object.spec as { settings: Record<string, string> }).settings;
  const keys = Object.keys(settings);
  assert.equal(keys.length, 1);
  assert.equal(
    error.error,
    `spoke→hub (v2↔v1): spec.settings has key ${JSON.stringify(keys[0])} that maps to no field ` +
      "(policy Error)",
  );
  assert.deepEqual(error.object, {
    apiVersion: "demo.example.com/v1",
    kind: "Gadget",
    metadata: { name: `fuzz-v1-${error.index}` },
    spec: { owner: "aa", settings: { [keys[0]]: "" } },
  });
});

Deno.test("fuzz: the table shows each finding with its shrunk object as YAML", async () => {
  const r = await fuzz(...BROKEN, "--quiet");
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "");
  assert.match(r.stdout, /^CRD Conversion Fuzz Report$/m);
  assert.match(r.stdout, /^seed: 1 {2}objects: 200 per version \(v1, v2\) {2}round trips: 400$/m);
  assert.match(r.stdout, /^FINDINGS \(2\)$/m);
  assert.match(r.stdout, /^#\d round-trip-loss {2}v1→v2→v1$/m);
  assert.match(r.stdout, /^#\d conversion-error {2}v1→v2 \(forward leg of v1→v2→v1\)$/m);
  assert.match(
    r.stdout,
    /^ {2}directions: v1 spoke→hub \(lossless\), v1 hub→spoke \(lossless\)$/m,
  );
  assert.match(r.stdout, /^ {2}field: +spec\.settings: \{\} came back as absent$/m);
  assert.ok(
    r.stdout.includes("    spec:\n      owner: aa\n      settings: {}\n"),
    r.stdout,
  );
  assert.match(
    r.stdout,
    new RegExp(
      "^SUMMARY: 2 finding\\(s\\) in 400 round trips \\(seed 1; reproduce with: convctl fuzz " +
        `-c ${FIXTURES}/config.yaml --crd ${FIXTURES}/crd.yaml -n 200 --seed 1\\)$`,
      "m",
    ),
  );
});

Deno.test("fuzz: directions declared lossy are not findings", async () => {
  // Same rule, but unknown keys are dropped (so spoke→hub is lossy, and acknowledged): the empty
  // map still vanishes, yet nothing on the v1 paths is declared lossless any more.
  const config = conversionConfig("CRD", "gadgets-lossy", "gadgets.demo.example.com", {
    hubVersion: "v2",
    spokes: [{
      version: "v1",
      rules: [{
        strategy: "FieldsToMap",
        fieldsToMap: {
          hubPaths: ["spec.image", "spec.tier"],
          spokeMapPath: "spec.settings",
          onUnknownSpokeKey: "Drop",
        },
        acknowledgeLossy: true,
        reason: "unknown settings are dropped",
      }],
    }],
  });
  const dir = await tempFiles({ "config.yaml": config });
  const r = await fuzzJson(...crdFlags(`${dir}/config.yaml`, `${FIXTURES}/crd.yaml`));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(r.report.findings, []);
});

Deno.test("fuzz: the same seed gives the same report; another seed another one", async () => {
  const a = await fuzzJson(...BROKEN, "--seed", "7", "-n", "60");
  const b = await fuzzJson(...BROKEN, "--seed", "7", "-n", "60");
  assert.equal(a.code, 1);
  assert.equal(a.stdout, b.stdout);
  assert.equal(a.report.seed, 7);

  const c = await fuzzJson(...BROKEN, "--seed", "8", "-n", "60");
  assert.equal(c.report.seed, 8);
  assert.notDeepEqual(
    c.report.findings.map((f: Finding) => [f.index, f.occurrences, f.object]),
    a.report.findings.map((f: Finding) => [f.index, f.occurrences, f.object]),
  );

  // An object depends only on seed, version and index: more objects keep the first ones.
  const more = await fuzzJson(...BROKEN, "--seed", "7", "-n", "120");
  const first = (f: Finding) => `${f.class} ${f.index}`;
  assert.deepEqual(more.report.findings.map(first), a.report.findings.map(first));
});

Deno.test("fuzz: -n sets the objects per version, --version the versions generated at", async () => {
  const five = await fuzzJson(...BROKEN, "-n", "5");
  assert.equal(five.report.perVersion, 5);
  assert.equal(five.report.pathsTested, 10);

  const one = await fuzzJson(...FIELD_RENAME.flags, "--count=1");
  assert.equal(one.code, 0);
  assert.equal(one.report.pathsTested, 2);

  // Objects generated at the hub round-trip fine: the broken direction starts at v1.
  const hubOnly = await fuzzJson(...BROKEN, "--version", "v2");
  assert.equal(hubOnly.code, 0, hubOnly.stdout);
  assert.deepEqual(hubOnly.report.versions, ["v2"]);
  assert.equal(hubOnly.report.pathsTested, 200);
  assert.deepEqual(hubOnly.report.findings, []);

  for (const n of ["0", "10001", "-3", "1.5", "many"]) {
    const r = await fuzz(...BROKEN, "-n", n);
    assert.equal(r.code, 2, n);
    assert.equal(
      r.stderr,
      `error: invalid value ${
        JSON.stringify(n)
      } for --count: expected an integer from 1 to 10000\n`,
    );
    assert.equal(r.stdout, "");
  }
});

Deno.test("fuzz: no progress line when stderr is not a terminal", async () => {
  // The terminal case is tests/cli/output_test.ts's.
  const r = await fuzz(...FIELD_RENAME.flags, "-n", "60");
  assert.equal(r.code, 0);
  assert.equal(r.stderr, "");
});

Deno.test("fuzz: bad flags, files and configs exit 2", async () => {
  const cases: [string[], RegExp][] = [
    [
      [...BROKEN, "-o", "yaml"],
      /^error: unknown output format "yaml" \(use table\|json\)$/,
    ],
    [[...BROKEN, "--seed", "-1"], /^error: invalid value "-1" for --seed: expected an integer/],
    [[...BROKEN, "--seed", "x"], /^error: invalid value "x" for --seed/],
    [
      [...BROKEN, "--version", "v9"],
      /^error: --version v9 is not a configured version \(configured: v1, v2\)$/,
    ],
    [[...BROKEN, "--bogus"], /^error: unknown flag: --bogus$/],
    [[...BROKEN, "--sed", "1"], /^error: unknown flag: --sed \(did you mean --seed\?\)$/],
    [[...BROKEN, "extra"], /^error: unexpected argument "extra" for "convctl fuzz"$/],
    [["--crd", `${FIXTURES}/crd.yaml`], /^error: required flag\(s\) --config not set$/],
    [
      ["-c", `${FIXTURES}/config.yaml`],
      /^error: one of the flags --xrd, --crd, --package is required$/,
    ],
    [
      [...BROKEN, "-x", `${FIXTURES}/xrd.yaml`],
      /^error: flags --xrd and --crd cannot be used together$/,
    ],
    [
      ["-c", `${FIXTURES}/config.yaml`, "-x", `${FIXTURES}/xrd.yaml`],
      /its schema comes from --crd/,
    ],
    [
      [...crdFlags(`${FIXTURES}/missing.yaml`, `${FIXTURES}/crd.yaml`)],
      /^error: cannot read config/,
    ],
  ];
  for (const [args, message] of cases) {
    const r = await fuzz(...args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr.trimEnd(), message);
    assert.equal(r.stdout, "");
  }
});

Deno.test("fuzz: an invalid config exits 2 like test", async () => {
  const dir = await tempFiles({ "config.yaml": widgetConfig([]) });
  const r = await fuzz(...crdFlags(`${dir}/config.yaml`, FIELD_RENAME.crd));
  assertToolError(
    r,
    /^error: configuration is invalid against the CRD schema, cannot fuzz conversions:\n {2}\[spoke v1\] \[uncovered-field\]/,
  );
});

Deno.test("fuzz: values no generator can make valid are left out, or stop the run", async () => {
  // No string matches both the pattern and maxLength.
  const code = { type: "string", pattern: "^[0-9]{4}$", maxLength: 3 };
  const version = (name: string, storage: boolean, size: string, required: string[]) => ({
    name,
    served: true,
    storage,
    schema: {
      openAPIV3Schema: {
        type: "object",
        required: ["spec"],
        properties: {
          spec: { type: "object", required, properties: { [size]: { type: "integer" }, code } },
        },
      },
    },
  });
  const crd = (required: string[]) =>
    schemaDocument("CRD", "Widget", "widgets", [
      version("v1", false, "storageSize", required),
      version("v2", true, "storageGB", required),
    ]);
  const dir = await tempFiles({ "optional.yaml": crd([]), "required.yaml": crd(["code"]) });
  const run = (file: string, ...more: string[]) =>
    fuzz(...crdFlags(FIELD_RENAME.config, `${dir}/${file}`), "-n", "40", "--quiet", ...more);

  const optional = await run("optional.yaml", "-o", "json");
  assert.equal(optional.code, 0, optional.stderr);
  const report = JSON.parse(optional.stdout);
  assert.equal(report.pathsTested, 80);
  assert.equal(report.skipped, 0);
  assert.deepEqual(
    report.generatorGaps.map((g: { version: string; field: string }) => [g.version, g.field]),
    [["v1", "spec.code"], ["v2", "spec.code"]],
  );
  for (const g of report.generatorGaps) {
    assert.ok(g.leftOut > 0 && g.leftOut <= 40 && g.skipped === 0, JSON.stringify(g));
  }
  const table = await run("optional.yaml");
  assert.match(table.stdout, /^GENERATOR GAPS /m);
  assert.match(table.stdout, /^ {2}v1 +spec\.code +(pattern|maxLength) +\d+ +0$/m);

  const required = await run("required.yaml");
  assertToolError(
    required,
    /^error: no valid v1 object could be generated: the generator cannot satisfy spec\.code \((pattern|maxLength)\) and the field is required\n$/,
  );
});

Deno.test("fuzz: --help lists the flags", async () => {
  const r = await fuzz("--help");
  assert.equal(r.code, 0);
  assert.match(
    r.stdout,
    /^ {2}-n, --count N +objects generated per version \(1–10000\) \(default 200\)$/m,
  );
  assert.match(r.stdout, /^ {2}--seed S +/m);
  assert.match(r.stdout, /^ {2}--version V +/m);
});

// ---------------------------------------------------------------------------------------------
// The helpers behind the command (src/cli/shrink.ts)

const SCHEMA: SchemaNode = {
  type: "object",
  required: ["spec"],
  properties: {
    spec: {
      type: "object",
      required: ["name", "replicas"],
      properties: {
        name: { type: "string", minLength: 3 },
        replicas: { type: "integer", minimum: 1 },
        mode: { type: "string", enum: ["slow", "fast"] },
        tls: { type: "object", properties: { cert: { type: "string" } } },
        labels: { type: "object", additionalProperties: { type: "string" } },
        ports: {
          type: "array",
          minItems: 1,
          items: {
            type: "object",
            properties: { n: { type: "integer" }, opts: { type: "object" } },
          },
        },
        code: { type: "string", pattern: "^[0-9]{4}$" },
      },
    },
  },
};

const resource = (spec: JsonObject): JsonObject => ({
  apiVersion: "demo.example.com/v1",
  kind: "Thing",
  metadata: { name: "t", labels: { team: "a" } },
  spec,
});

Deno.test("withoutEmptyObjects: drops empty declared objects, keeps free-form maps", () => {
  assert.deepEqual(
    withoutEmptyObjects(resource({ tls: {}, labels: {}, ports: [{ opts: {} }, {}] }), SCHEMA),
    resource({ labels: {}, ports: [{}, {}] }),
  );
  assert.deepEqual(withoutEmptyObjects(resource({ tls: {} }), SCHEMA), {
    apiVersion: "demo.example.com/v1",
    kind: "Thing",
    metadata: { name: "t", labels: { team: "a" } },
  });
});

Deno.test("repairByDeletion: leaves out optional values the generator got wrong", () => {
  const fixed = repairByDeletion(resource({ name: "abc", replicas: 2, code: "12ab" }), SCHEMA);
  assert.equal(fixed.valid, true);
  assert.deepEqual(fixed.gaps, [{ field: "spec.code", keyword: "pattern" }]);
  assert.deepEqual(fixed.object, resource({ name: "abc", replicas: 2 }));

  const stuck = repairByDeletion(resource({ name: "ab", replicas: 2 }), SCHEMA);
  assert.equal(stuck.valid, false);
  assert.deepEqual(stuck.gaps, [{ field: "spec.name", keyword: "minLength" }]);
});

Deno.test("shrink: the smallest valid object that still fails", () => {
  const start = resource({
    name: "a-long-name",
    replicas: 17,
    mode: "slow",
    tls: { cert: "pem" },
    labels: { x: "1", y: "2" },
    ports: [{ n: 80 }, { n: 443 }],
  });
  // "Fails" while some port is 443: everything else shrinks to its simplest valid form.
  const fails = (o: JsonObject) => JSON.stringify(o).includes('"n":443');
  const r = shrink(start, { schema: SCHEMA, fails });
  assert.deepEqual(r.object, {
    apiVersion: "demo.example.com/v1",
    kind: "Thing",
    metadata: { name: "t" },
    spec: { name: "aaa", replicas: 1, ports: [{ n: 443 }] },
  });
  assert.ok(r.steps > 0 && r.attempts >= r.steps);

  // The budget bounds the work.
  const bounded = shrink(start, { schema: SCHEMA, fails, budget: 3 });
  assert.equal(bounded.attempts, 3);
});
