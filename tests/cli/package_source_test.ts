import assert from "node:assert/strict";
import { assertToolError, convctl, FIELD_RENAME } from "./_convctl.ts";
import { conversionConfig, schemaDocument, specSchema, tempFiles } from "./_fixtures.ts";
import { packageTarball } from "./_package.ts";

const xrd = (kind: string, plural: string) =>
  schemaDocument("XRD", kind, plural, [
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
const CONFIG = conversionConfig("XRD", "xwidgets-conversion", "xwidgets.demo.example.com", {
  hubVersion: "v2",
  spokes: [{
    version: "v1",
    rules: [{
      strategy: "FieldRename",
      fieldRename: { hubPath: "spec.sizeGB", spokePath: "spec.size" },
    }],
  }],
});

async function files() {
  const dir = await tempFiles({ "config.yaml": CONFIG });
  const one = [xrd("XWidget", "xwidgets")];
  const two = [...one, xrd("XGadget", "xgadgets")];
  await Deno.writeFile(`${dir}/oci.xpkg`, await packageTarball(one, "oci"));
  await Deno.writeFile(`${dir}/saved.xpkg`, await packageTarball(one, "docker-save"));
  await Deno.writeFile(`${dir}/two.xpkg`, await packageTarball(two, "oci"));
  return dir;
}

Deno.test("--package: the XRD comes from a package tarball (OCI layout or docker save)", async () => {
  const dir = await files();
  for (const pkg of ["oci.xpkg", "saved.xpkg"]) {
    const r = await convctl("validate", "-c", `${dir}/config.yaml`, "--package", `${dir}/${pkg}`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^schema validated: true$/m, pkg);
  }
  const analyzed = await convctl(
    "analyze",
    "-c",
    `${dir}/config.yaml`,
    "--package",
    `${dir}/two.xpkg`,
    "--target",
    "xwidgets.demo.example.com",
    "-o",
    "json",
  );
  assert.equal(analyzed.code, 0, analyzed.stderr);
  assert.equal(JSON.parse(analyzed.stdout).resource, "xwidgets.demo.example.com");
});

Deno.test("--package: refusals are one-line errors and exit 2", async () => {
  const dir = await files();
  const config = `${dir}/config.yaml`;
  assertToolError(
    await convctl("validate", "-c", config, "--package", `${dir}/two.xpkg`),
    `package ${dir}/two.xpkg holds 2 XRDs: choose one with --target (xwidgets.demo.example.com, xgadgets.demo.example.com)`,
  );
  assertToolError(
    await convctl("validate", "-c", config, "--package", `${dir}/two.xpkg`, "--target", "nope"),
    `package ${dir}/two.xpkg has no XRD nope (XRDs: xwidgets.demo.example.com, xgadgets.demo.example.com)`,
  );
  assertToolError(
    await convctl("validate", "-c", config, "--package", "xpkg.upbound.io/acme/platform:v1.2.0"),
    /^error: --package xpkg\.upbound\.io\/acme\/platform:v1\.2\.0 looks like a registry reference; pull it to a file first/,
  );
  assertToolError(
    await convctl("validate", "-c", config, "--package", "configurationrevision/platform-abc"),
    /^error: --package configurationrevision\/platform-abc names a package in a cluster; /,
  );
  assertToolError(
    await convctl("validate", "-c", config, "--package", `${dir}/missing.xpkg`),
    /^error: cannot read package .*missing\.xpkg: /,
  );
  assertToolError(
    await convctl("validate", "-c", config, "--package", config),
    /^error: package .*config\.yaml is not a tar archive: /,
  );
  assertToolError(
    await convctl("validate", "-c", config, "-x", `${dir}/x.yaml`, "--package", `${dir}/oci.xpkg`),
    "flags --xrd and --package cannot be used together",
  );
  assertToolError(
    await convctl("validate", ...FIELD_RENAME.flags.slice(0, 2), "--package", `${dir}/oci.xpkg`),
    `config ${FIELD_RENAME.config} is a CRDConversionConfig: its schema comes from --crd, not --package`,
  );
  assertToolError(
    await convctl("validate", "-c", config, "--target", "x"),
    "--target requires --package",
  );
});
