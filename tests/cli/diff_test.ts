import assert from "node:assert/strict";
import { assertToolError, convctl, FIELD_RENAME } from "./_convctl.ts";
import { RENAME_RULE, tempFiles, widgetConfig } from "./_fixtures.ts";

const CRD = FIELD_RENAME.crd;

Deno.test("diff: two configs with the same analysis have no deltas (exit 0)", async () => {
  const dir = await tempFiles({ "b.yaml": widgetConfig([RENAME_RULE]) });
  const r = await convctl("diff", "-c", FIELD_RENAME.config, "-c", `${dir}/b.yaml`, "--crd", CRD);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    resourceKind: "CRD",
    resource: "widgets.demo.example.com",
    from: FIELD_RENAME.config,
    to: `${dir}/b.yaml`,
    hasDeltas: false,
  });
});

Deno.test("diff: a removed rule is a delta per spoke (json, table, markdown; exit 1)", async () => {
  const dir = await tempFiles({ "b.yaml": widgetConfig([]) });
  const args = ["diff", "-c", FIELD_RENAME.config, "-c", `${dir}/b.yaml`, "--crd", CRD];
  const json = await convctl(...args);
  assert.equal(json.code, 1, json.stderr);
  assert.equal(json.stderr, "");
  const report = JSON.parse(json.stdout);
  assert.equal(report.hasDeltas, true);
  assert.equal(report.hubVersionChange, undefined);
  assert.deepEqual(report.spokes[0].ruleClaimsRemoved, [
    { strategy: "FieldRename", hubPaths: ["spec.storageGB"], spokePaths: ["spec.storageSize"] },
  ]);
  assert.deepEqual(report.spokes[0].uncoveredHubAdded, ["spec.storageGB"]);
  assert.deepEqual(report.spokes[0].losslessChanges, [
    { direction: "hubToSpoke", from: true, to: false },
    { direction: "spokeToHub", from: true, to: false },
  ]);
  assert.equal(report.spokes[0].errorsAdded.length, 2);

  const table = await convctl(...args, "-o", "table");
  assert.equal(table.code, 1);
  const lines = table.stdout.split("\n");
  assert.deepEqual(lines.slice(0, 9), [
    "CRD Conversion Diff",
    "target: widgets.demo.example.com",
    `${FIELD_RENAME.config} → ${dir}/b.yaml`,
    "[spoke v1]",
    "  lossless hub→spoke: true → false",
    "  lossless spoke→hub: true → false",
    "  + uncovered hub spec.storageGB",
    "  + uncovered spoke spec.storageSize",
    "  - rule FieldRename|spec.storageGB|spec.storageSize",
  ]);

  const markdown = await convctl(...args, "-o", "markdown");
  assert.equal(markdown.code, 1);
  assert.match(markdown.stdout, /^### CRD Conversion Diff\n/);
  assert.match(markdown.stdout, /\n```diff\n\[spoke v1\]\n/);
});

Deno.test("diff: a spoke removed from the config", async () => {
  const dir = await tempFiles({
    "a.yaml": widgetConfig([RENAME_RULE]),
    "b.yaml": widgetConfig([], { spokes: [] }),
  });
  const r = await convctl("diff", "-c", `${dir}/a.yaml`, "-c", `${dir}/b.yaml`, "--crd", CRD);
  assert.equal(r.code, 1, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(report.spokesRemoved, ["v1"]);
  assert.equal(report.spokes, undefined);
});

Deno.test("diff: bad input is a one-line error and exit 2", async () => {
  const dir = await tempFiles({
    "bad.yaml": "kind: CRDConversionConfig\nspec: [\n",
    "xrd-config.yaml": {
      apiVersion: "terasky.com/v1alpha1",
      kind: "XRDConversionConfig",
      metadata: { name: "x" },
      spec: { targetXRD: { name: "x" }, hubVersion: "v2", spokes: [] },
    },
  });
  assertToolError(
    await convctl("diff", "-c", FIELD_RENAME.config, "--crd", CRD),
    "--config must be given exactly twice (got 1)",
  );
  assertToolError(
    await convctl("diff", "-c", FIELD_RENAME.config, "-c", `${dir}/missing.yaml`, "--crd", CRD),
    /^error: cannot read config .*missing\.yaml: No such file/,
  );
  assertToolError(
    await convctl("diff", "-c", FIELD_RENAME.config, "-c", `${dir}/bad.yaml`, "--crd", CRD),
    /^error: .*bad\.yaml:3:1: /,
  );
  assertToolError(
    await convctl("diff", "-c", FIELD_RENAME.config, "-c", `${dir}/xrd-config.yaml`, "--crd", CRD),
    /^error: config .*xrd-config\.yaml is a XRDConversionConfig: its schema comes from -x\/--xrd/,
  );
  assertToolError(
    await convctl(
      "diff",
      "-c",
      FIELD_RENAME.config,
      "-c",
      FIELD_RENAME.config,
      "--crd",
      CRD,
      "-o",
      "yaml",
    ),
    'unknown output format "yaml" (use json|table|markdown)',
  );
});

Deno.test("diff --live: flag mistakes and an unusable kubeconfig are one-line errors", async () => {
  const dir = await tempFiles({ "kubeconfig": "apiVersion: v1\nkind: Config\nclusters: []\n" });
  assertToolError(
    await convctl("diff", "-c", FIELD_RENAME.config, "-c", FIELD_RENAME.config, "--live"),
    "--config must be given once with --live (got 2)",
  );
  assertToolError(
    await convctl("diff", "-c", FIELD_RENAME.config, "-c", FIELD_RENAME.config),
    "one of the flags --xrd, --crd is required",
  );
  assertToolError(
    await convctl("diff", ...FIELD_RENAME.flags, "-c", FIELD_RENAME.config, "--context", "x"),
    "--context requires --live",
  );
  assertToolError(
    await convctl("diff", "-c", FIELD_RENAME.config, "--live", "--kubeconfig", `${dir}/kubeconfig`),
    new RegExp(`^error: cluster ${dir}/kubeconfig: .*\\n$`),
  );
});
