/**
 * `convctl migrate-storage` before it reaches a cluster: flag and usage errors (exit 2), the
 * one-line error naming an unreachable cluster, and the progress line's text. The writes against a
 * real apiserver are tests/e2e/migrate_storage_test.ts.
 */
import assert from "node:assert/strict";
import { concurrencyOf, migrationTable, progressText } from "../../src/cli/migrate_storage.ts";
import { b64, createCA } from "../support/certs.ts";
import { assertToolError, convctl } from "./_convctl.ts";

Deno.test("migrate-storage: exactly one of --xrd and --crd", async () => {
  assertToolError(await convctl("migrate-storage"), /--xrd.*--crd/);
  assertToolError(
    await convctl("migrate-storage", "--crd", "a.example.com", "-x", "b.example.com"),
    /--xrd.*--crd/,
  );
});

Deno.test("migrate-storage: -o and --concurrency are checked before any cluster is read", async () => {
  const out = await convctl("migrate-storage", "--crd", "a.example.com", "-o", "yaml");
  assertToolError(out, 'unknown output format "yaml" (use table|json)');
  const conc = await convctl("migrate-storage", "--crd", "a.example.com", "--concurrency", "x");
  assertToolError(conc, 'invalid value "x" for --concurrency: expected an integer');
  assert.equal(conc.stdout, "");
});

Deno.test("migrate-storage: --concurrency of zero or less means one", () => {
  assert.equal(concurrencyOf(undefined), 1);
  assert.equal(concurrencyOf("0"), 1);
  assert.equal(concurrencyOf("-3"), 1);
  assert.equal(concurrencyOf("8"), 8);
});

/** A loopback port nothing listens on. */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr;
  l.close();
  return port;
}

Deno.test("migrate-storage: an unreachable cluster is one error line naming it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ca = await createCA(dir);
    const kubeconfig = `${dir}/kubeconfig`;
    await Deno.writeTextFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: "gone",
          cluster: {
            server: `https://127.0.0.1:${closedPort()}`,
            "certificate-authority-data": b64(ca.cert),
          },
        }],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [{ name: "gone", context: { cluster: "gone", user: "u" } }],
        "current-context": "gone",
      }),
    );
    const r = await convctl(
      "migrate-storage",
      "--crd",
      "a.example.com",
      "--kubeconfig",
      kubeconfig,
      "--context",
      "gone",
    );
    assertToolError(
      r,
      /^error: cluster gone: reading customresourcedefinitions a\.example\.com: unreachable: .*\n$/,
    );
    assert.equal(r.stdout, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("migrate-storage: the progress line has the count, the rate and the time left", () => {
  assert.equal(progressText(0, 10, 0), "migrated 0/10 objects (0.0/s)");
  assert.equal(progressText(50, 200, 2000), "migrated 50/200 objects (25.0/s, ETA 6s)");
  assert.equal(progressText(100, 10_000, 4000), "migrated 100/10000 objects (25.0/s, ETA 6m36s)");
});

Deno.test("migrate-storage: --via-kube-migrator with --dry-run is refused before any cluster is read", async () => {
  const r = await convctl(
    "migrate-storage",
    "--crd",
    "a.example.com",
    "--kubeconfig",
    "/nonexistent/kubeconfig",
    "--via-kube-migrator",
    "--dry-run",
  );
  assertToolError(
    r,
    "--dry-run cannot be combined with --via-kube-migrator: a StorageVersionMigration has no dry " +
      "run (run --dry-run without --via-kube-migrator to check the writes)",
  );
  assert.equal(r.stdout, "");
});

Deno.test("migrate-storage: the table of a --via-kube-migrator run marks the counts unknown", () => {
  const text = migrationTable({
    resourceKind: "CustomResourceDefinition",
    resource: "things.example.com",
    crd: "things.example.com",
    group: "example.com",
    kind: "Thing",
    plural: "things",
    storageVersion: "v2",
    storedVersions: ["v1", "v2"],
    namespaced: true,
    dryRun: false,
    fieldManager: "convctl",
    objects: [],
    succeeded: null,
    failed: null,
    migration: {
      apiVersion: "storagemigration.k8s.io/v1",
      name: "convctl-things.example.com-abcde",
      condition: "Failed",
      message: "migration failed",
    },
    pruned: false,
    warnings: ["--prune-stored-versions skipped: the StorageVersionMigration failed"],
  });
  assert.equal(
    text,
    [
      "MODE:     applied",
      "TARGET:   CustomResourceDefinition things.example.com",
      "CRD:      things.example.com",
      "GVK:      example.com/v2, Kind=Thing (things)",
      "STORED:   v1, v2",
      "OBJECTS:  unknown (StorageVersionMigration convctl-things.example.com-abcde: Failed: " +
      "migration failed)",
      "PRUNE:    not pruned",
      "WARNING: --prune-stored-versions skipped: the StorageVersionMigration failed",
      "",
    ].join("\n"),
  );
});
