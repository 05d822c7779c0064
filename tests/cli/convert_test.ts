import assert from "node:assert/strict";
import { assertToolError, convctl, crdFlags, FIELD_RENAME } from "./_convctl.ts";
import { tempFiles, widgetConfig } from "./_fixtures.ts";

const base = ["convert", ...FIELD_RENAME.flags];
/** `convert` of one of the example's samples. */
const convertSample = (sample: string, ...more: string[]) =>
  convctl(...base, "--sample", `${FIELD_RENAME.samples}/${sample}`, ...more);

Deno.test("convert: -o json prints the converted object with apiVersion stamped", async () => {
  const r = await convertSample("widget-v1.yaml", "--to", "v2", "-o", "json");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.deepEqual(JSON.parse(r.stdout), {
    apiVersion: "demo.example.com/v2",
    kind: "Widget",
    metadata: { name: "small-widget", namespace: "default" },
    spec: { region: "eu-west-1", storageGB: 20 },
    status: { phase: "Ready" },
  });
  // Keys are sorted, 2-space indented.
  assert.ok(r.stdout.startsWith('{\n  "apiVersion": "demo.example.com/v2",\n  "kind": "Widget",'));
});

Deno.test("convert: YAML by default, keys sorted", async () => {
  const r = await convertSample("widget-v2.yaml", "--to", "v1");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      "apiVersion: demo.example.com/v1",
      "kind: Widget",
      "metadata:",
      "  labels:",
      "    team: storage",
      "  name: big-widget",
      "  namespace: default",
      "spec:",
      "  region: us-east-2",
      "  storageSize: 500",
      "",
    ].join("\n"),
  );
});

Deno.test("convert: same version only restamps; --from overrides the sample's version", async () => {
  const dir = await tempFiles({
    "bare.yaml": { kind: "Widget", metadata: { name: "w" }, spec: { storageSize: 5 } },
  });
  const noVersion = await convctl(...base, "--sample", `${dir}/bare.yaml`, "--to", "v2");
  assertToolError(noVersion, /has no apiVersion; pass --from/);

  const fromV1 = (to: string) =>
    convctl(...base, "--sample", `${dir}/bare.yaml`, "--from", "v1", "--to", to, "-o", "json");
  const r = await fromV1("v2");
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).spec, { storageGB: 5 });

  const same = await fromV1("v1");
  assert.deepEqual(JSON.parse(same.stdout), {
    apiVersion: "demo.example.com/v1",
    kind: "Widget",
    metadata: { name: "w" },
    spec: { storageSize: 5 },
  });
});

Deno.test("convert: an unknown version is refused listing the convertible ones (exit 2)", async () => {
  const r = await convertSample("widget-v1.yaml", "--to", "v9");
  assertToolError(r, 'unknown --to version "v9": the config converts v1, v2');
  const close = await convertSample("widget-v1.yaml", "--to", "v22");
  assertToolError(
    close,
    'unknown --to version "v22" (did you mean "v2"?): the config converts v1, v2',
  );
  const from = await convertSample("widget-v1.yaml", "--to", "v2", "--from", "v0beta1");
  assertToolError(from, 'unknown --from version "v0beta1": the config converts v1, v2');
});

Deno.test("convert: output format, document count and a clean analysis are checked", async () => {
  const badOutput = await convertSample("widget-v1.yaml", "--to", "v2", "-o", "table");
  assertToolError(badOutput, 'unknown output format "table" (use yaml|json)');

  const dir = await tempFiles({
    "empty.yaml": "# nothing\n---\n",
    "config.yaml": widgetConfig([]),
  });
  const empty = await convctl(...base, "--sample", `${dir}/empty.yaml`, "--to", "v2");
  assertToolError(empty, /^error: sample \S*empty\.yaml holds no document\n$/);

  const invalid = await convctl(
    "convert",
    ...crdFlags(`${dir}/config.yaml`, FIELD_RENAME.crd),
    "--sample",
    `${FIELD_RENAME.samples}/widget-v1.yaml`,
    "--to",
    "v2",
  );
  assertToolError(
    invalid,
    /^error: configuration is invalid against the CRD schema, cannot convert:\n {2}\[spoke v1\] \[uncovered-field\]/,
  );
});

Deno.test("convert: YAML 1.1 scalars — unquoted `on` is a boolean", async () => {
  const dir = await tempFiles({
    "quoted.yaml":
      'apiVersion: demo.example.com/v1alpha1\nkind: Database\nspec:\n  highAvailability: "on"\n',
    "unquoted.yaml":
      "apiVersion: demo.example.com/v1alpha1\nkind: Database\nspec:\n  highAvailability: on\n",
  });
  const enumBase = [
    "convert",
    ...crdFlags("examples/enum-remap/config.yaml", "examples/enum-remap/crd.yaml"),
    "--to",
    "v1",
    "-o",
    "json",
  ];
  const quoted = await convctl(...enumBase, "--sample", `${dir}/quoted.yaml`);
  assert.equal(quoted.code, 0, quoted.stderr);
  assert.deepEqual(JSON.parse(quoted.stdout).spec, { highAvailability: true });
  // `on` reads as the boolean true, which the v1alpha1 schema refuses (a string)...
  const unquoted = await convctl(...enumBase, "--sample", `${dir}/unquoted.yaml`);
  assertToolError(
    unquoted,
    /^ {2}\S*unquoted\.yaml:4:21: \[v1alpha1\] spec\.highAvailability: expected string, got boolean true$/m,
  );
  // ...and, unchecked, is not a v1alpha1 value in the EnumRemap table.
  const unchecked = await convctl(
    ...enumBase,
    "--sample",
    `${dir}/unquoted.yaml`,
    "--no-validate-input",
  );
  assertToolError(unchecked, /^error: conversion failed: .*spec\.highAvailability/);
});

Deno.test("convert: int64 values beyond 2^53 come out digit for digit (YAML and JSON, in and out)", async () => {
  const dir = await tempFiles({
    "big.yaml": [
      "apiVersion: demo.example.com/v1",
      "kind: Widget",
      "metadata: {name: big}",
      "spec: {storageSize: 1764590400123456789, region: eu}",
      "",
    ].join("\n"),
    "big.json": '{"apiVersion":"demo.example.com/v2","kind":"Widget","metadata":{"name":"big"},' +
      '"spec":{"storageGB":-9223372036854775808,"region":"eu"}}',
  });
  const toV2 = await convctl(...base, "--sample", `${dir}/big.yaml`, "--to", "v2", "-o", "json");
  assert.equal(toV2.code, 0, toV2.stderr);
  assert.match(toV2.stdout, /"storageGB": 1764590400123456789\n/);
  const yaml = await convctl(...base, "--sample", `${dir}/big.yaml`, "--to", "v2");
  assert.equal(yaml.code, 0, yaml.stderr);
  assert.match(yaml.stdout, /\n {2}storageGB: 1764590400123456789\n/);
  const toV1 = await convctl(...base, "--sample", `${dir}/big.json`, "--to", "v1", "-o", "json");
  assert.equal(toV1.code, 0, toV1.stderr);
  assert.match(toV1.stdout, /"storageSize": -9223372036854775808\n/);
});
