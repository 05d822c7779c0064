/**
 * `convctl migrate-storage` before it reaches a cluster: flag and usage errors (exit 2), the
 * one-line error naming an unreachable cluster, and the progress line's text. The writes against a
 * real apiserver are tests/e2e/migrate_storage_test.ts.
 */
import assert from "node:assert/strict";
import { concurrencyOf, migrationTable, progressText } from "../../src/cli/migrate_storage.ts";
import { runViaMigrator, timeoutOf } from "../../src/cli/migrate_migrator.ts";
import type { KubeClient } from "../../src/kube/mod.ts";
import { b64, createCA } from "../support/certs.ts";
import { freePort } from "../support/ports.ts";
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
            server: `https://127.0.0.1:${freePort()}`,
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

Deno.test("migrate-storage --timeout: a duration, 0 for none; only with --via-kube-migrator", async () => {
  assert.equal(timeoutOf(undefined), undefined);
  assert.equal(timeoutOf("0"), undefined);
  assert.equal(timeoutOf("90s"), 90_000);
  assert.equal(timeoutOf("1h30m"), 5_400_000);
  assert.equal(timeoutOf("250ms"), 250);
  assert.throws(
    () => timeoutOf("10"),
    /invalid value "10" for --timeout: expected a duration such as 90s or 10m/,
  );
  assert.throws(() => timeoutOf("-5s"), /for --timeout/);
  assertToolError(
    await convctl("migrate-storage", "--crd", "a.example.com", "--timeout", "5m"),
    "--timeout requires --via-kube-migrator",
  );
  assertToolError(
    await convctl(
      "migrate-storage",
      "--crd",
      "a.example.com",
      "--via-kube-migrator",
      "--timeout",
      "soon",
    ),
    'invalid value "soon" for --timeout: expected a duration such as 90s or 10m',
  );
});

/** A client holding one StorageVersionMigration whose conditions `conditions()` gives. */
function migratorClient(conditions: () => unknown[]) {
  const created: unknown[] = [];
  let reads = 0;
  const client = {
    create: (_ref: unknown, body: unknown) => {
      created.push(body);
      return Promise.resolve({ ...(body as object), metadata: { name: "convctl-things-x1" } });
    },
    get: () => {
      reads++;
      return Promise.resolve({
        metadata: { name: "convctl-things-x1" },
        status: { conditions: conditions() },
      });
    },
  } as unknown as Pick<KubeClient, "create" | "get">;
  return { client, created, reads: () => reads };
}

const THINGS = { group: "migrate.dco.test", plural: "things" };
const on = (client: Pick<KubeClient, "create" | "get">) => ({
  client,
  cluster: "kind-a",
  apiVersion: "storagemigration.k8s.io/v1",
});

Deno.test("runViaMigrator: Failed ends the wait with its message; Succeeded too", async () => {
  let polls = 0;
  const failing = migratorClient(() =>
    polls < 2 ? [{ type: "Running", status: "True" }] : [
      { type: "Running", status: "False" },
      { type: "Failed", status: "True", message: "migration encountered unhandled error" },
    ]
  );
  const result = await runViaMigrator(on(failing.client), THINGS, () => polls++, { pollMs: 1 });
  assert.deepEqual(result, {
    apiVersion: "storagemigration.k8s.io/v1",
    name: "convctl-things-x1",
    condition: "Failed",
    message: "migration encountered unhandled error",
  });
  assert.equal(polls, 2);
  assert.deepEqual((failing.created[0] as { spec: unknown }).spec, {
    resource: { group: "migrate.dco.test", resource: "things" },
  });
  const done = migratorClient(() => [{ type: "Succeeded", status: "True" }]);
  assert.equal((await runViaMigrator(on(done.client), THINGS, () => {})).condition, "Succeeded");
});

Deno.test("runViaMigrator: past --timeout it stops waiting, naming the migration", async () => {
  const never = migratorClient(() => [{ type: "Running", status: "True" }]);
  await assert.rejects(
    runViaMigrator(on(never.client), THINGS, () => {}, { timeoutMs: 30, pollMs: 5 }),
    (e: Error) => {
      assert.equal(
        e.message,
        "cluster kind-a: StorageVersionMigration convctl-things-x1 did not end within 0.03s " +
          "(--timeout); it goes on in the cluster: kubectl get " +
          "storageversionmigrations.storagemigration.k8s.io convctl-things-x1",
      );
      return true;
    },
  );
  assert.ok(never.reads() >= 2, `polled ${never.reads()} time(s)`);
});

Deno.test("migrate-storage: an XRD offering claims has a line per CRD and a CRD column", () => {
  const crd = (name: string, role: "composite" | "claim", failed: number) => ({
    crd: name,
    role,
    kind: role === "claim" ? "Net" : "XNet",
    storageVersion: "v2",
    storedVersions: ["v1", "v2"],
    namespaced: role === "claim",
    succeeded: 1,
    failed,
    pruned: false,
  });
  const text = migrationTable({
    resourceKind: "CompositeResourceDefinition",
    resource: "xnets.example.org",
    crd: "xnets.example.org",
    group: "example.org",
    kind: "XNet",
    plural: "xnets",
    storageVersion: "v2",
    storedVersions: ["v1", "v2"],
    namespaced: false,
    dryRun: false,
    fieldManager: "convctl",
    objects: [
      { crd: "xnets.example.org", name: "a" },
      { crd: "nets.example.org", namespace: "team", name: "b" },
      { crd: "nets.example.org", namespace: "team", name: "c", error: "Forbidden: no" },
    ],
    succeeded: 2,
    failed: 1,
    pruned: false,
    crds: [crd("xnets.example.org", "composite", 0), crd("nets.example.org", "claim", 1)],
  });
  assert.equal(
    text,
    [
      "MODE:     applied",
      "TARGET:   CompositeResourceDefinition xnets.example.org",
      "CRD:      xnets.example.org",
      "GVK:      example.org/v2, Kind=XNet (xnets)",
      "STORED:   v1, v2",
      "OBJECTS:  3 (2 ok, 1 failed)",
      "PRUNE:    not pruned",
      "  composite xnets.example.org at v2 (stored v1, v2): 1 (1 ok, 0 failed)",
      "  claim nets.example.org at v2 (stored v1, v2): 2 (1 ok, 1 failed)",
      "",
      "CRD                NAMESPACE  NAME  RESULT",
      "xnets.example.org             a     ok",
      "nets.example.org   team       b     ok",
      "nets.example.org   team       c     Forbidden: no",
      "",
    ].join("\n"),
  );
});
