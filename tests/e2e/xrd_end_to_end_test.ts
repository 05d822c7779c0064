/**
 * The whole product for an XRDConversionConfig on a real control plane with real workloads:
 * kube-apiserver + etcd + kube-controller-manager, and the test kubelet running the webhook-server
 * Pods as real processes on a pod network (tests/support/kubelet.ts), as `end_to_end_test.ts`
 * does for CRDs. The manager runs as a process with `--enable-xrd-support=true` (CRD support on
 * too) and the admin identity; the webhook-server Pods mirror its feature flags and run with the
 * chart's ServiceAccount and RBAC, so they watch XRDs at apiextensions.crossplane.io/v2.
 *
 * Crossplane's own controller does not run here: THE TEST PLAYS CROSSPLANE'S PART (`_crossplane.ts`)
 * with a stand-in of the XRD CRD (`testdata/crossplane_xrd_crd.yaml`): it marks the XRD
 * Established, renders the composite CRD `<plural>.<group>` from the XRD's versions and schemas
 * (storage = referenceable) and copies the XRD's `spec.conversion` into it whenever it changes.
 * Real Crossplane's generated CRDs also carry the schema it injects (`spec.crossplane.*`,
 * `status.conditions`; the legacy roots and claim CRDs for XRDs offering claims), categories and
 * printer columns and the status subresource; none of that is exercised here — only conversion
 * of the XRD's own fields. Nor does the stand-in re-render the CRD's schemas when the XRD changes
 * (the drift step only changes the XRD).
 *
 * Steps: the ConversionWebhookServer's Deployment becomes ready Pods (with
 * `--enable-xrd-support=true`); the XRD is patched only after the server is ready (proved by etcd
 * revision order), the stanza reaches the generated CRD (ConversionPropagated=True); composite
 * objects (XRs) convert on read both ways through the apiserver → Service → webhook-server Pods,
 * on path `/convert/<xrd name>` with the XRD-derived plan (there is no CRDConversionConfig); an
 * invalid config is Invalid with its XRD untouched; schema drift of the XRD makes the config Stale
 * while it keeps serving; deleting the config is blocked while two versions are served, until the
 * break-glass annotation, then the XRD reverts and the loop copies strategy None into the
 * generated CRD; the admission webhook rejects an invalid XRDConversionConfig.
 */
import assert from "node:assert/strict";
import {
  type ControlPlane,
  freePort,
  waitFor,
  withControlPlane,
} from "../support/control_plane.ts";
import {
  admissionCertificate,
  applyChartRBAC,
  assertConvertsOnRead,
  assertPatchedAfterReady,
  assertWebhookServerPods,
  fieldRenameConfig,
  findCondition as cond,
  installDcoCRDs,
  kubectlFor,
  type Obj,
  readyWebhookServer,
  stackLogs,
  startManager,
  twoVersionXRD,
  validatingWebhook,
  WEBHOOK_SERVER_SA,
  webhookServer,
  webhookServerKubelet,
  writeObjectFile,
} from "../support/dco_stack.ts";
import { recordWatch } from "../support/watch_recorder.ts";
import { KubeClient, loadKubeconfig } from "../../src/kube/mod.ts";
import { FakeCrossplane, XRD_CRD, XRDS } from "./_crossplane.ts";

const GROUP = "xe2e.dco.test";
const CWS = "dco";
const SVC = `${CWS}-webhook-server`;
const IMAGE = "dco.test/webhook-server:e2e";
const WIDGETS = `xwidgets.${GROUP}`;
const GIZMOS = `xgizmos.${GROUP}`;

/** A (modern, Namespaced) XRD: v1 (`size`, referenceable ⇒ storage) and v2 (`capacity`). */
const xrd = (plural: string, kind: string, extraV1Field?: string) =>
  twoVersionXRD({ group: GROUP, plural, kind, extraV1Field, referenceable: "v1" });

/** An XRDConversionConfig renaming v1's `spec.size` to v2's `spokePath`. */
const config = (name: string, target: string, spokePath: string) =>
  fieldRenameConfig({ kind: "XRDConversionConfig", name, target, spokePath });

Deno.test({
  name: "end to end (XRD): manager, webhook-server Pods, XRs converted through the apiserver",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: withControlPlane(async (cp: ControlPlane, t) => {
    await installDcoCRDs(cp, [XRD_CRD]);
    const ns = await cp.createNamespace("dco-system");
    // The chart's RBAC with its XRD grants.
    await applyChartRBAC(cp, ns, { crossplane: true });
    const client = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
    const crossplane = new FakeCrossplane(client);
    try {
      // The manager's admission listener gets a test certificate; the webhook servers' come
      // from the manager's built-in CA (no cert-manager here).
      const { certDir, ca } = await admissionCertificate(cp, "dco-e2e-ca");

      // Crossplane: the XRDs are Established and their composite CRDs rendered, and the XRD's
      // conversion stanza is copied into them whenever it changes.
      await cp.apply(xrd("xwidgets", "XWidget"));
      await cp.apply(xrd("xgizmos", "XGizmo"));
      await crossplane.establish(WIDGETS);
      await crossplane.establish(GIZMOS);
      for (const name of [WIDGETS, GIZMOS]) {
        crossplane.render.add(name);
        crossplane.copy.add(name);
      }
      crossplane.start();
      await cp.waitForCRD(WIDGETS);
      await cp.waitForCRD(GIZMOS);
      assert.equal(
        (await client.get(
          { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions" },
          WIDGETS,
        ) as Obj).spec.versions.find((v: Obj) => v.storage).name,
        "v1",
        "the referenceable version is the generated CRD's storage version",
      );

      // Watches from before anything of ours exists: the order proof below reads them.
      await using xrdWatch = await recordWatch(
        cp,
        `/apis/apiextensions.crossplane.io/v2/compositeresourcedefinitions?fieldSelector=metadata.name=${WIDGETS}`,
      );
      await using cwsWatch = await recordWatch(
        cp,
        "/apis/terasky.com/v1alpha1/conversionwebhookservers",
      );

      const admissionPort = freePort();
      await using manager = startManager(cp, {
        certDir,
        namespace: ns,
        admissionPort,
        webhookServerImage: IMAGE,
        certificateMode: "builtin",
        features: { xrd: true, crd: true },
        logLevel: "debug",
      });
      const { kubectl, getJSON } = kubectlFor(cp);
      const getXRD = (name: string) =>
        getJSON(`compositeresourcedefinitions.v2.${XRDS().group}`, name);
      const xrdConfig = (name: string) => getJSON("xrdconversionconfigs.terasky.com", name);
      const fail = async (msg: string) =>
        `${msg}\n${await stackLogs(cp, manager, { manager: 40, pods: 30 })}\n--- crossplane ---\n${
          crossplane.errors.slice(-5).join("\n")
        }`;
      const failing = async (e: unknown): Promise<never> => {
        throw new Error(await fail((e as Error).message));
      };

      await cp.apply(webhookServer(CWS, {
        default: true,
        replicas: 2,
        serviceAccountName: WEBHOOK_SERVER_SA,
        certificate: { issuerRef: { name: "unused" } },
        rollout: { preStopSleepSeconds: 1, terminationGracePeriodSeconds: 35 },
      }));
      await cp.apply(config("widgets", WIDGETS, "spec.capacity"));

      await t.step(
        "the server's Deployment becomes two ready XRD-mode webhook-server Pods",
        async () => {
          const ready = await waitFor("CWS ready", () => readyWebhookServer(cp, CWS, 2), {
            timeoutMs: 120_000,
          }).catch(failing);
          assert.equal(cond(ready, "CertificateReady")?.status, "True");
          const dep = await getJSON("deployment", SVC, "-n", ns);
          const args: string[] = dep.spec.template.spec.containers[0].args;
          assert.ok(args.includes("--enable-xrd-support=true"), args.join(" "));
          assert.ok(args.includes("--enable-crd-support=true"), args.join(" "));
          await assertWebhookServerPods(cp, ns, CWS, 2);
        },
      );

      await t.step(
        "the XRD is patched only after the server was ready; it propagates",
        async () => {
          const cfg = await waitFor("widgets Applied and Propagated", async () => {
            const c = await xrdConfig("widgets");
            return c.status?.phase === "Applied" &&
                cond(c, "ConversionPropagated")?.status === "True"
              ? c
              : undefined;
          }, { timeoutMs: 60_000 }).catch(failing);
          const x = await getXRD(WIDGETS);
          const caSecret = await getJSON("secret", "dco-webhook-ca", "-n", ns);
          assert.deepEqual(x.spec.conversion, {
            strategy: "Webhook",
            webhook: {
              clientConfig: {
                service: { name: SVC, namespace: ns, path: `/convert/${WIDGETS}`, port: 443 },
                caBundle: caSecret.data["tls.crt"],
              },
              conversionReviewVersions: ["v1"],
            },
          });
          assert.equal(x.metadata.annotations["conversion.terasky.com/managed-by"], "widgets");
          assert.equal(cfg.status.webhookURL, `https://${SVC}.${ns}.svc/convert/${WIDGETS}`);
          assert.equal(cond(cfg, "ConversionPropagated").reason, "Propagated");
          assert.deepEqual(
            cfg.status.generatedCRDs.map((g: Obj) => [g.name, g.role, g.propagated]),
            [[WIDGETS, "composite", true]],
          );
          // The test's Crossplane copied the stanza into the generated CRD as written.
          const generated = await getJSON("crd", WIDGETS);
          assert.deepEqual(generated.spec.conversion, x.spec.conversion);
          assertPatchedAfterReady(xrdWatch, cwsWatch, "XRD");
        },
      );

      const objNs = await cp.createNamespace("objects");
      await t.step("XRs convert on read through the webhook-server Pods", async () => {
        // Only an XRDConversionConfig targets this group: the Pods convert with the plan they
        // derived from the XRD, on /convert/<xrd name>.
        const crdConfigs = await getJSON("crdconversionconfigs.terasky.com");
        assert.deepEqual(crdConfigs.items, []);
        await assertConvertsOnRead(cp, {
          group: GROUP,
          plural: "xwidgets",
          kind: "XWidget",
          namespace: objNs,
          onTimeout: failing,
        });
      });

      await t.step("an invalid config is Invalid and leaves its XRD untouched", async () => {
        await cp.apply(config("gizmos", GIZMOS, "spec.nowhere"));
        const c = await waitFor("gizmos Invalid", async () => {
          const o = await xrdConfig("gizmos");
          return o.status?.phase === "Invalid" ? o : undefined;
        }, { timeoutMs: 60_000 }).catch(failing);
        assert.equal(cond(c, "Validated")?.status, "False");
        assert.match(c.status.message ?? cond(c, "Validated").message, /spec\.nowhere/);
        const x = await getXRD(GIZMOS);
        assert.equal(x.spec.conversion, undefined);
        assert.equal(x.metadata.annotations?.["conversion.terasky.com/managed-by"], undefined);
        assert.equal((await getJSON("crd", GIZMOS)).spec.conversion.strategy, "None");
      });

      await t.step(
        "schema drift of the XRD makes the config Stale, and it keeps serving",
        async () => {
          // A new v1 field no rule covers: fail-closed validation fails against the live schema.
          await cp.apply(xrd("xwidgets", "XWidget", "shape"));
          const c = await waitFor("widgets Stale", async () => {
            const o = await xrdConfig("widgets");
            return o.status?.phase === "Stale" ? o : undefined;
          }, { timeoutMs: 60_000 }).catch(failing);
          assert.equal(cond(c, "Stale")?.status, "True");
          assert.equal((await getXRD(WIDGETS)).spec.conversion.strategy, "Webhook");
          const v2 = await getJSON(`xwidgets.v2.${GROUP}`, "w1", "-n", objNs);
          assert.deepEqual(v2.spec, { capacity: 3, color: "red" });
        },
      );

      await t.step("delete is blocked while the XRD serves two versions", async () => {
        await kubectl("delete", "xrdconversionconfigs.terasky.com", "widgets", "--wait=false");
        const c = await waitFor("DeletionBlocked", async () => {
          const o = await xrdConfig("widgets");
          return cond(o, "DeletionBlocked")?.status === "True" ? o : undefined;
        }, { timeoutMs: 60_000 }).catch(failing);
        assert.equal(cond(c, "DeletionBlocked").reason, "MultipleServedVersions");
        assert.equal((await getXRD(WIDGETS)).spec.conversion.strategy, "Webhook");
        assert.equal((await getJSON("crd", WIDGETS)).spec.conversion.strategy, "Webhook");
        // Still converting while blocked.
        assert.equal(
          (await getJSON(`xwidgets.v2.${GROUP}`, "w1", "-n", objNs)).spec.capacity,
          3,
        );
      });

      await t.step(
        "the break-glass annotation lets the delete through; the XRD and its CRD revert",
        async () => {
          await kubectl(
            "annotate",
            "xrdconversionconfigs.terasky.com",
            "widgets",
            "conversion.terasky.com/allow-unsafe-delete=true",
          );
          await waitFor("the config is gone", async () => {
            const r = await cp.kubectl("get", "xrdconversionconfigs.terasky.com", "widgets");
            return r.code !== 0 && /NotFound/.test(r.stderr);
          }, { timeoutMs: 60_000 }).catch(failing);
          const x = await getXRD(WIDGETS);
          assert.deepEqual(x.spec.conversion, { strategy: "None" });
          assert.equal(x.metadata.annotations?.["conversion.terasky.com/managed-by"], undefined);
          assert.equal(x.metadata.annotations?.["conversion.terasky.com/plan-hash"], undefined);
          // The test's Crossplane copies strategy None into the generated CRD.
          await waitFor("generated CRD None", async () => {
            const g = await getJSON("crd", WIDGETS);
            return g.spec.conversion.strategy === "None";
          }, { timeoutMs: 30_000 }).catch(failing);
          // No webhook any more: a v2 read is the stored v1 object relabelled and pruned to the
          // v2 schema (`size` dropped, no `capacity`): the rename was the webhook's doing.
          const v2 = await waitFor("unconverted read", async () => {
            const o = await getJSON(`xwidgets.v2.${GROUP}`, "w1", "-n", objNs);
            return o.spec.capacity === undefined ? o : undefined;
          }, { timeoutMs: 30_000 }).catch(failing);
          assert.deepEqual(v2.spec, { color: "red" });
          const v1 = await getJSON(`xwidgets.v1.${GROUP}`, "w1", "-n", objNs);
          assert.deepEqual(v1.spec, { size: 3, color: "red" });
        },
      );

      await t.step(
        "the admission webhook rejects an invalid XRDConversionConfig with the diagnostic",
        async () => {
          await cp.apply(validatingWebhook({
            name: "dco-xrd-e2e",
            kind: "xrdconversionconfig",
            admissionPort,
            caPEM: ca.cert,
          }));
          const rejected = await waitFor("admission rejects", async () => {
            const file = await writeObjectFile(cp, config("rejected", WIDGETS, "spec.nowhere"));
            const r = await cp.kubectl("create", "-f", file);
            return r.code !== 0 && /denied the request/.test(r.stderr) ? r.stderr : undefined;
          }, { timeoutMs: 30_000 });
          assert.match(rejected, /spec\.nowhere/);
          const r = await cp.kubectl("get", "xrdconversionconfigs.terasky.com", "rejected");
          assert.notEqual(r.code, 0, "nothing was stored");
          await crossplane.stop();
          assert.deepEqual(crossplane.errors.filter((e) => !/conflict/i.test(e)), []);
        },
      );
    } finally {
      await crossplane.stop();
      client.close();
    }
  }, { name: "xrd-end-to-end", kubelet: webhookServerKubelet(IMAGE) }),
});
