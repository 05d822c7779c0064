/**
 * convctl refuses what it cannot convert, through the real entry point: objects of another kind,
 * invalid samples, a config for another resource, unknown `-o` formats and versions; and it reads
 * what `kubectl get -o yaml` prints (Lists, multi-document streams, stdin).
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments } from "yaml";
import { assertToolError, convctl, convctlWithStdin, crdFlags, FIELD_RENAME } from "./_convctl.ts";
import { conversionConfig, tempFiles, widgetConfig } from "./_fixtures.ts";

const CONVERT = ["convert", ...FIELD_RENAME.flags];
const V1_SAMPLE = `${FIELD_RENAME.samples}/widget-v1.yaml`;
const V2_SAMPLE = `${FIELD_RENAME.samples}/widget-v2.yaml`;

const CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n";
const widget = (name: string, spec: string) =>
  `apiVersion: demo.example.com/v1\nkind: Widget\nmetadata:\n  name: ${name}\nspec:\n${spec}`;

Deno.test("refuse: a sample of another kind or group is refused with its position, nothing printed", async () => {
  const dir = await tempFiles({
    "cm.yaml": CONFIG_MAP,
    "other-group.yaml": "apiVersion: other.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
    "no-kind.yaml": "apiVersion: demo.example.com/v1\nmetadata:\n  name: w\n",
  });
  const cm = await convctl(...CONVERT, "--sample", `${dir}/cm.yaml`, "--to", "v2");
  assertToolError(
    cm,
    `${dir}/cm.yaml:1:1: a ConfigMap (apiVersion v1) is not a Widget.demo.example.com object; ` +
      "convert converts only objects of the config's target",
  );
  assert.equal(cm.stdout, "");
  const group = await convctl(...CONVERT, "--sample", `${dir}/other-group.yaml`, "--to", "v2");
  assertToolError(group, /: a Widget \(apiVersion other\.example\.com\/v1\) is not a Widget\.demo/);
  const noKind = await convctl(...CONVERT, "--sample", `${dir}/no-kind.yaml`, "--to", "v2");
  assertToolError(noKind, /no-kind\.yaml:1:1: an object without kind is not a Widget\.demo/);
});

Deno.test("refuse: a List is converted item by item and printed as a List; a foreign item is refused", async () => {
  const list = {
    apiVersion: "v1",
    kind: "List",
    metadata: { resourceVersion: "" },
    items: [parse(await Deno.readTextFile(V1_SAMPLE)), parse(await Deno.readTextFile(V2_SAMPLE))],
  };
  const dir = await tempFiles({
    "list.yaml": list,
    "widget-list.yaml": { ...list, apiVersion: "demo.example.com/v1", kind: "WidgetList" },
    "mixed.yaml": { ...list, items: [list.items[0], parse(CONFIG_MAP)] },
  });
  const r = await convctl(...CONVERT, "--sample", `${dir}/list.yaml`, "--to", "v2", "-o", "json");
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.kind, "List");
  assert.deepEqual(out.metadata, { resourceVersion: "" });
  assert.deepEqual(out.items.map((i: { apiVersion: string }) => i.apiVersion), [
    "demo.example.com/v2",
    "demo.example.com/v2",
  ]);
  assert.deepEqual(out.items.map((i: { spec: unknown }) => i.spec), [
    { region: "eu-west-1", storageGB: 20 },
    { region: "us-east-2", storageGB: 500 },
  ]);

  const typed = await convctl(...CONVERT, "--sample", `${dir}/widget-list.yaml`, "--to", "v1");
  assert.equal(typed.code, 0, typed.stderr);
  const typedOut = parse(typed.stdout);
  assert.equal(typedOut.kind, "WidgetList");
  assert.deepEqual(typedOut.items[1].spec, { region: "us-east-2", storageSize: 500 });

  const mixed = await convctl(...CONVERT, "--sample", `${dir}/mixed.yaml`, "--to", "v2");
  assertToolError(mixed, /^error: \S*mixed\.yaml:\d+:\d+: a ConfigMap \(apiVersion v1\) is not/);
  assert.equal(mixed.stdout, "");
});

Deno.test("refuse: a multi-document stream comes out in the same shape, from stdin too", async () => {
  const stream = `${await Deno.readTextFile(V1_SAMPLE)}---\n${await Deno.readTextFile(V2_SAMPLE)}`;
  const yaml = await convctlWithStdin(stream, ...CONVERT, "--sample", "-", "--to", "v1");
  assert.equal(yaml.code, 0, yaml.stderr);
  const docs = parseAllDocuments(yaml.stdout).map((d) => d.toJS());
  assert.deepEqual(docs.map((d) => [d.metadata.name, d.apiVersion, d.spec.storageSize]), [
    ["small-widget", "demo.example.com/v1", 20],
    ["big-widget", "demo.example.com/v1", 500],
  ]);
  // JSON: one document per input document, in order.
  const json = await convctlWithStdin(
    stream,
    ...CONVERT,
    "--sample",
    "-",
    "--to",
    "v2",
    "-o",
    "json",
  );
  assert.equal(json.code, 0, json.stderr);
  const objects = json.stdout.split(/\n(?=\{)/).map((t) => JSON.parse(t));
  assert.deepEqual(objects.map((o) => o.spec.storageGB), [20, 500]);

  // A single document stays a single document (no `---`).
  const one = await convctlWithStdin(
    await Deno.readTextFile(V1_SAMPLE),
    ...CONVERT,
    "--sample",
    "-",
    "--to",
    "v2",
  );
  assert.equal(one.code, 0, one.stderr);
  assert.ok(!one.stdout.includes("---"), one.stdout);
  assert.equal(parse(one.stdout).spec.storageGB, 20);
});

Deno.test("refuse: stdin for -c, only one file from stdin, and errors name <stdin>", async () => {
  const config = await Deno.readTextFile(FIELD_RENAME.config);
  const validate = await convctlWithStdin(config, "validate", "-c", "-", "--crd", FIELD_RENAME.crd);
  assert.equal(validate.code, 0, validate.stderr);
  assert.match(validate.stdout, /^config: widgets-conversion$/m);

  const both = await convctlWithStdin(
    config,
    "convert",
    "-c",
    "-",
    "--crd",
    FIELD_RENAME.crd,
    "--sample",
    "-",
    "--to",
    "v1",
  );
  assertToolError(both, "only one file can be read from stdin: --config and --sample are -");

  const broken = await convctlWithStdin("a: [1\n", ...CONVERT, "--sample", "-", "--to", "v1");
  assertToolError(broken, /^error: <stdin>:2:1: /);
});

Deno.test("refuse: a config for another resource than the schema file's", async () => {
  const dir = await tempFiles({
    "gadgets.yaml": conversionConfig("CRD", "gadgets", "gadgets.demo.example.com", {
      hubVersion: "v2",
      spokes: [{ version: "v1" }],
    }),
  });
  const message = `config ${dir}/gadgets.yaml targets "gadgets.demo.example.com" ` +
    `(spec.targetCRD.name), but the CRD file ${FIELD_RENAME.crd} (--crd) is ` +
    `"widgets.demo.example.com"`;
  for (const command of ["validate", "analyze", "suggest"]) {
    const r = await convctl(command, ...crdFlags(`${dir}/gadgets.yaml`, FIELD_RENAME.crd));
    assertToolError(r, message);
  }
  const convert = await convctl(
    "convert",
    ...crdFlags(`${dir}/gadgets.yaml`, FIELD_RENAME.crd),
    "--sample",
    V1_SAMPLE,
    "--to",
    "v2",
  );
  assertToolError(convert, message);
});

Deno.test("refuse: a sample invalid at its version, with line and column; --no-validate-input converts it", async () => {
  const dir = await tempFiles({
    "bad.yaml": widget("bad", '  storageSize: "twenty"\n  region: 3\n'),
    "samples/bad.yaml": widget("bad", '  storageSize: "twenty"\n'),
    "samples/good.yaml": await Deno.readTextFile(V1_SAMPLE),
  });
  const r = await convctl(...CONVERT, "--sample", `${dir}/bad.yaml`, "--to", "v2");
  assertToolError(
    r,
    "input does not match the schema of its version (--no-validate-input skips this check):\n" +
      `  ${dir}/bad.yaml:6:16: [v1] spec.storageSize: expected integer, got string "twenty"\n` +
      `  ${dir}/bad.yaml:7:11: [v1] spec.region: expected string, got number 3`,
  );
  assert.equal(r.stdout, "");

  for (const skip of [["--no-validate-input"], ["--validate-input=false"]]) {
    const unchecked = await convctl(
      ...CONVERT,
      "--sample",
      `${dir}/bad.yaml`,
      "--to",
      "v2",
      "-o",
      "json",
      ...skip,
    );
    assert.equal(unchecked.code, 0, unchecked.stderr);
    assert.deepEqual(JSON.parse(unchecked.stdout).spec, { region: 3, storageGB: "twenty" });
  }
  const conflicting = await convctl(
    ...CONVERT,
    "--sample",
    `${dir}/bad.yaml`,
    "--to",
    "v2",
    "--validate-input",
    "--no-validate-input",
  );
  assertToolError(
    conflicting,
    "flags --validate-input and --no-validate-input cannot be used together",
  );

  // `test` checks its samples the same way.
  const test = await convctl("test", ...FIELD_RENAME.flags, "-s", `${dir}/samples`, "--quiet");
  assertToolError(
    test,
    /^ {2}\S*samples\/bad\.yaml:6:16: \[v1\] spec\.storageSize: expected integer/m,
  );
  const tested = await convctl(
    "test",
    ...FIELD_RENAME.flags,
    "-s",
    `${dir}/samples`,
    "--quiet",
    "--no-validate-input",
    "-o",
    "json",
  );
  assert.notEqual(tested.code, 2, tested.stderr);
  assert.equal(JSON.parse(tested.stdout).summary.samples, 2);
});

Deno.test("refuse: -o is validated by every command", async () => {
  const cases: [string[], string][] = [
    [["validate", ...FIELD_RENAME.flags], "table|json"],
    [["analyze", ...FIELD_RENAME.flags], "table|json"],
    [["suggest", ...FIELD_RENAME.flags], "yaml|json"],
    [["convert", ...FIELD_RENAME.flags, "--sample", V1_SAMPLE, "--to", "v2"], "yaml|json"],
    [["test", ...FIELD_RENAME.flags, "-s", FIELD_RENAME.samples], "table|json|junit"],
  ];
  for (const [args, formats] of cases) {
    const r = await convctl(...args, "-o", "x");
    assertToolError(r, `unknown output format "x" (use ${formats})`);
    assert.equal(r.stdout, "");
  }
});

Deno.test("refuse: decode errors carry file:line:col", async () => {
  const dir = await tempFiles({
    "broken.yaml": "apiVersion: demo.example.com/v1\nkind: Widget\nspec:\n  size: [1, 2\n",
    "config.yaml": [
      "apiVersion: terasky.com/v1alpha1",
      "kind: CRDConversionConfig",
      "metadata:",
      "  name: widgets",
      "spec:",
      "  targetCRD:",
      "    name: widgets.demo.example.com",
      "  hubVersion: v2",
      "  spokes:",
      "    - version: v1",
      "      rules:",
      "        - strategy: FieldRename",
      "          fieldRename:",
      "            hubPath: spec.storageGB",
      "            spokePth: spec.storageSize",
      "",
    ].join("\n"),
  });
  const yaml = await convctl(...CONVERT, "--sample", `${dir}/broken.yaml`, "--to", "v2");
  assertToolError(yaml, new RegExp(`^error: ${dir}/broken\\.yaml:\\d+:\\d+: `));

  const config = await convctl("validate", "-c", `${dir}/config.yaml`);
  assertToolError(
    config,
    `invalid config ${dir}/config.yaml:\n` +
      `  ${dir}/config.yaml:14:13: spec.spokes[0].rules[0].fieldRename.spokePath: required\n` +
      `  ${dir}/config.yaml:15:13: spec.spokes[0].rules[0].fieldRename.spokePth: unrecognized key ` +
      `(did you mean "spokePath"?)`,
  );
});

Deno.test("refuse: an analysis with uncovered fields points at convctl suggest", async () => {
  const dir = await tempFiles({ "config.yaml": widgetConfig([]) });
  const flags = crdFlags(`${dir}/config.yaml`, FIELD_RENAME.crd);
  const convert = await convctl("convert", ...flags, "--sample", V1_SAMPLE, "--to", "v2");
  assertToolError(
    convert,
    new RegExp(
      `\\nhint: convctl suggest -c ${dir}/config\\.yaml --crd ${FIELD_RENAME.crd} drafts rules ` +
        `for the uncovered fields\\n$`,
    ),
  );
  const validate = await convctl("validate", ...flags);
  assert.equal(validate.code, 1);
  assert.match(
    validate.stdout,
    new RegExp(`^hint: convctl suggest -c ${dir}/config\\.yaml --crd \\S+ drafts rules`, "m"),
  );
});
