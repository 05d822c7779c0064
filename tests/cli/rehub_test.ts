import assert from "node:assert/strict";
import { parse } from "yaml";
import { assertToolError, convctl, FIELD_RENAME } from "./_convctl.ts";

const PROMOTION = {
  config: "examples/xrd-hub-promotion/config.yaml",
  xrd: "examples/xrd-hub-promotion/xrd.yaml",
};

Deno.test("rehub: drafts the config with the spoke as hub (yaml, json)", async () => {
  const r = await convctl("rehub", ...FIELD_RENAME.flags, "--to", "v1");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const draft = parse(r.stdout);
  assert.equal(draft.kind, "CRDConversionConfig");
  assert.equal(draft.status, undefined);
  assert.equal(draft.spec.hubVersion, "v1");
  assert.deepEqual(draft.spec.spokes, [{
    version: "v2",
    rules: [{
      strategy: "FieldRename",
      fieldRename: { hubPath: "spec.storageSize", spokePath: "spec.storageGB" },
    }],
  }]);
  const json = await convctl("rehub", ...FIELD_RENAME.flags, "--to", "v1", "-o", "json");
  assert.equal(json.code, 0);
  assert.deepEqual(JSON.parse(json.stdout), draft);
});

Deno.test("rehub: a draft that does not analyse clean is an error unless --allow-invalid", async () => {
  const args = ["rehub", "-c", PROMOTION.config, "-x", PROMOTION.xrd, "--to", "v1alpha1"];
  const refused = await convctl(...args);
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /^error: the draft with hub v1alpha1 does not analyse clean \(--allow-invalid prints it anyway\):\n {2}\[spoke v1beta1\] /,
  );
  const allowed = await convctl(...args, "--allow-invalid");
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.match(allowed.stderr, /^warning: \[spoke v1beta1\] /);
  const draft = parse(allowed.stdout);
  assert.equal(draft.spec.hubVersion, "v1alpha1");
  assert.deepEqual(draft.spec.spokes.map((s: { version: string }) => s.version), ["v1", "v1beta1"]);
});

Deno.test("rehub: bad input is a one-line error and exit 2", async () => {
  assertToolError(
    await convctl("rehub", ...FIELD_RENAME.flags, "--to", "v2"),
    "cannot rehub to v2: v2 is already the hub",
  );
  assertToolError(
    await convctl("rehub", ...FIELD_RENAME.flags, "--to", "v9"),
    "cannot rehub to v9: v9 is not a spoke of the config (spokes: v1)",
  );
  assertToolError(await convctl("rehub", ...FIELD_RENAME.flags), "required flag(s) --to not set");
  assertToolError(
    await convctl("rehub", "-c", "nope.yaml", "--crd", FIELD_RENAME.crd, "--to", "v1"),
    /^error: cannot read config nope\.yaml: /,
  );
  assertToolError(
    await convctl("rehub", ...FIELD_RENAME.flags, "--to", "v1", "-o", "table"),
    'unknown output format "table" (use yaml|json)',
  );
});
