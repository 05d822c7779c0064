/**
 * The chart README (charts/declarative-conversion-operator/README.md): its values table is what
 * hack/chart_readme.ts generates from the current values.yaml and values.schema.json, and what
 * `helm show readme` prints.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { CHART_DIR, renderReadme, valueRows } from "../../hack/chart_readme.ts";
import { CHART, helm } from "./_helm.ts";

const README = new URL("README.md", CHART_DIR);

Deno.test("chart README: the values table is current (hack/chart_readme.ts)", async () => {
  const current = await Deno.readTextFile(README);
  assert.equal(
    await renderReadme(current),
    current,
    "stale values table: run `bash hack/deno.sh run -A hack/chart_readme.ts`",
  );
});

Deno.test("chart README: every top-level value and every documented key has a row", async () => {
  const text = await Deno.readTextFile(new URL("values.yaml", CHART_DIR));
  const schema = JSON.parse(await Deno.readTextFile(new URL("values.schema.json", CHART_DIR)));
  const rows = valueRows(text, schema);
  const keys = rows.map((r) => r.key);
  for (const top of Object.keys(parse(text))) {
    assert.ok(keys.some((k) => k === top || k.startsWith(`${top}.`)), `no row for ${top}`);
  }
  const documented = text.split("\n").filter((l) => /^\s*# -- /.test(l)).length;
  assert.equal(rows.filter((r) => r.description !== "").length, documented);
  const tag = rows.find((r) => r.key === "image.tag")!;
  assert.deepEqual(tag, {
    key: "image.tag",
    type: "string",
    default: '""',
    description:
      'Default tag of both images; "" means the chart\'s appVersion. A per-image `tag` wins.',
  });
  // The type comes from the schema where it says more than the default does.
  assert.equal(
    rows.find((r) => r.key === "certManager.enabled")!.type,
    'boolean \\| "auto" \\| "true" \\| "false"',
  );
  // A documented map is one row; its children are not listed apart.
  assert.ok(keys.includes("manager.livenessProbe"));
  assert.ok(!keys.some((k) => k.startsWith("manager.livenessProbe.")));
});

Deno.test("chart README: helm show readme prints it, with the OCI install", async () => {
  const r = await helm("show", "readme", CHART);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), (await Deno.readTextFile(README)).trim());
  assert.match(
    r.stdout,
    /helm install dco oci:\/\/ghcr\.io\/terasky-oss\/charts\/declarative-conversion-operator/,
  );
});
