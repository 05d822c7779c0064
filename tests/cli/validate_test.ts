import assert from "node:assert/strict";
import { assertToolError, convctl, crdFlags, FIELD_RENAME } from "./_convctl.ts";
import { RENAME_RULE, tempFiles, widgetConfig } from "./_fixtures.ts";

/** `validate` of `<dir>/config.yaml` against the field-rename example's CRD. */
const validateAgainstWidgets = (dir: string, ...more: string[]) =>
  convctl("validate", ...crdFlags(`${dir}/config.yaml`, FIELD_RENAME.crd), ...more);

Deno.test("validate: a valid config against its CRD exits 0", async () => {
  const r = await convctl("validate", ...FIELD_RENAME.flags);
  assert.equal(r.stderr, "");
  assert.equal(
    r.stdout,
    "config: widgets-conversion\nstructurally valid: true\nschema validated: true\n",
  );
  assert.equal(r.code, 0);
});

Deno.test("validate: without a schema flag only the structure is checked", async () => {
  const r = await convctl("validate", "--config=" + FIELD_RENAME.config, "-o", "json");
  assert.equal(r.code, 0);
  assert.deepEqual(JSON.parse(r.stdout), {
    config: "widgets-conversion",
    structurallyValid: true,
    schemaValidated: false,
  });
});

Deno.test("validate: a path missing from the schema exits 1 naming class and path", async () => {
  const dir = await tempFiles({
    "config.yaml": widgetConfig([
      RENAME_RULE,
      { strategy: "FieldRename", fieldRename: { hubPath: "spec.foo", spokePath: "spec.bar" } },
    ]),
  });
  const r = await validateAgainstWidgets(dir);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /^schema validated: false$/m);
  assert.match(r.stdout, /^ERROR: configuration is invalid against the CRD schema:$/m);
  assert.match(
    r.stdout,
    /^ {2}\[spoke v1\] \[path-not-found\] spec\.foo: rule\[1\] FieldRename: hubPath "spec\.foo" not found/m,
  );
  assert.match(r.stdout, /\[spoke v1\] \[path-not-found\] spec\.bar: rule\[1\] FieldRename/);
});

Deno.test("validate: json mode also exits 1 on errors (deliberate divergence)", async () => {
  const dir = await tempFiles({ "config.yaml": widgetConfig([]) });
  const r = await validateAgainstWidgets(dir, "-o", "json");
  assert.equal(r.code, 1);
  const out = JSON.parse(r.stdout);
  assert.equal(out.structurallyValid, true);
  assert.equal(out.schemaValidated, false);
  assert.equal(out.errors.length, 1);
  assert.equal(
    out.errors[0],
    "configuration is invalid against the CRD schema:\n" +
      "  [spoke v1] [uncovered-field] spec.storageGB: hub field spec.storageGB is not covered by " +
      "any rule and has no identical spoke field\n" +
      "  [spoke v1] [uncovered-field] spec.storageSize: spoke field spec.storageSize is not " +
      "covered by any rule and has no identical hub field",
  );
});

Deno.test("validate: a structural failure stops before the schema", async () => {
  const dir = await tempFiles({
    "config.yaml": widgetConfig([RENAME_RULE], { unmappedFieldPolicy: "Warn" }),
  });
  const r = await validateAgainstWidgets(dir);
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout,
    "config: widgets-test\nstructurally valid: false\nschema validated: false\n" +
      "ERROR: [structural] spec.unmappedFieldReason: required (non-blank) when " +
      "unmappedFieldPolicy is Warn\n",
  );
});

Deno.test("validate: translation errors are result errors with their class", async () => {
  const dir = await tempFiles({
    "config.yaml": widgetConfig([{ strategy: "FieldRename", typeCoerce: { path: "spec.region" } }]),
  });
  const r = await validateAgainstWidgets(dir, "-o", "json");
  assert.equal(r.code, 1);
  const errors: string[] = JSON.parse(r.stdout).errors;
  assert.equal(errors.length, 1);
  assert.match(
    errors[0],
    /^\[rule-translation\] invalid rule configuration: spec\.spokes\[0\]\.rules\[0\]/,
  );
});

Deno.test("validate: an unreadable config file exits 2", async () => {
  const r = await convctl("validate", "-c", "does/not/exist.yaml");
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^error: cannot read config does\/not\/exist\.yaml: /);
});

Deno.test("validate: the other kind's schema flag exits 2 naming the right flag", async () => {
  const r = await convctl("validate", "-c", FIELD_RENAME.config, "-x", FIELD_RENAME.crd);
  assert.equal(r.code, 2);
  assert.equal(
    r.stderr,
    "error: config examples/field-rename/config.yaml is a CRDConversionConfig: its schema comes " +
      "from --crd (a CRD file), not -x/--xrd\n",
  );
});

Deno.test("validate: an unknown field in the config exits 2 naming its line, column and path, and the closest known field", async () => {
  const dir = await tempFiles({
    "config.yaml": widgetConfig([
      { strategy: "FieldRename", fieldRename: { hubPth: "spec.storageGB", spokePath: "x" } },
    ]),
  });
  const r = await convctl("validate", "-c", `${dir}/config.yaml`);
  assertToolError(r, /^error: invalid config .*config\.yaml:$/m);
  assert.match(
    r.stderr,
    /^ {2}\S*config\.yaml:\d+:\d+: spec\.spokes\[0\]\.rules\[0\]\.fieldRename\.hubPth: unrecognized key \(did you mean "hubPath"\?\)$/m,
  );
  assert.match(
    r.stderr,
    /^ {2}\S*config\.yaml:\d+:\d+: spec\.spokes\[0\]\.rules\[0\]\.fieldRename\.hubPath: required$/m,
  );
});

Deno.test("validate: duplicate keys, missing and unknown kinds exit 2", async () => {
  const dir = await tempFiles({
    "dup.yaml": "apiVersion: terasky.com/v1alpha1\nkind: CRDConversionConfig\nkind: X\n",
    "nokind.yaml": "apiVersion: terasky.com/v1alpha1\nspec: {}\n",
    "other.yaml": "apiVersion: v1\nkind: ConfigMap\n",
  });
  const dup = await convctl("validate", "-c", `${dir}/dup.yaml`);
  assertToolError(dup, /dup\.yaml:3:1: Map keys must be unique/);
  const noKind = await convctl("validate", "-c", `${dir}/nokind.yaml`);
  assertToolError(noKind, /: missing kind\n$/);
  const other = await convctl("validate", "-c", `${dir}/other.yaml`);
  assertToolError(other, /unrecognized kind "ConfigMap"/);
});

Deno.test("validate: --xrd and --crd together is a usage error", async () => {
  const r = await convctl(
    "validate",
    ...FIELD_RENAME.flags,
    "--xrd",
    FIELD_RENAME.crd,
  );
  assertToolError(r, "flags --xrd and --crd cannot be used together");
});

Deno.test("validate: a missing -c is a usage error", async () => {
  const r = await convctl("validate", "--crd", FIELD_RENAME.crd);
  assertToolError(r, "required flag(s) --config not set");
});
