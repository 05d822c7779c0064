/**
 * The manager role as a real process, under exactly its Deno permission flags, against a real
 * kube-apiserver (no kubelet, no controller-manager): a ConversionWebhookServer gets its Service
 * and Deployment; a valid CRDConversionConfig waits `Pending` (WebhookServerReady=False) with its
 * target untouched until the server is ready — the test plays the kubelet's part by writing the
 * Deployment's status and provides the TLS Secret — and is then `Applied`, with the CRD's
 * conversion pointing at the server's Service; an invalid config is `Invalid` with a classed
 * message and its target untouched.
 *
 * Not here: running webhook-server pods and converting objects through the Service (that needs
 * the pod-runner harness of a later step).
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { b64 } from "../support/certs.ts";
import {
  type ControlPlane,
  freePort,
  waitFor,
  withControlPlane,
} from "../support/control_plane.ts";
import {
  admissionCertificate,
  fieldRenameConfig,
  findCondition as cond,
  installDcoCRDs,
  kubectlFor,
  startManager,
  tryGetJSON,
  twoVersionCRD,
  webhookServer,
} from "../support/dco_stack.ts";
import { httpGet } from "../support/role_process.ts";

const GROUP = "mgr.dco.test";
const CWS = "dco";
const SVC = `${CWS}-webhook-server`;

/** A CRD serving v1 (`size`, storage) and v2 (`capacity`). */
const twoVersions = (plural: string, kind: string) => twoVersionCRD({ group: GROUP, plural, kind });

/** A CRDConversionConfig renaming v1's `spec.size` to v2's `spokePath`. */
const config = (name: string, target: string, spokePath: string) =>
  fieldRenameConfig({ kind: "CRDConversionConfig", name, target, spokePath });

const get = httpGet;

Deno.test({
  name: "manager process: CWS children, the readiness gate, apply and an invalid config",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: withControlPlane(async (cp: ControlPlane, t) => {
    await installDcoCRDs(cp);
    const ns = await cp.createNamespace("dco-system");
    const { certDir, ca } = await admissionCertificate(cp, "dco-mgr-ca");

    const widgets = `widgets.${GROUP}`;
    const gizmos = `gizmos.${GROUP}`;
    await cp.apply(twoVersions("widgets", "Widget"));
    await cp.apply(twoVersions("gizmos", "Gizmo"));
    await cp.waitForCRD(widgets);
    await cp.waitForCRD(gizmos);
    await cp.apply(
      webhookServer(CWS, { default: true, certificate: { issuerRef: { name: "x" } } }),
    );
    await cp.apply(config("widgets", widgets, "spec.capacity"));

    const admissionPort = freePort();
    await using role = startManager(cp, {
      certDir,
      namespace: ns,
      admissionPort,
      certificateMode: "existing-secret",
      features: { xrd: false },
      leaderElect: true,
      logLevel: "debug",
    });
    const { kubectl, getJSON } = kubectlFor(cp, { diagnostics: () => role.output() });
    const crdConfig = (name: string) => getJSON("crdconversionconfigs.terasky.com", name);

    await t.step("health, readiness and admission listeners", async () => {
      await waitFor("readyz", async () => (await get(`${role.healthURL}/readyz`)).status === 200, {
        timeoutMs: 60_000,
      });
      assert.equal((await get(`${role.healthURL}/healthz`)).status, 200);
      assert.match(role.output(), /informer caches scoped/);
      assert.match(role.output(), /admission webhooks serving/);
      const client = Deno.createHttpClient({ caCerts: [ca.cert] });
      try {
        const res = await fetch(
          `https://127.0.0.1:${admissionPort}/validate-terasky-com-v1alpha1-conversionwebhookserver`,
          { method: "POST", body: "{}", headers: { "content-type": "application/json" }, client },
        );
        await res.body?.cancel();
        assert.equal(res.status, 400, "not an AdmissionReview");
      } finally {
        client.close();
      }
    });

    await t.step("(a) the CWS children appear, owned by the CWS", async () => {
      const dep = await waitFor(
        "Deployment",
        () => tryGetJSON(cp, "deployment", SVC, "-n", ns),
        { timeoutMs: 60_000 },
      );
      const svc = await getJSON("service", SVC, "-n", ns);
      const cws = await getJSON("conversionwebhookservers.terasky.com", CWS);
      for (const child of [dep, svc]) {
        assert.deepEqual(child.metadata.ownerReferences, [{
          apiVersion: "terasky.com/v1alpha1",
          kind: "ConversionWebhookServer",
          name: CWS,
          uid: cws.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        }]);
        assert.equal(
          child.metadata.labels["app.kubernetes.io/managed-by"],
          "declarative-conversion-operator",
        );
      }
      assert.equal(dep.spec.template.spec.containers[0].name, "webhook-server");
      assert.ok(
        dep.spec.template.spec.containers[0].args.includes("--enable-xrd-support=false"),
        "the replicas mirror the manager's feature flags",
      );
      const status = await waitFor("CWS status", async () => {
        const s = await getJSON("conversionwebhookservers.terasky.com", CWS);
        return cond(s, "ServiceReady")?.status === "True" ? s : undefined;
      });
      assert.equal(cond(status, "Available").status, "False");
      assert.equal(cond(status, "CertificateReady").status, "False");
      assert.equal(status.status.endpoint, `https://${SVC}.${ns}.svc:443`);
    });

    await t.step("(b) not ready: Pending, WebhookServerReady=False, target untouched", async () => {
      await waitFor(
        "Pending",
        async () => (await crdConfig("widgets")).status?.phase === "Pending",
        {
          timeoutMs: 60_000,
        },
      );
      // Stays so (the 15 s requeue and any event re-check the gate).
      for (let i = 0; i < 10; i++) {
        const c = await crdConfig("widgets");
        assert.equal(c.status.phase, "Pending");
        assert.equal(cond(c, "Validated").status, "True");
        assert.equal(cond(c, "WebhookServerReady").status, "False");
        assert.equal(cond(c, "WebhookServerReady").reason, "ServerNotReady");
        const crd = await getJSON("crd", widgets);
        assert.equal(crd.spec.conversion.strategy, "None");
        await new Promise((r) => setTimeout(r, 200));
      }
    });

    await t.step("(c) once the server is ready the conversion is applied", async () => {
      const serving = await ca.issue({
        commonName: SVC,
        hosts: [`${SVC}.${ns}.svc`, `${SVC}.${ns}`, SVC],
      });
      await cp.apply({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: `${CWS}-webhook-server-tls`, namespace: ns },
        type: "kubernetes.io/tls",
        data: { "tls.crt": b64(serving.cert), "tls.key": b64(serving.key), "ca.crt": b64(ca.cert) },
      } as k8s.KubernetesObject);
      // Still gated: the Deployment is not available.
      assert.equal((await crdConfig("widgets")).status.phase, "Pending");
      assert.equal((await getJSON("crd", widgets)).spec.conversion.strategy, "None");
      const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
      await kubectl(
        "patch",
        "deployment",
        SVC,
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({
          status: {
            observedGeneration: 1,
            replicas: 2,
            updatedReplicas: 2,
            readyReplicas: 2,
            availableReplicas: 2,
            conditions: [{
              type: "Available",
              status: "True",
              reason: "MinimumReplicasAvailable",
              message: "Deployment has minimum availability.",
              lastUpdateTime: now,
              lastTransitionTime: now,
            }],
          },
        }),
      );
      const applied = await waitFor("Applied", async () => {
        const c = await crdConfig("widgets");
        return c.status?.phase === "Applied" ? c : undefined;
      }, { timeoutMs: 60_000 });
      assert.equal(cond(applied, "WebhookServerReady").status, "True");
      assert.equal(applied.status.assignedWebhookServer, CWS);
      assert.equal(applied.status.webhookURL, `https://${SVC}.${ns}.svc/convert/${widgets}`);
      const cws = await getJSON("conversionwebhookservers.terasky.com", CWS);
      assert.equal(cws.status.readyReplicas, 2);
      for (const type of ["Available", "ServiceReady", "CertificateReady"]) {
        assert.equal(cond(cws, type).status, "True", type);
      }
      const crd = await getJSON("crd", widgets);
      assert.equal(crd.spec.conversion.strategy, "Webhook");
      assert.deepEqual(crd.spec.conversion.webhook.clientConfig.service, {
        name: SVC,
        namespace: ns,
        path: `/convert/${widgets}`,
        port: 443,
      });
      assert.equal(crd.spec.conversion.webhook.clientConfig.caBundle, b64(ca.cert));
      // The apply came from Pending (the gate held until readiness), exactly once.
      const metrics = (await get(`${role.metricsURL}/metrics`)).text;
      assert.match(
        metrics,
        new RegExp(
          `dco_manager_phase_transitions_total\\{config_kind="crd",target="${widgets}",` +
            `from_phase="Pending",to_phase="Applied",reason="Applied"\\} 1\\n`,
        ),
      );
      assert.match(metrics, /controller_runtime_reconcile_total\{controller="crdconversionconfig"/);
      assert.match(
        metrics,
        /controller_runtime_reconcile_total\{controller="conversionwebhookserver"/,
      );
      assert.match(metrics, /dco_operator_wake_total\{controller="crdconversionconfig"/);
      assert.match(metrics, /dco_manager_apply_duration_seconds_count\{[^}]*result="success"/);
    });

    await t.step("(d) an invalid config is Invalid and its target untouched", async () => {
      await cp.apply(config("gizmos", gizmos, "spec.missing"));
      const invalid = await waitFor("Invalid", async () => {
        const c = await crdConfig("gizmos");
        return c.status?.phase === "Invalid" ? c : undefined;
      }, { timeoutMs: 60_000 });
      assert.match(invalid.status.message, /\[path-not-found\]/);
      assert.match(invalid.status.message, /spec\.missing/);
      assert.equal(cond(invalid, "Validated").status, "False");
      assert.equal((await getJSON("crd", gizmos)).spec.conversion.strategy, "None");
      const metrics = (await get(`${role.metricsURL}/metrics`)).text;
      assert.match(
        metrics,
        new RegExp(
          `dco_manager_analyze_failures_total\\{config_kind="crd",target="${gizmos}",` +
            `reason="ValidationErrors"\\} [1-9]`,
        ),
      );
    });

    await t.step("SIGTERM exits cleanly", async () => {
      role.child.kill("SIGTERM");
      const status = await role.child.status;
      assert.equal(status.code, 0, role.output().slice(-3000));
    });
  }),
});
