import assert from "node:assert/strict";
import { convctl, FIELD_RENAME, tempFiles, widgetConfig } from "./_convctl.ts";

Deno.test("suggest: finds the rename an empty rule list is missing", async () => {
  const dir = await tempFiles({ "config.yaml": widgetConfig([]) });
  const args = ["suggest", "-c", `${dir}/config.yaml`, "--crd", FIELD_RENAME.crd];
  const json = await convctl(...args, "-o", "json");
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    spokes: [{
      version: "v1",
      rules: [{
        strategy: "FieldRename",
        fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.storageSize" },
      }],
    }],
  });
  const yaml = await convctl(...args);
  assert.equal(yaml.code, 0);
  assert.equal(
    yaml.stdout,
    [
      "# suggested rules — review every one before merging into spec.spokes",
      "spokes:",
      "  - version: v1",
      "    rules:",
      "      - strategy: FieldRename",
      "        fieldRename:",
      "          hubPath: spec.storageGB",
      "          spokePath: spec.storageSize",
      "",
    ].join("\n"),
  );
});

Deno.test("suggest: nothing to suggest for a complete config", async () => {
  const args = ["suggest", "-c", FIELD_RENAME.config, "--crd", FIELD_RENAME.crd];
  const json = await convctl(...args, "-o", "json");
  assert.equal(json.code, 0);
  assert.deepEqual(JSON.parse(json.stdout), { spokes: null });
  const yaml = await convctl(...args);
  assert.equal(
    yaml.stdout,
    "# no suggestions: every uncovered field is either already claimed or too dissimilar to guess at\n",
  );
});

Deno.test("suggest: TypeCoerce for a same-path scalar of another type; dissimilar names are left", async () => {
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "things.demo.example.com" },
    spec: {
      group: "demo.example.com",
      names: { kind: "Thing", plural: "things" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: false,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  properties: { port: { type: "string" }, colour: { type: "string" } },
                },
              },
            },
          },
        },
        {
          name: "v2",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  properties: { port: { type: "integer" }, weight: { type: "string" } },
                },
              },
            },
          },
        },
      ],
    },
  };
  const dir = await tempFiles({
    "crd.yaml": crd,
    "config.yaml": {
      apiVersion: "terasky.com/v1alpha1",
      kind: "CRDConversionConfig",
      metadata: { name: "things" },
      spec: {
        targetCRD: { name: "things.demo.example.com" },
        hubVersion: "v2",
        spokes: [{ version: "v1" }],
      },
    },
  });
  const r = await convctl(
    "suggest",
    "-c",
    `${dir}/config.yaml`,
    "--crd",
    `${dir}/crd.yaml`,
    "-o",
    "json",
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    spokes: [{
      version: "v1",
      rules: [{ strategy: "TypeCoerce", typeCoerce: { path: "spec.port" } }],
    }],
  });
});

Deno.test("suggest: -o is validated", async () => {
  const r = await convctl(
    "suggest",
    "-c",
    FIELD_RENAME.config,
    "--crd",
    FIELD_RENAME.crd,
    "-o",
    "table",
  );
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'error: invalid value "table" for --output: must be one of yaml, json\n');
});
