import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { buildConversionPatch, webhookServiceName } from "../../src/manager/conversion_patch.ts";
import { textToBase64 } from "../../src/lib/base64.ts";
import { assertToolError, convctl, FIELD_RENAME } from "./_convctl.ts";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUZ\n-----END CERTIFICATE-----\n";
const XRD_DIR = "examples/xrd-hub-promotion";

function serviceFlags(server: string) {
  return ["--service-name", webhookServiceName(server), "--service-namespace", "dco-system"];
}

Deno.test("patch-preview prints exactly what the manager applies (CRD)", async () => {
  const r = await convctl(
    "patch-preview",
    ...FIELD_RENAME.flags,
    ...serviceFlags("dco"),
    "--ca-bundle",
    PEM,
    "--plan-hash",
    "h1",
  );
  assert.equal(r.code, 0, r.stderr);
  const manager = buildConversionPatch({
    targetKind: "CRD",
    targetName: "widgets.demo.example.com",
    configName: "widgets-conversion",
    planHash: "h1",
    serverName: "dco",
    serverNamespace: "dco-system",
    caBundle: textToBase64(PEM),
  });
  assert.deepEqual(parseYaml(r.stdout), manager);
});

Deno.test("patch-preview prints exactly what the manager applies (XRD, port, base64 bundle)", async () => {
  const base64 = textToBase64(PEM);
  const r = await convctl(
    "patch-preview",
    "-c",
    `${XRD_DIR}/config.yaml`,
    "-x",
    `${XRD_DIR}/xrd.yaml`,
    ...serviceFlags("pg"),
    "--ca-bundle",
    `${base64.slice(0, 10)}\n${base64.slice(10)}`,
    "--port",
    "8443",
  );
  assert.equal(r.code, 0, r.stderr);
  const xrd = parseYaml(await Deno.readTextFile(`${XRD_DIR}/xrd.yaml`));
  const manager = buildConversionPatch({
    targetKind: "XRD",
    targetName: "xpostgres.demo.example.com",
    liveTarget: xrd,
    configName: "xpostgres-conversion",
    planHash: "",
    serverName: "pg",
    serverNamespace: "dco-system",
    servicePort: 8443,
    caBundle: base64,
  });
  assert.deepEqual(parseYaml(r.stdout), manager);
  assert.equal(manager.apiVersion, "apiextensions.crossplane.io/v2");
});

Deno.test("patch-preview: --path and port 0 (443)", async () => {
  const r = await convctl(
    "patch-preview",
    "-c",
    FIELD_RENAME.config,
    ...serviceFlags("dco"),
    "--ca-bundle",
    PEM,
    "--path",
    "/x",
    "--port",
    "0",
  );
  assert.equal(r.code, 0, r.stderr);
  const service = parseYaml(r.stdout).spec.conversion.webhook.clientConfig.service;
  assert.deepEqual(service, {
    name: "dco-webhook-server",
    namespace: "dco-system",
    path: "/x",
    port: 443,
  });
});

Deno.test("patch-preview: bad input is a one-line error, exit 2", async () => {
  const flags = [...serviceFlags("dco"), "--ca-bundle", PEM];
  assertToolError(
    await convctl("patch-preview", "-c", "no/such.yaml", ...flags),
    /^error: cannot read config no\/such\.yaml: .*\n$/,
  );
  assertToolError(
    await convctl(
      "patch-preview",
      "-c",
      FIELD_RENAME.config,
      ...serviceFlags("d"),
      "--ca-bundle",
      "not base64!",
    ),
    "--ca-bundle is neither PEM nor base64 (a CRD's caBundle is base64 bytes)",
  );
  assertToolError(
    await convctl("patch-preview", "-c", FIELD_RENAME.config, "--service-name", "s"),
    "required flag(s) --service-namespace, --ca-bundle not set",
  );
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/bad.yaml`, "kind: [unclosed\n");
    assertToolError(
      await convctl("patch-preview", "-c", `${dir}/bad.yaml`, ...flags),
      /^error: .*bad\.yaml:\d+:\d+: [^\n]*\n$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  // With a schema file, a config the analysis rejects is not previewed.
  const wrongHub = await convctl(
    "patch-preview",
    "-c",
    `${XRD_DIR}/config.yaml`,
    "-x",
    `${XRD_DIR}/before-promotion/xrd.yaml`,
    ...flags,
  );
  assert.equal(wrongHub.code, 2);
  assert.match(wrongHub.stderr, /^error: \[hub-version\] hub version "v1" not found/);
});
