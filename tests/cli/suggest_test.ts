import assert from "node:assert/strict";
import { assertToolError, convctl, crdFlags, FIELD_RENAME } from "./_convctl.ts";
import {
  conversionConfig,
  schemaDocument,
  specSchema,
  tempFiles,
  widgetConfig,
} from "./_fixtures.ts";

Deno.test("suggest: finds the rename an empty rule list is missing", async () => {
  const dir = await tempFiles({ "config.yaml": widgetConfig([]) });
  const args = ["suggest", ...crdFlags(`${dir}/config.yaml`, FIELD_RENAME.crd)];
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
  const args = ["suggest", ...FIELD_RENAME.flags];
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
  const crd = schemaDocument("CRD", "Thing", "things", [
    {
      name: "v1",
      served: true,
      storage: false,
      schema: specSchema({ port: { type: "string" }, colour: { type: "string" } }),
    },
    {
      name: "v2",
      served: true,
      storage: true,
      schema: specSchema({ port: { type: "integer" }, weight: { type: "string" } }),
    },
  ]);
  const dir = await tempFiles({
    "crd.yaml": crd,
    "config.yaml": conversionConfig("CRD", "things", "things.demo.example.com", {
      hubVersion: "v2",
      spokes: [{ version: "v1" }],
    }),
  });
  const r = await convctl(
    "suggest",
    ...crdFlags(`${dir}/config.yaml`, `${dir}/crd.yaml`),
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
    ...FIELD_RENAME.flags,
    "-o",
    "table",
  );
  assertToolError(r, 'unknown output format "table" (use yaml|json)');
});
