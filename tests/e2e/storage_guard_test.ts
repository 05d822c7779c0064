/**
 * The storage guard against a real kube-apiserver with the manager as a process and real
 * webhook-server Pods (the test kubelet), for a CRD: nothing reverts a conversion to `None` while
 * objects may still be stored at a version the CRD no longer converts.
 *
 * Two CRDs go through the same storage-version change: objects are created while v1 is the storage
 * version, v2 becomes the storage version (`status.storedVersions` [v1, v2]), a config with hub v2
 * is applied and converts them on read, and v1 stops being served.
 *
 * - `widgets` (KeepServingStale): the config is deleted → `DeletionBlocked/StoredVersionsPending`
 *   naming v1, the CRD keeps its webhook and reads still convert; after the runbook's steps (every
 *   object rewritten with `kubectl replace`, `storedVersions` trimmed to [v2] through the status
 *   subresource) the delete proceeds: the finalizer goes, the CRD reverts to `None`, and the
 *   objects read back whole (they are stored at v2 now).
 * - `gizmos` (FailClosed): un-serving v1 makes the config invalid against the live CRD (its spoke
 *   is no longer served) → no revert, `RevertBlocked/StoredVersionsPending` naming v1, still
 *   converting; after the same steps the FailClosed revert happens (`Applied=False/Reverted`,
 *   `RevertBlocked` removed, the CRD at `None`).
 */
import assert from "node:assert/strict";
import { type ControlPlane, e2eTest, waitFor } from "../support/control_plane.ts";
import {
  createObject,
  fieldRenameConfig,
  findCondition as cond,
  kubectlFor,
  type Obj,
  readyWebhookServer,
  startDcoStack,
  twoVersionCRD,
  WEBHOOK_SERVER_SA,
  webhookServer,
  webhookServerKubelet,
} from "../support/dco_stack.ts";

const GROUP = "storage.dco.test";
const CWS = "dco";
const IMAGE = "dco.test/webhook-server:e2e";
const CONFIGS = "crdconversionconfigs.terasky.com";

/** The CRD `<plural>.storage.dco.test` with v2 as the storage version and v1 served or not. */
function crdAtV2(plural: string, kind: string, servedV1: boolean): Obj {
  const crd = twoVersionCRD({ group: GROUP, plural, kind }) as Obj;
  for (const v of crd.spec.versions) {
    v.storage = v.name === "v2";
    if (v.name === "v1") v.served = servedV1;
  }
  return crd;
}

e2eTest("storage guard: no revert while objects are stored at an unconverted version", async (
  cp: ControlPlane,
  t,
) => {
  await using manager = await startDcoStack(cp, {
    caName: "dco-e2e-ca",
    webhookServerImage: IMAGE,
    features: { xrd: false },
  });
  const { failing } = manager;
  const { kubectl, getJSON } = kubectlFor(cp);
  const objNs = await cp.createNamespace("objects");
  const flows = [
    { plural: "widgets", kind: "Widget", driftPolicy: "KeepServingStale" },
    { plural: "gizmos", kind: "Gizmo", driftPolicy: "FailClosed" },
  ].map((f) => ({ ...f, crd: `${f.plural}.${GROUP}` }));
  const readAt = (plural: string, version: string, name: string) =>
    getJSON(`${plural}.${version}.${GROUP}`, name, "-n", objNs);
  const strategy = async (crd: string) =>
    (await getJSON("crd", crd)).spec.conversion?.strategy ?? "None";

  await t.step("objects stored at v1, then v2 becomes the storage version", async () => {
    for (const f of flows) {
      await cp.apply(twoVersionCRD({ group: GROUP, plural: f.plural, kind: f.kind }));
      await cp.waitForCRD(f.crd);
      await createObject(cp, {
        apiVersion: `${GROUP}/v1`,
        kind: f.kind,
        metadata: { name: "old" },
        spec: { size: 3, color: "red" },
      }, objNs);
      await cp.apply(crdAtV2(f.plural, f.kind, true));
      const crd = await waitFor("storedVersions [v1, v2]", async () => {
        const c = await getJSON("crd", f.crd);
        return JSON.stringify(c.status.storedVersions) === '["v1","v2"]' ? c : undefined;
      }, { timeoutMs: 30_000 });
      assert.equal(crd.spec.versions.find((v: Obj) => v.storage).name, "v2");
    }
  });

  await t.step("hub-v2 configs are applied and convert the v1-stored objects on read", async () => {
    await cp.apply(webhookServer(CWS, {
      default: true,
      replicas: 1,
      serviceAccountName: WEBHOOK_SERVER_SA,
      certificate: { issuerRef: { name: "unused" } },
    }));
    for (const f of flows) {
      const config = fieldRenameConfig({
        kind: "CRDConversionConfig",
        name: f.plural,
        target: f.crd,
        hubVersion: "v2",
        spokeVersion: "v1",
        hubPath: "spec.capacity",
        spokePath: "spec.size",
      }) as Obj;
      config.spec.driftPolicy = f.driftPolicy;
      await cp.apply(config);
    }
    await waitFor("CWS ready", () => readyWebhookServer(cp, CWS, 1), { timeoutMs: 120_000 })
      .catch(failing);
    for (const f of flows) {
      await waitFor(`${f.plural} Applied`, async () => {
        const c = await getJSON(CONFIGS, f.plural);
        return c.status?.phase === "Applied" ? c : undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      const v2 = await waitFor("converted read", async () => {
        const r = await cp.kubectl(
          "get",
          `${f.plural}.v2.${GROUP}`,
          "old",
          "-n",
          objNs,
          "-o",
          "json",
        );
        return r.code === 0 ? JSON.parse(r.stdout) : undefined;
      }, { timeoutMs: 30_000 }).catch(failing);
      assert.deepEqual(v2.spec, { capacity: 3, color: "red" });
    }
  });

  await t.step("v1 stops being served (storedVersions still [v1, v2])", async () => {
    for (const f of flows) await cp.apply(crdAtV2(f.plural, f.kind, false));
    for (const f of flows) {
      const crd = await getJSON("crd", f.crd);
      assert.deepEqual(crd.spec.versions.map((v: Obj) => [v.name, v.served]), [
        ["v1", false],
        ["v2", true],
      ]);
      assert.deepEqual(crd.status.storedVersions, ["v1", "v2"]);
    }
  });

  const [widgets, gizmos] = flows;
  await t.step(
    "deleting the config is held: DeletionBlocked/StoredVersionsPending names v1",
    async () => {
      await kubectl("delete", CONFIGS, widgets.plural, "--wait=false");
      const c = await waitFor("DeletionBlocked", async () => {
        const o = await getJSON(CONFIGS, widgets.plural);
        return cond(o, "DeletionBlocked")?.status === "True" ? o : undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      const blocked = cond(c, "DeletionBlocked");
      assert.equal(blocked.reason, "StoredVersionsPending");
      assert.match(blocked.message, /still lists v1 in status\.storedVersions \[v1, v2\]/);
      assert.ok(
        blocked.message.includes(
          `kubectl patch crd ${widgets.crd} --subresource=status --type=merge -p ` +
            `'{"status":{"storedVersions":["v2"]}}'`,
        ),
        blocked.message,
      );
      assert.ok(c.metadata.finalizers.includes("conversion.terasky.com/safe-revert-crd"));
      assert.equal(await strategy(widgets.crd), "Webhook", "the CRD keeps its webhook");
      assert.deepEqual((await readAt(widgets.plural, "v2", "old")).spec, {
        capacity: 3,
        color: "red",
      });
    },
  );

  await t.step(
    "FailClosed drift is held: RevertBlocked/StoredVersionsPending names v1",
    async () => {
      const c = await waitFor("RevertBlocked", async () => {
        const o = await getJSON(CONFIGS, gizmos.plural);
        return cond(o, "RevertBlocked")?.status === "True" ? o : undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      const blocked = cond(c, "RevertBlocked");
      assert.equal(blocked.reason, "StoredVersionsPending");
      assert.match(blocked.message, /FailClosed revert of CRD "gizmos\.storage\.dco\.test" held/);
      assert.match(blocked.message, /still lists v1/);
      assert.equal(c.status.phase, "Stale");
      assert.equal(cond(c, "Validated").status, "False");
      assert.equal(cond(c, "Applied").status, "True");
      assert.equal(await strategy(gizmos.crd), "Webhook", "no revert");
      assert.deepEqual((await readAt(gizmos.plural, "v2", "old")).spec, {
        capacity: 3,
        color: "red",
      });
    },
  );

  await t.step("the runbook: rewrite every object, trim storedVersions to [v2]", async () => {
    for (const f of flows) {
      // `kubectl get <crd> --all-namespaces -o json | kubectl replace -f -`, through a file.
      const dir = await cp.makeTempDir("migrate");
      await Deno.writeTextFile(
        `${dir}/all.json`,
        await kubectl("get", f.crd, "--all-namespaces", "-o", "json"),
      );
      await kubectl("replace", "-f", `${dir}/all.json`);
      await kubectl(
        "patch",
        "crd",
        f.crd,
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"storedVersions":["v2"]}}',
      );
      assert.deepEqual((await getJSON("crd", f.crd)).status.storedVersions, ["v2"]);
    }
  });

  await t.step(
    "the delete proceeds: finalizer removed, conversion reverted, nothing lost",
    async () => {
      await waitFor("the config is gone", async () => {
        const r = await cp.kubectl("get", CONFIGS, widgets.plural);
        return r.code !== 0 && /NotFound/.test(r.stderr);
      }, { timeoutMs: 60_000 }).catch(failing);
      const crd = await getJSON("crd", widgets.crd);
      assert.equal(crd.spec.conversion.strategy, "None");
      assert.equal(crd.metadata.annotations?.["conversion.terasky.com/managed-by"], undefined);
      // Stored at v2 by the rewrite: read whole without any webhook.
      assert.deepEqual((await readAt(widgets.plural, "v2", "old")).spec, {
        capacity: 3,
        color: "red",
      });
    },
  );

  await t.step(
    "the FailClosed revert proceeds: Applied=False/Reverted, the CRD at None",
    async () => {
      const c = await waitFor("Reverted", async () => {
        const o = await getJSON(CONFIGS, gizmos.plural);
        return cond(o, "Applied")?.reason === "Reverted" ? o : undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      // Failed at the revert; the next reconcile (woken by the CRD's change) may already have
      // turned it Invalid — the revert is recorded by Applied=False/Reverted either way.
      assert.ok(["Failed", "Invalid"].includes(c.status.phase), c.status.phase);
      assert.equal(cond(c, "Applied").status, "False");
      assert.equal(cond(c, "RevertBlocked"), undefined);
      assert.equal(await strategy(gizmos.crd), "None");
      assert.deepEqual((await readAt(gizmos.plural, "v2", "old")).spec, {
        capacity: 3,
        color: "red",
      });
    },
  );
}, { name: "storage-guard", kubelet: webhookServerKubelet(IMAGE) });
