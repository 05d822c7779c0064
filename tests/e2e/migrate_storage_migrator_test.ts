/**
 * `convctl migrate-storage --via-kube-migrator` against a real kube-apiserver, etcd and
 * kube-controller-manager running its storage-version-migrator controller (which needs the
 * garbage collector's view of the cluster), with etcd read directly as the proof: {@link COUNT}
 * objects stored at v1, v2 made the storage version, then the command creates a
 * StorageVersionMigration, waits for Succeeded, and prunes `status.storedVersions` to [v2] —
 * every etcd key now holds v2. Then an admission policy refuses every update of the objects: the
 * controller marks the migration Failed, and the command reports it, skips the prune and exits 1.
 * Also: `--dry-run` and `-n` are refused with it (exit 2), and on an apiserver with the API
 * switched off the flag is a one-line error (exit 2).
 */
import assert from "node:assert/strict";
import type { MigrationReport } from "../../src/cli/migrate_storage.ts";
import type { KubeClient, KubeObject, ResourceRef } from "../../src/kube/mod.ts";
import { CRD_RESOURCE } from "../../src/kube/resources.ts";
import { assertToolError, convctl } from "../cli/_convctl.ts";
import { e2eTest, waitFor } from "../support/control_plane.ts";
import { refuseUpdates } from "./_refuse_updates.ts";
import { countBy, CRD, GROUP, PLURAL, pool, storedVersions, thingsCRD } from "./_migrate_things.ts";
import { adminClient } from "./kube/_support.ts";

const COUNT = 300;

const put = (admin: KubeClient, ref: ResourceRef, obj: KubeObject) =>
  admin.apply(ref, obj, { fieldManager: "migrate-e2e" });

e2eTest(
  "migrate-storage --via-kube-migrator: kube-controller-manager rewrites every object, proven in etcd",
  async (cp, t) => {
    using admin = await adminClient(cp);
    await put(admin, CRD_RESOURCE, thingsCRD("v1"));
    await cp.waitForCRD(CRD);
    const ns = await cp.createNamespace("mig-svm");
    const things: ResourceRef = { group: GROUP, version: "v1", plural: PLURAL, namespace: ns };
    const names = Array.from({ length: COUNT }, (_, i) => `thing-${String(i).padStart(4, "0")}`);
    await pool(names, 16, (name) =>
      admin.create(things, {
        apiVersion: `${GROUP}/v1`,
        kind: "Thing",
        metadata: { name },
        spec: { size: 1 },
      }));
    assert.deepEqual(countBy(await storedVersions(cp)), { [`${GROUP}/v1`]: COUNT });
    await put(admin, CRD_RESOURCE, thingsCRD("v2"));
    // Until the apiserver's CRD handler has the new storage version, a rewrite would store v1.
    await waitFor("writes stored at v2", async () => {
      await admin.apply(things, {
        apiVersion: `${GROUP}/v1`,
        kind: "Thing",
        metadata: { name: "probe" },
      }, { fieldManager: "migrate-e2e" });
      return (await storedVersions(cp)).get(`/registry/${GROUP}/${PLURAL}/${ns}/probe`) ===
        `${GROUP}/v2`;
    });
    const total = COUNT + 1;
    const crdStored = async () =>
      ((await admin.get(CRD_RESOURCE, CRD)).status as { storedVersions: string[] }).storedVersions;
    assert.deepEqual(await crdStored(), ["v1", "v2"]);
    const base = ["migrate-storage", "--crd", CRD, "--kubeconfig", cp.kubeconfigPath];

    await t.step("--dry-run and -n are refused with it", async () => {
      assertToolError(
        await convctl(...base, "--via-kube-migrator", "--dry-run"),
        "--dry-run cannot be combined with --via-kube-migrator: a StorageVersionMigration has " +
          "no dry run (run --dry-run without --via-kube-migrator to check the writes)",
      );
      assertToolError(
        await convctl(...base, "--via-kube-migrator", "-n", ns),
        "--via-kube-migrator migrates every object of the resource: drop --namespace",
      );
      assert.deepEqual(countBy(await storedVersions(cp)), {
        [`${GROUP}/v1`]: COUNT,
        [`${GROUP}/v2`]: 1,
      });
    });

    await t.step("Succeeded: every etcd key at v2, storedVersions pruned to [v2]", async () => {
      const r = await convctl(
        ...base,
        "--via-kube-migrator",
        "--prune-stored-versions",
        "-o",
        "json",
      );
      assert.equal(r.code, 0, r.stderr);
      // stderr is a pipe: the plan line, and no progress line.
      assert.match(
        r.stderr,
        /^migrate-storage: creating a storagemigration\.k8s\.io\/v1 StorageVersionMigration for things\.migrate\.dco\.test /,
      );
      assert.doesNotMatch(r.stderr, /waiting for/);
      const report = JSON.parse(r.stdout) as MigrationReport;
      assert.equal(report.migration?.condition, "Succeeded");
      assert.equal(report.migration?.apiVersion, "storagemigration.k8s.io/v1");
      assert.equal(report.succeeded, null);
      assert.equal(report.failed, null);
      assert.deepEqual(report.objects, []);
      assert.equal(report.pruned, true);
      assert.deepEqual(await crdStored(), ["v2"]);
      const stored = await storedVersions(cp);
      assert.equal(stored.size, total);
      assert.deepEqual(countBy(stored), { [`${GROUP}/v2`]: total });
      const svm = await admin.get(
        { group: "storagemigration.k8s.io", version: "v1", plural: "storageversionmigrations" },
        report.migration!.name,
      );
      assert.deepEqual(svm.spec, { resource: { group: GROUP, resource: PLURAL } });
    });

    await t.step("the table: object counts shown as unknown", async () => {
      const r = await convctl(...base, "--via-kube-migrator");
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /^OBJECTS: {2}unknown \(StorageVersionMigration convctl-things\.migrate\.dco\.test-\w+: Succeeded(: [^)]+)?\)$/m,
      );
      assert.match(r.stdout, /^PRUNE: {4}not pruned$/m);
    });

    await t.step(
      "Failed: the controller's writes are refused; reported, no prune, exit 1",
      async () => {
        await refuseUpdates(cp, admin, {
          policy: "refuse-thing-updates",
          group: GROUP,
          resource: PLURAL,
          expression: "false",
          probe: { ref: { ...things, version: "v2" }, name: "probe" },
        });
        const r = await convctl(
          ...base,
          "--via-kube-migrator",
          "--prune-stored-versions",
          "--timeout",
          "5m",
          "-o",
          "json",
        );
        assert.equal(r.code, 1, r.stderr);
        const report = JSON.parse(r.stdout) as MigrationReport;
        assert.equal(report.migration?.condition, "Failed");
        // The controller names how far it got, the object refused (the policy's probe is one of the
        // things, and may come first) and the apiserver's refusal.
        assert.match(
          report.migration?.message ?? "",
          /^\d+\/\d+ not yet migrated\. migration encountered unhandled error: things\.migrate\.dco\.test "(thing-\d+|probe)" is forbidden: .*refused by the test policy$/,
        );
        assert.equal(report.pruned, false);
        assert.deepEqual(report.warnings, [
          "--prune-stored-versions skipped: the StorageVersionMigration failed",
        ]);
        // One migration only: each one took up to about a minute here; the table of a Failed
        // migration is tested in tests/cli/migrate_storage_test.ts.
      },
    );
  },
  { controllers: ["garbage-collector-controller", "storage-version-migrator-controller"] },
);

e2eTest(
  "migrate-storage --via-kube-migrator: an apiserver without storagemigration.k8s.io, exit 2",
  async (cp) => {
    using admin = await adminClient(cp);
    await put(admin, CRD_RESOURCE, thingsCRD("v2"));
    await cp.waitForCRD(CRD);
    const r = await convctl(
      "migrate-storage",
      "--crd",
      CRD,
      "--kubeconfig",
      cp.kubeconfigPath,
      "--via-kube-migrator",
    );
    // The cluster is named by the kubeconfig's current context.
    const cluster = cp.kubeConfig.getCurrentContext();
    assertToolError(
      r,
      `--via-kube-migrator: cluster ${cluster} does not serve storagemigration.k8s.io ` +
        "(StorageVersionMigration)",
    );
  },
  { apiServerArgs: ["--runtime-config=storagemigration.k8s.io/v1=false"] },
);
