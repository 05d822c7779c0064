import assert from "node:assert/strict";
import { assertToolError, convctl, crdFlags, FIELD_RENAME } from "./_convctl.ts";
import {
  conversionConfig,
  RENAME_RULE,
  schemaDocument,
  specSchema,
  tempFiles,
  widgetConfig,
} from "./_fixtures.ts";

const ENUM = {
  config: "examples/enum-remap/config.yaml",
  crd: "examples/enum-remap/crd.yaml",
};

/** A Crossplane v2 XRD with the same two versions as the field-rename CRD. */
const XRD = schemaDocument("XRD", "XWidget", "xwidgets", [
  {
    name: "v1",
    served: true,
    referenceable: false,
    schema: specSchema({ size: { type: "integer" } }),
  },
  {
    name: "v2",
    served: true,
    referenceable: true,
    schema: specSchema({ sizeGB: { type: "integer" } }),
  },
]);

const XRD_CONFIG = conversionConfig("XRD", "xwidgets-conversion", "xwidgets.demo.example.com", {
  hubVersion: "v2",
  spokes: [{
    version: "v1",
    rules: [{
      strategy: "FieldRename",
      fieldRename: { hubPath: "spec.sizeGB", spokePath: "spec.size" },
    }],
  }],
});

Deno.test("analyze: json report of a lossy-but-acknowledged spoke", async () => {
  const r = await convctl("analyze", ...crdFlags(ENUM.config, ENUM.crd), "-o", "json");
  assert.equal(r.code, 0);
  assert.equal(r.stderr, "");
  assert.deepEqual(JSON.parse(r.stdout), {
    resourceKind: "CRD",
    resource: "databases.demo.example.com",
    config: "databases-conversion",
    hubVersion: "v1",
    lossless: false,
    spokes: [{
      version: "v1alpha1",
      losslessHubToSpoke: true,
      losslessSpokeToHub: false,
      rulesEvaluated: 3,
    }],
  });
});

Deno.test("analyze: spoke errors are reported but exit 0", async () => {
  const dir = await tempFiles({ "config.yaml": widgetConfig([]) });
  const r = await convctl(
    "analyze",
    ...crdFlags(`${dir}/config.yaml`, FIELD_RENAME.crd),
    "-o",
    "json",
  );
  assert.equal(r.code, 0);
  const spoke = JSON.parse(r.stdout).spokes[0];
  assert.equal(spoke.losslessHubToSpoke, false);
  assert.equal(spoke.rulesEvaluated, 0);
  assert.deepEqual(spoke.errors.map((e: string) => e.split(":")[0]), [
    "[uncovered-field] spec.storageGB",
    "[uncovered-field] spec.storageSize",
  ]);
  assert.equal(spoke.warnings, undefined);
});

Deno.test("analyze: table output", async () => {
  const r = await convctl("analyze", ...crdFlags(ENUM.config, ENUM.crd));
  assert.equal(r.code, 0);
  const lines = r.stdout.split("\n");
  assert.equal(lines[0], "CRD Conversion Analysis");
  assert.equal(
    lines[1],
    "target: databases.demo.example.com  config: databases-conversion  hub: v1  lossless: false",
  );
  assert.match(r.stdout, /^SPOKE +HUB→SPOKE +SPOKE→HUB +RULES +ISSUES$/m);
  assert.match(r.stdout, /^v1alpha1 +lossless +LOSSY +3 +0$/m);
});

Deno.test("analyze: a hub that is not the storage version exits 2", async () => {
  const dir = await tempFiles({
    "config.yaml": widgetConfig([RENAME_RULE], { hubVersion: "v1", spokes: [{ version: "v2" }] }),
  });
  const r = await convctl("analyze", ...crdFlags(`${dir}/config.yaml`, FIELD_RENAME.crd));
  assertToolError(r, /^error: \[hub-version\] hub version "v1" is not the storage version/);
});

Deno.test("analyze: needs a schema flag", async () => {
  const r = await convctl("analyze", "-c", FIELD_RENAME.config);
  assertToolError(r, "one of the flags --xrd, --crd, --package is required");
});

Deno.test("analyze: an XRDConversionConfig takes -x and reports kind XRD", async () => {
  const dir = await tempFiles({ "xrd.yaml": XRD, "config.yaml": XRD_CONFIG });
  const r = await convctl(
    "analyze",
    "-c",
    `${dir}/config.yaml`,
    "-x",
    `${dir}/xrd.yaml`,
    "-o",
    "json",
  );
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.resourceKind, "XRD");
  assert.equal(out.resource, "xwidgets.demo.example.com");
  assert.equal(out.lossless, true);

  const wrong = await convctl("analyze", ...crdFlags(`${dir}/config.yaml`, `${dir}/xrd.yaml`));
  assertToolError(wrong, /its schema comes from -x\/--xrd \(an XRD file\), not --crd/);
});
