/**
 * `convctl migrate-storage` against a real kube-apiserver and etcd, with etcd read directly as
 * the proof that storage moved: {@link COUNT} objects are created while v1 is the storage
 * version (etcd holds `"apiVersion":"migrate.dco.test/v1"`), then v2 becomes the storage version
 * (the two versions share one schema, conversion `None`: only the stored encoding changes).
 *
 * - An identity allowed to patch in only one of the two namespaces: exit 1, a `Forbidden`
 *   per-object error for each object of the other namespace while the rest are rewritten, and no
 *   prune (`status.storedVersions` stays [v1, v2]).
 * - A server-side dry run: every object ok, nothing in etcd changes.
 * - The admin, `--concurrency 8 --prune-stored-versions`: every object ok, every etcd key at v2,
 *   `storedVersions` [v2]. The rate (objects/s) is printed in the test log.
 * - `-x` an XRD (Crossplane's part played by a stand-in CRD) resolves its generated CRD and warns
 *   that its referenceable version lags the storage version; `-n` limits the run; the table.
 * - A re-run rewrites nothing (every resourceVersion stays), and an object deleted after the
 *   listing is not created again (a server-side apply would create it).
 */
import assert from "node:assert/strict";
import { writeAll } from "../../src/cli/migrate_run.ts";
import type { MigrationReport } from "../../src/cli/migrate_storage.ts";
import {
  isNotFound,
  type KubeClient,
  type KubeObject,
  type ResourceRef,
} from "../../src/kube/mod.ts";
import { CRD_RESOURCE } from "../../src/kube/resources.ts";
import { assertToolError, convctl } from "../cli/_convctl.ts";
import { e2eTest, waitFor } from "../support/control_plane.ts";
import { XRD_CRD, XRDS } from "./_crossplane.ts";
import {
  countBy,
  CRD,
  GROUP,
  PLURAL,
  pool,
  SCHEMA,
  storedVersions,
  thingsCRD,
} from "./_migrate_things.ts";
import { adminClient, serviceAccountKubeconfig } from "./kube/_support.ts";

/** Objects stored at v1 before the migration (half in each namespace). */
const COUNT = 2000;
/** Server-side apply as the test's admin. */
const put = (admin: KubeClient, ref: ResourceRef, obj: KubeObject) =>
  admin.apply(ref, obj, { fieldManager: "migrate-e2e" });

const parse = (stdout: string) => JSON.parse(stdout) as MigrationReport;

e2eTest(
  "migrate-storage: every object rewritten at the new storage version, proven in etcd",
  async (
    cp,
    t,
  ) => {
    using admin = await adminClient(cp);
    await put(admin, CRD_RESOURCE, thingsCRD("v1"));
    await cp.waitForCRD(CRD);
    const [nsA, nsB] = [await cp.createNamespace("mig-a"), await cp.createNamespace("mig-b")];
    const things = (ns?: string): ResourceRef => ({
      group: GROUP,
      version: "v1",
      plural: PLURAL,
      namespace: ns,
    });
    const names = Array.from({ length: COUNT }, (_, i) => ({
      ns: i % 2 === 0 ? nsA : nsB,
      name: `thing-${String(i).padStart(4, "0")}`,
    }));
    await pool(names, 16, ({ ns, name }) =>
      admin.create(things(ns), {
        apiVersion: `${GROUP}/v1`,
        kind: "Thing",
        metadata: { name },
        spec: { size: 1 },
      }));
    assert.deepEqual(countBy(await storedVersions(cp)), { [`${GROUP}/v1`]: COUNT });

    // v2 becomes the storage version; wait until a fresh write really lands at v2.
    await put(admin, CRD_RESOURCE, thingsCRD("v2"));
    const probe = { apiVersion: `${GROUP}/v2`, kind: "Thing", metadata: { name: "probe" } };
    await waitFor("writes stored at v2", async () => {
      await admin.delete(things(nsA), "probe").catch((e) => {
        if (!isNotFound(e)) throw e;
      });
      await admin.create({ ...things(nsA), version: "v2" }, probe);
      const key = `/registry/${GROUP}/${PLURAL}/${nsA}/probe`;
      return (await storedVersions(cp)).get(key) === `${GROUP}/v2`;
    });
    const total = COUNT + 1;
    const crdStored = async () =>
      ((await admin.get(CRD_RESOURCE, CRD)).status as { storedVersions: string[] }).storedVersions;
    assert.deepEqual(await crdStored(), ["v1", "v2"]);

    await t.step(
      "an identity allowed to patch in one namespace: per-object errors, no prune",
      async () => {
        const dir = await cp.makeTempDir("mig-sa");
        const saNs = await cp.createNamespace("mig-sa");
        const rbac = "rbac.authorization.k8s.io/v1";
        const subjects = [{ kind: "ServiceAccount", name: "half", namespace: saNs }];
        await cp.apply({
          apiVersion: rbac,
          kind: "ClusterRole",
          metadata: { name: "mig-read" },
          rules: [
            { apiGroups: [GROUP], resources: [PLURAL], verbs: ["get", "list"] },
            {
              apiGroups: ["apiextensions.k8s.io"],
              resources: ["customresourcedefinitions", "customresourcedefinitions/status"],
              verbs: ["get", "update"],
            },
          ],
        });
        await cp.apply({
          apiVersion: rbac,
          kind: "ClusterRoleBinding",
          metadata: { name: "mig-read" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "mig-read" },
          subjects,
        });
        await cp.apply({
          apiVersion: rbac,
          kind: "Role",
          metadata: { name: "mig-patch", namespace: nsA },
          rules: [{ apiGroups: [GROUP], resources: [PLURAL], verbs: ["patch"] }],
        });
        await cp.apply({
          apiVersion: rbac,
          kind: "RoleBinding",
          metadata: { name: "mig-patch", namespace: nsA },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "mig-patch" },
          subjects,
        });
        const kubeconfig = await serviceAccountKubeconfig(cp, admin, saNs, "half", dir);
        const r = await convctl(
          "migrate-storage",
          "--crd",
          CRD,
          "--kubeconfig",
          kubeconfig,
          "--concurrency",
          "8",
          "--prune-stored-versions",
          "-o",
          "json",
        );
        assert.equal(r.code, 1, r.stderr);
        const report = parse(r.stdout);
        assert.equal(report.objects.length, total);
        assert.equal(report.failed, COUNT / 2);
        assert.equal(report.succeeded, COUNT / 2 + 1);
        for (const o of report.objects) {
          if (o.namespace === nsB) assert.match(o.error ?? "", /^Forbidden: .*cannot patch/);
          else assert.equal(o.error, undefined);
        }
        assert.equal(report.pruned, false);
        assert.match(
          report.warnings?.join("\n") ?? "",
          /--prune-stored-versions skipped: 1000 object/,
        );
        assert.deepEqual(await crdStored(), ["v1", "v2"]);
        const stored = await storedVersions(cp);
        assert.deepEqual(countBy(stored, `/${nsA}/`), { [`${GROUP}/v2`]: COUNT / 2 + 1 });
        assert.deepEqual(countBy(stored, `/${nsB}/`), { [`${GROUP}/v1`]: COUNT / 2 });
      },
    );

    await t.step("--dry-run: every object ok, nothing stored changes", async () => {
      const before = await storedVersions(cp);
      const r = await convctl(
        "migrate-storage",
        "--crd",
        CRD,
        "--kubeconfig",
        cp.kubeconfigPath,
        "--dry-run",
        "-o",
        "json",
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`^migrate-storage: would rewrite \\(server-side dry run\\) ${total} Thing`),
      );
      const report = parse(r.stdout);
      assert.equal(report.dryRun, true);
      assert.equal(report.succeeded, total);
      assert.deepEqual(await storedVersions(cp), before);
    });

    await t.step("the admin: every object at v2 in etcd, storedVersions [v2]", async () => {
      const started = performance.now();
      const r = await convctl(
        "migrate-storage",
        "--crd",
        CRD,
        "--kubeconfig",
        cp.kubeconfigPath,
        "--concurrency",
        "8",
        "--prune-stored-versions",
        "-o",
        "json",
      );
      const seconds = (performance.now() - started) / 1000;
      assert.equal(r.code, 0, r.stderr);
      // stderr is a pipe here: the plan line, and no progress line.
      assert.match(r.stderr, /^migrate-storage: rewriting 2001 Thing object\(s\) on cluster /);
      assert.doesNotMatch(r.stderr, /migrated \d+\//);
      // The apiserver (1.37) serves the StorageVersionMigration API: the run says so.
      assert.match(
        r.stderr,
        /^NOTE: cluster .* serves storagemigration\.k8s\.io\/v1 \(StorageVersionMigration\)/m,
      );
      const report = parse(r.stdout);
      assert.equal(report.succeeded, total);
      assert.equal(report.failed, 0);
      assert.equal(report.pruned, true);
      assert.equal(report.storageVersion, "v2");
      assert.deepEqual(await crdStored(), ["v2"]);
      const stored = await storedVersions(cp);
      assert.equal(stored.size, total);
      assert.deepEqual(countBy(stored), { [`${GROUP}/v2`]: total });
      console.log(
        `migrate-storage: ${total} objects in ${seconds.toFixed(1)} s (whole command, ` +
          `concurrency 8) = ${(total / seconds).toFixed(0)} objects/s`,
      );
    });

    await t.step("a re-run writes nothing; a deleted object is not created again", async () => {
      const v2 = { ...things(), version: "v2" };
      const versionsOf = async () =>
        new Map(
          (await admin.listAll(v2, { limit: 500 })).items.map((o) => [
            `${o.metadata.namespace}/${o.metadata.name}`,
            o.metadata.resourceVersion,
          ]),
        );
      const before = await versionsOf();
      const r = await convctl(
        "migrate-storage",
        "--crd",
        CRD,
        "--kubeconfig",
        cp.kubeconfigPath,
        "-o",
        "json",
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(parse(r.stdout).succeeded, total);
      assert.deepEqual(await versionsOf(), before);

      const listed = await admin.get({ ...v2, namespace: nsB }, "thing-0001");
      await admin.delete({ ...v2, namespace: nsB }, "thing-0001");
      const [result] = await writeAll(
        {
          client: admin,
          ref: v2,
          namespaced: true,
          fieldManager: "convctl",
          dryRun: false,
          concurrency: 1,
        },
        [listed],
        () => {},
      );
      assert.deepEqual(result, { namespace: nsB, name: "thing-0001" });
      await assert.rejects(admin.get({ ...v2, namespace: nsB }, "thing-0001"), isNotFound);
    });

    await t.step(
      "-x XRD: its generated CRD, a warning when the referenceable version lags, the table",
      async () => {
        await cp.apply(XRD_CRD);
        await cp.waitForCRD(XRD_CRD.metadata!.name!);
        await admin.create(XRDS("v2"), {
          apiVersion: "apiextensions.crossplane.io/v2",
          kind: "CompositeResourceDefinition",
          metadata: { name: CRD },
          spec: {
            group: GROUP,
            scope: "Namespaced",
            names: { plural: PLURAL, kind: "Thing" },
            versions: ["v1", "v2"].map((name) => ({
              name,
              served: true,
              referenceable: name === "v1",
              schema: SCHEMA,
            })),
          },
        });
        const r = await convctl(
          "migrate-storage",
          "-x",
          CRD,
          "--kubeconfig",
          cp.kubeconfigPath,
          "--dry-run",
          "-n",
          nsA,
        );
        assert.equal(r.code, 0, r.stderr);
        assert.match(
          r.stderr,
          new RegExp(`would rewrite .* ${COUNT / 2 + 1} Thing object\\(s\\) in namespace ${nsA} `),
        );
        const head = r.stdout.split("\n").slice(0, 7);
        assert.deepEqual(head, [
          "MODE:     dry-run",
          `TARGET:   CompositeResourceDefinition ${CRD}`,
          `CRD:      ${CRD}`,
          `GVK:      ${GROUP}/v2, Kind=Thing (${PLURAL})`,
          "STORED:   v2",
          `OBJECTS:  ${COUNT / 2 + 1} (${COUNT / 2 + 1} ok, 0 failed)`,
          "PRUNE:    not pruned",
        ]);
        assert.match(r.stdout, /^NAMESPACE +NAME +RESULT$/m);
        assert.match(r.stdout, new RegExp(`^${nsA} +thing-0000 +ok$`, "m"));
        assert.match(
          r.stdout,
          /^WARNING: the XRD's referenceable version is v1 but CRD things\.migrate\.dco\.test stores v2 /m,
        );
        const partial = await convctl(
          "migrate-storage",
          "-x",
          CRD,
          "--kubeconfig",
          cp.kubeconfigPath,
          "-n",
          nsA,
          "--prune-stored-versions",
        );
        assertToolError(
          partial,
          "--prune-stored-versions needs every object of the CRD migrated: drop --namespace",
        );
      },
    );
  },
);
