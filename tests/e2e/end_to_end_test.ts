/**
 * The whole product on a real control plane with real workloads: kube-apiserver + etcd +
 * kube-controller-manager, and the test kubelet running the webhook-server Pods as real
 * processes on a pod network (tests/support/kubelet.ts). The manager runs as a process with the
 * admin identity; the webhook-server Pods run with the chart's ServiceAccount and RBAC. The
 * apiserver reaches them only through the conversion stanza the manager wrote (Service →
 * EndpointSlices → Pod IPs).
 *
 * Steps: the ConversionWebhookServer's Deployment becomes ready Pods; the CRDConversionConfig
 * patches the CRD only after the server is ready (proved by etcd revision order); objects
 * convert on read both ways; an invalid config is Invalid with its target untouched; schema
 * drift makes a working config Stale while it keeps serving; deleting a config is blocked while
 * the target serves several versions, until the break-glass annotation, and then reverts the
 * target; the admission webhook rejects an invalid config with the engine's diagnostic.
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
  readyWebhookServer,
  stackLogs,
  startManager,
  twoVersionCRD,
  validatingWebhook,
  WEBHOOK_SERVER_SA,
  webhookServer,
  webhookServerKubelet,
  writeObjectFile,
} from "../support/dco_stack.ts";
import { recordWatch } from "../support/watch_recorder.ts";

const GROUP = "e2e.dco.test";
const CWS = "dco";
const SVC = `${CWS}-webhook-server`;
const IMAGE = "dco.test/webhook-server:e2e";
const WIDGETS = `widgets.${GROUP}`;
const GIZMOS = `gizmos.${GROUP}`;

/** A CRD serving v1 (`size`, storage) and v2 (`capacity`); `extraV1Field` drifts v1's schema. */
const crd = (plural: string, kind: string, extraV1Field?: string) =>
  twoVersionCRD({ group: GROUP, plural, kind, extraV1Field });

/** A CRDConversionConfig renaming v1's `spec.size` to v2's `spokePath`. */
const config = (name: string, target: string, spokePath: string) =>
  fieldRenameConfig({ kind: "CRDConversionConfig", name, target, spokePath });

Deno.test({
  name: "end to end: manager, webhook-server Pods, conversion on read through the apiserver",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: withControlPlane(async (cp: ControlPlane, t) => {
    await installDcoCRDs(cp);
    const ns = await cp.createNamespace("dco-system");
    await applyChartRBAC(cp, ns);

    // The manager's admission listener gets a test certificate; the webhook servers' come from
    // the manager's built-in CA (no cert-manager here).
    const { certDir, ca } = await admissionCertificate(cp, "dco-e2e-ca");
    await cp.apply(crd("widgets", "Widget"));
    await cp.apply(crd("gizmos", "Gizmo"));
    await cp.waitForCRD(WIDGETS);
    await cp.waitForCRD(GIZMOS);

    // Watches from before anything of ours exists: the order proof below reads them.
    await using crdWatch = await recordWatch(
      cp,
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldSelector=metadata.name=${WIDGETS}`,
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
      features: { xrd: false },
      logLevel: "debug",
    });
    const { kubectl, getJSON } = kubectlFor(cp);
    const fail = async (msg: string) =>
      `${msg}\n${await stackLogs(cp, manager, { manager: 40, pods: 30 })}`;

    await cp.apply(webhookServer(CWS, {
      default: true,
      replicas: 2,
      serviceAccountName: WEBHOOK_SERVER_SA,
      certificate: { issuerRef: { name: "unused" } },
      rollout: { preStopSleepSeconds: 1, terminationGracePeriodSeconds: 35 },
    }));
    await cp.apply(config("widgets", WIDGETS, "spec.capacity"));

    await t.step("the server's Deployment becomes two ready webhook-server Pods", async () => {
      const ready = await waitFor("CWS ready", () => readyWebhookServer(cp, CWS, 2), {
        timeoutMs: 120_000,
      }).catch(async (e) => {
        throw new Error(await fail((e as Error).message));
      });
      assert.equal(cond(ready, "CertificateReady")?.status, "True");
      // Issued by the manager's own CA, whose Secret lives in the operator namespace.
      const tls = await getJSON("secret", `${SVC}-tls`, "-n", ns);
      const caSecret = await getJSON("secret", "dco-webhook-ca", "-n", ns);
      assert.equal(tls.data["ca.crt"], caSecret.data["tls.crt"]);
      await assertWebhookServerPods(cp, ns, CWS, 2);
    });

    await t.step("the CRD is patched, and only after the server was ready", async () => {
      const cfg = await waitFor("widgets Applied", async () => {
        const c = await getJSON("crdconversionconfigs.terasky.com", "widgets");
        return c.status?.phase === "Applied" ? c : undefined;
      }, { timeoutMs: 60_000 }).catch(async (e) => {
        throw new Error(await fail((e as Error).message));
      });
      const target = await getJSON("crd", WIDGETS);
      assert.equal(target.spec.conversion.strategy, "Webhook");
      assert.deepEqual(target.spec.conversion.webhook.clientConfig.service, {
        name: SVC,
        namespace: ns,
        path: `/convert/${WIDGETS}`,
        port: 443,
      });
      assert.equal(cfg.status.webhookURL, `https://${SVC}.${ns}.svc/convert/${WIDGETS}`);
      const caSecret = await getJSON("secret", "dco-webhook-ca", "-n", ns);
      assert.equal(target.spec.conversion.webhook.clientConfig.caBundle, caSecret.data["tls.crt"]);
      assertPatchedAfterReady(crdWatch, cwsWatch, "target");
    });

    const objNs = await cp.createNamespace("objects");
    await t.step("objects convert on read through the webhook-server Pods", async () => {
      await assertConvertsOnRead(cp, {
        group: GROUP,
        plural: "widgets",
        kind: "Widget",
        namespace: objNs,
      });
    });

    await t.step("an invalid config is Invalid and leaves its target untouched", async () => {
      await cp.apply(config("gizmos", GIZMOS, "spec.nowhere"));
      const c = await waitFor("gizmos Invalid", async () => {
        const o = await getJSON("crdconversionconfigs.terasky.com", "gizmos");
        return o.status?.phase === "Invalid" ? o : undefined;
      }, { timeoutMs: 60_000 });
      assert.equal(cond(c, "Validated")?.status, "False");
      assert.match(c.status.message ?? cond(c, "Validated").message, /spec\.nowhere/);
      const target = await getJSON("crd", GIZMOS);
      assert.equal(target.spec.conversion?.strategy ?? "None", "None");
    });

    await t.step("schema drift makes a working config Stale, and it keeps serving", async () => {
      // A new v1 field no rule covers: fail-closed validation fails against the live schema.
      await cp.apply(crd("widgets", "Widget", "shape"));
      const c = await waitFor("widgets Stale", async () => {
        const o = await getJSON("crdconversionconfigs.terasky.com", "widgets");
        return o.status?.phase === "Stale" ? o : undefined;
      }, { timeoutMs: 60_000 });
      assert.equal(cond(c, "Stale")?.status, "True");
      const target = await getJSON("crd", WIDGETS);
      assert.equal(target.spec.conversion.strategy, "Webhook");
      const v2 = await getJSON(`widgets.v2.${GROUP}`, "w1", "-n", objNs);
      assert.deepEqual(v2.spec, { capacity: 3, color: "red" });
    });

    await t.step("delete is blocked while the target serves two versions", async () => {
      await kubectl("delete", "crdconversionconfigs.terasky.com", "widgets", "--wait=false");
      const c = await waitFor("DeletionBlocked", async () => {
        const o = await getJSON("crdconversionconfigs.terasky.com", "widgets");
        return cond(o, "DeletionBlocked")?.status === "True" ? o : undefined;
      }, { timeoutMs: 60_000 });
      assert.equal(cond(c, "DeletionBlocked").reason, "MultipleServedVersions");
      assert.equal((await getJSON("crd", WIDGETS)).spec.conversion.strategy, "Webhook");
      // Still converting while blocked.
      assert.equal((await getJSON(`widgets.v2.${GROUP}`, "w1", "-n", objNs)).spec.capacity, 3);
    });

    await t.step(
      "the break-glass annotation lets the delete through; the target reverts",
      async () => {
        await kubectl(
          "annotate",
          "crdconversionconfigs.terasky.com",
          "widgets",
          "conversion.terasky.com/allow-unsafe-delete=true",
        );
        await waitFor("the config is gone", async () => {
          const r = await cp.kubectl("get", "crdconversionconfigs.terasky.com", "widgets");
          return r.code !== 0 && /NotFound/.test(r.stderr);
        }, { timeoutMs: 60_000 });
        const target = await getJSON("crd", WIDGETS);
        assert.equal(target.spec.conversion.strategy, "None");
        assert.equal(target.metadata.annotations?.["conversion.terasky.com/managed-by"], undefined);
      },
    );

    await t.step(
      "the admission webhook rejects an invalid config with the diagnostic",
      async () => {
        await cp.apply(validatingWebhook({
          name: "dco-e2e",
          kind: "crdconversionconfig",
          admissionPort,
          caPEM: ca.cert,
        }));
        const rejected = await waitFor("admission rejects", async () => {
          const file = await writeObjectFile(cp, config("rejected", WIDGETS, "spec.nowhere"));
          const r = await cp.kubectl("create", "-f", file);
          return r.code !== 0 && /denied the request/.test(r.stderr) ? r.stderr : undefined;
        }, { timeoutMs: 30_000 });
        assert.match(rejected, /spec\.nowhere/);
        const r = await cp.kubectl("get", "crdconversionconfigs.terasky.com", "rejected");
        assert.notEqual(r.code, 0, "nothing was stored");
      },
    );

    await t.step(
      "the manager's /metrics: workqueue, reconcile and wake-cause families",
      async () => {
        const res = await fetch(`${manager.metricsURL}/metrics`);
        const text = await res.text();
        assert.equal(res.status, 200);
        for (
          const family of [
            /^workqueue_depth\{[^}]*name="crdconversionconfig"[^}]*\} \d+/m,
            /^workqueue_adds_total\{[^}]*name="conversionwebhookserver"[^}]*\} [1-9]/m,
            /^workqueue_work_duration_seconds_bucket\{/m,
            /^controller_runtime_reconcile_total\{[^}]*controller="crdconversionconfig"[^}]*result="success"[^}]*\} [1-9]/m,
            /^controller_runtime_reconcile_time_seconds_bucket\{/m,
            /^dco_operator_wake_total\{[^}]*cause="watch"[^}]*\} [1-9]/m,
            /^dco_manager_phase_transitions_total\{/m,
          ]
        ) assert.match(text, family);
        // A sample for the record (the closing note shows one).
        const sample = text.split("\n").filter((l) =>
          /^(workqueue_(depth|adds_total)|controller_runtime_reconcile_total|dco_operator_wake_total)\{/
            .test(l)
        );
        console.log(`manager /metrics sample:\n${sample.join("\n")}`);
      },
    );
  }, { name: "end-to-end", kubelet: webhookServerKubelet(IMAGE) }),
});
