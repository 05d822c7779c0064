import assert from "node:assert/strict";
import { assertToolError, convctl, FIELD_RENAME } from "./_convctl.ts";
import { tempFiles } from "./_fixtures.ts";

/** Two exported widgets (one a List) and the CRD with its status, as kubectl prints them. */
async function exported(storedVersions: string[], v1Writer = true): Promise<string> {
  const managedFields = [
    ...(v1Writer
      ? [{ manager: "legacy-ci", apiVersion: "demo.example.com/v1", time: "2026-11-02T10:00:00Z" }]
      : []),
    { manager: "argocd", apiVersion: "demo.example.com/v2", time: "2026-11-20T10:00:00Z" },
  ];
  return await tempFiles({
    "widgets.yaml": {
      apiVersion: "v1",
      kind: "List",
      items: [
        {
          apiVersion: "demo.example.com/v2",
          kind: "Widget",
          metadata: { name: "a", namespace: "default", managedFields },
          spec: { storageGB: 1 },
        },
        {
          apiVersion: "demo.example.com/v2",
          kind: "Widget",
          metadata: { name: "b", namespace: "default" },
          spec: { storageGB: 2 },
        },
      ],
    },
    "crd.yaml": {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.demo.example.com" },
      status: { storedVersions },
    },
    "other.yaml": { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } },
  });
}

Deno.test("versions: the table from the schema alone marks what needs objects", async () => {
  const r = await convctl("versions", "--crd", FIELD_RENAME.crd);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      "CRD widgets.demo.example.com",
      "VERSION  SERVED  HUB  DEPRECATED  SPOKE RULES  LIVE OBJECTS  STORED  LAST WRITTEN AT",
      "v1       yes     no   no          ?            ?             ?       ?",
      "v2       yes     yes  no          ?            ?             ?       ?",
      "LIVE OBJECTS, LAST WRITTEN AT ?: no objects read (-s DIR: objects exported from the cluster)",
      "STORED ?: status.storedVersions not read (the target's CRD with its status, in -s DIR)",
      "",
    ].join("\n"),
  );
});

Deno.test("versions: exported objects fill the counts, storedVersions and last writers", async () => {
  const dir = await exported(["v1", "v2"]);
  const r = await convctl("versions", ...FIELD_RENAME.flags, "-s", dir, "-o", "json");
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(report.versions[0], {
    version: "v1",
    served: true,
    hub: false,
    deprecated: false,
    spokeRules: true,
    liveObjects: 2,
    stored: true,
    writers: [{ manager: "legacy-ci", time: "2026-11-02T10:00:00Z", objects: 1 }],
  });
  assert.equal(report.versions[1].spokeRules, "hub");
  const table = await convctl("versions", "--crd", FIELD_RENAME.crd, "-s", dir);
  assert.match(table.stdout, /^v2 +yes +yes +no +\? +2 +yes +argocd @ 2026-11-20T10:00:00Z$/m);
});

Deno.test("versions --check-unserve: the reasons, or safe", async () => {
  const dir = await exported(["v1", "v2"]);
  const blocked = await convctl(
    "versions",
    "--crd",
    FIELD_RENAME.crd,
    "-s",
    dir,
    "--check-unserve",
    "v1",
  );
  assert.equal(blocked.code, 1);
  assert.match(
    blocked.stdout,
    /^NOT safe to stop serving v1:\n {2}- v1 is in status\.storedVersions\n {2}- v1 is still written by legacy-ci \(last at 2026-11-02T10:00:00Z\)\n$/m,
  );
  const clean = await exported(["v2"], false);
  const safe = await convctl(
    "versions",
    "--crd",
    FIELD_RENAME.crd,
    "-s",
    clean,
    "--check-unserve",
    "v1",
  );
  assert.equal(safe.code, 0, safe.stdout);
  assert.match(safe.stdout, /^safe to stop serving v1$/m);
  const offline = await convctl("versions", "--crd", FIELD_RENAME.crd, "--check-unserve", "v1");
  assert.equal(offline.code, 1);
  assert.match(offline.stdout, /- no objects were read: give -s DIR/);
  const hub = await convctl(
    "versions",
    "--crd",
    FIELD_RENAME.crd,
    "-s",
    clean,
    "--check-unserve",
    "v2",
  );
  assert.equal(hub.code, 1);
  assert.match(hub.stdout, /- v2 is the hub \(storage\) version/);
});

Deno.test("versions: bad input is a one-line error and exit 2", async () => {
  assertToolError(
    await convctl("versions", "--crd", FIELD_RENAME.crd, "--check-unserve", "v9"),
    "--check-unserve v9: not a version of CRD widgets.demo.example.com (versions: v1, v2)",
  );
  assertToolError(
    await convctl("versions", "--crd", "missing.yaml"),
    /^error: cannot read CRD file missing\.yaml: /,
  );
  assertToolError(
    await convctl("versions", "--crd", FIELD_RENAME.crd, "-s", "missing-dir"),
    /^error: cannot read objects directory missing-dir: /,
  );
  const dir = await tempFiles({ "bad.yaml": "kind: [\n" });
  assertToolError(
    await convctl("versions", "--crd", `${dir}/bad.yaml`),
    /^error: .*bad\.yaml:2:1: /,
  );
});
