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
import type * as k8s from "@kubernetes/client-node";
import { b64, createCA } from "../support/certs.ts";
import {
  type ControlPlane,
  freePort,
  resolveAssets,
  waitFor,
  withControlPlane,
} from "../support/control_plane.ts";
import { DCO_CRDS } from "../support/dco_crds.ts";
import { type RoleProcess, startRoleProcess } from "../support/role_process.ts";
import { recordWatch } from "../support/watch_recorder.ts";

const REPO = new URL("../../", import.meta.url).pathname;
const GROUP = "e2e.dco.test";
const CWS = "dco";
const SVC = `${CWS}-webhook-server`;
const IMAGE = "dco.test/webhook-server:e2e";
const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
const RELEASE = "dco";
const CHART = `${REPO}charts/declarative-conversion-operator`;
const WIDGETS = `widgets.${GROUP}`;
const GIZMOS = `gizmos.${GROUP}`;

/** The webhook-server "image": what the Dockerfile's entrypoint runs, with its permissions. */
const WEBHOOK_SERVER_IMAGE = {
  entrypoint: [
    Deno.execPath(),
    "run",
    "--allow-net",
    "--allow-env",
    `--allow-read=/tls,${SA_DIR},${REPO}src`,
    `${REPO}src/main/webhook_server.ts`,
  ],
  env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
};

// deno-lint-ignore no-explicit-any
type Obj = any;

function crd(plural: string, kind: string, extraV1Field?: string) {
  const schema = (sizeField: string, extra?: string) => ({
    openAPIV3Schema: {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            [sizeField]: { type: "integer" },
            color: { type: "string" },
            ...(extra ? { [extra]: { type: "string" } } : {}),
          },
        },
      },
    },
  });
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        { name: "v1", served: true, storage: true, schema: schema("size", extraV1Field) },
        { name: "v2", served: true, storage: false, schema: schema("capacity") },
      ],
    },
  } as k8s.KubernetesObject;
}

function config(name: string, target: string, spokePath: string) {
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "CRDConversionConfig",
    metadata: { name },
    spec: {
      targetCRD: { name: target },
      hubVersion: "v1",
      spokes: [{
        version: "v2",
        rules: [{ strategy: "FieldRename", fieldRename: { hubPath: "spec.size", spokePath } }],
      }],
    },
  } as k8s.KubernetesObject;
}

/** The chart's ServiceAccounts and RBAC, rendered by helm for `namespace` and applied. */
async function applyChartRBAC(cp: ControlPlane, namespace: string): Promise<void> {
  const { helm } = await resolveAssets();
  assert.ok(helm, "helm is provided by hack/testenv.sh");
  const home = await cp.makeTempDir("helm");
  const out = await new Deno.Command(helm, {
    args: [
      "template",
      RELEASE,
      CHART,
      "--namespace",
      namespace,
      "--kube-version",
      "1.37.2",
      "--show-only",
      "templates/serviceaccount.yaml",
      "--show-only",
      "templates/rbac/clusterrole.yaml",
      "--show-only",
      "templates/rbac/clusterrolebinding.yaml",
    ],
    env: { HELM_CACHE_HOME: home, HELM_CONFIG_HOME: home, HELM_DATA_HOME: home },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  assert.ok(out.success, `helm template: ${dec.decode(out.stderr)}`);
  const file = `${home}/rbac.yaml`;
  await Deno.writeFile(file, out.stdout);
  const r = await cp.kubectl("apply", "--server-side", "-f", file);
  assert.equal(r.code, 0, `applying the chart's RBAC: ${r.stderr}`);
}

function startManager(
  cp: ControlPlane,
  opts: { certDir: string; namespace: string; admissionPort: number },
): RoleProcess & { metricsURL: string } {
  const metricsPort = freePort();
  const role = startRoleProcess(
    `${REPO}src/main/manager.ts`,
    ["--allow-net", "--allow-env", `--allow-read=${opts.certDir},${SA_DIR},${cp.kubeconfigPath}`],
    [
      `--kubeconfig=${cp.kubeconfigPath}`,
      `--operator-namespace=${opts.namespace}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${freePort()}`,
      `--webhook-cert-dir=${opts.certDir}`,
      `--webhook-bind-address=127.0.0.1:${opts.admissionPort}`,
      `--default-webhook-server-image=${IMAGE}`,
      "--certificate-mode=builtin",
      "--enable-xrd-support=false",
      "--zap-log-level=debug",
    ],
  );
  return Object.assign(role, { metricsURL: `http://127.0.0.1:${metricsPort}` });
}

Deno.test({
  name: "end to end: manager, webhook-server Pods, conversion on read through the apiserver",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: withControlPlane(async (cp: ControlPlane, t) => {
    for (const c of DCO_CRDS) await cp.apply(c);
    for (const c of DCO_CRDS) await cp.waitForCRD(c.metadata!.name!);
    const ns = await cp.createNamespace("dco-system");
    await applyChartRBAC(cp, ns);

    // The manager's admission listener gets a test certificate; the webhook servers' come from
    // the manager's built-in CA (no cert-manager here).
    const certDir = await cp.makeTempDir("mgr-tls");
    const ca = await createCA(certDir, "dco-e2e-ca");
    const admission = await ca.issue({ commonName: "dco-admission", hosts: ["127.0.0.1"] });
    await Deno.writeTextFile(`${certDir}/tls.crt`, admission.cert);
    await Deno.writeTextFile(`${certDir}/tls.key`, admission.key);
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
    await using manager = startManager(cp, { certDir, namespace: ns, admissionPort });
    const kubectl = async (...args: string[]): Promise<string> => {
      const r = await cp.kubectl(...args);
      assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
      return r.stdout;
    };
    const getJSON = async (...args: string[]): Promise<Obj> =>
      JSON.parse(await kubectl("get", ...args, "-o", "json"));
    const cond = (obj: Obj, type: string) =>
      (obj.status?.conditions ?? []).find((c: Obj) => c.type === type);
    const fail = async (msg: string) =>
      `${msg}\n--- manager ---\n${manager.output().split("\n").slice(-40).join("\n")}\n${await cp
        .kubelet!.allLogs(30)}`;

    await cp.apply({
      apiVersion: "terasky.com/v1alpha1",
      kind: "ConversionWebhookServer",
      metadata: { name: CWS },
      spec: {
        default: true,
        replicas: 2,
        serviceAccountName: "declarative-conversion-operator-webhook-server",
        certificate: { issuerRef: { name: "unused" } },
        rollout: { preStopSleepSeconds: 1, terminationGracePeriodSeconds: 35 },
      },
    } as k8s.KubernetesObject);
    await cp.apply(config("widgets", WIDGETS, "spec.capacity"));

    await t.step("the server's Deployment becomes two ready webhook-server Pods", async () => {
      const ready = await waitFor("CWS ready", async () => {
        const s = await getJSON("conversionwebhookservers.terasky.com", CWS);
        return s.status?.readyReplicas === 2 && cond(s, "Available")?.status === "True" &&
            cond(s, "ServiceReady")?.status === "True"
          ? s
          : undefined;
      }, { timeoutMs: 120_000 }).catch(async (e) => {
        throw new Error(await fail((e as Error).message));
      });
      assert.equal(cond(ready, "CertificateReady")?.status, "True");
      // Issued by the manager's own CA, whose Secret lives in the operator namespace.
      const tls = await getJSON("secret", `${SVC}-tls`, "-n", ns);
      const caSecret = await getJSON("secret", "dco-webhook-ca", "-n", ns);
      assert.equal(tls.data["ca.crt"], caSecret.data["tls.crt"]);
      const pods = (await getJSON("pods", "-n", ns, "-l", `app.kubernetes.io/instance=${CWS}`))
        .items;
      assert.equal(pods.length, 2);
      for (const p of pods) {
        assert.equal(p.status.phase, "Running");
        assert.match(p.status.podIP, /^10\.\d+\.\d+\.\d+$/);
        assert.match(await cp.kubelet!.podLog(ns, p.metadata.name), /"msg":".*ready/i);
      }
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
      const patched = crdWatch.events.find((e) =>
        e.object.spec?.conversion?.strategy === "Webhook"
      );
      const serverReady = cwsWatch.events.find((e) =>
        e.object.status?.readyReplicas > 0 &&
        ["Available", "ServiceReady", "CertificateReady"].every((t) =>
          cond(e.object, t)?.status === "True"
        )
      );
      assert.ok(patched, "the watch saw the patch");
      assert.ok(serverReady, "the watch saw the server ready");
      assert.ok(
        serverReady.rv < patched.rv,
        `server ready at revision ${serverReady.rv}, target patched at ${patched.rv}`,
      );
      assert.ok(
        crdWatch.events.filter((e) => e.rv < serverReady.rv)
          .every((e) => (e.object.spec?.conversion?.strategy ?? "None") === "None"),
        "no webhook stanza before the server was ready",
      );
    });

    const objNs = await cp.createNamespace("objects");
    await t.step("objects convert on read through the webhook-server Pods", async () => {
      await kubectl(
        "create",
        "-n",
        objNs,
        "-f",
        await writeJSON(cp, {
          apiVersion: `${GROUP}/v1`,
          kind: "Widget",
          metadata: { name: "w1" },
          spec: { size: 3, color: "red" },
        }),
      );
      const v2 = await waitFor("read at v2", async () => {
        const r = await cp.kubectl("get", `widgets.v2.${GROUP}`, "w1", "-n", objNs, "-o", "json");
        return r.code === 0 ? JSON.parse(r.stdout) : undefined;
      }, { timeoutMs: 30_000 });
      assert.equal(v2.apiVersion, `${GROUP}/v2`);
      assert.deepEqual(v2.spec, { capacity: 3, color: "red" });
      // Written at v2, stored at v1 (storage), read back at both.
      await kubectl(
        "create",
        "-n",
        objNs,
        "-f",
        await writeJSON(cp, {
          apiVersion: `${GROUP}/v2`,
          kind: "Widget",
          metadata: { name: "w2" },
          spec: { capacity: 7, color: "blue" },
        }),
      );
      const v1 = await getJSON(`widgets.v1.${GROUP}`, "w2", "-n", objNs);
      assert.deepEqual(v1.spec, { size: 7, color: "blue" });
      const list = await getJSON(`widgets.v2.${GROUP}`, "-n", objNs);
      assert.deepEqual(
        list.items.map((i: Obj) => [i.metadata.name, i.spec.capacity]),
        [["w1", 3], ["w2", 7]],
      );
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
        const path = (kind: string) => `/validate-terasky-com-v1alpha1-${kind}`;
        await cp.apply({
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingWebhookConfiguration",
          metadata: { name: "dco-e2e" },
          webhooks: [{
            name: "vcrdconversionconfig.terasky.com",
            admissionReviewVersions: ["v1"],
            sideEffects: "None",
            failurePolicy: "Fail",
            clientConfig: {
              url: `https://127.0.0.1:${admissionPort}${path("crdconversionconfig")}`,
              caBundle: b64(ca.cert),
            },
            rules: [{
              apiGroups: ["terasky.com"],
              apiVersions: ["v1alpha1"],
              operations: ["CREATE", "UPDATE"],
              resources: ["crdconversionconfigs"],
            }],
          }],
        } as k8s.KubernetesObject);
        const rejected = await waitFor("admission rejects", async () => {
          const file = await writeJSON(cp, config("rejected", WIDGETS, "spec.nowhere"));
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
        // A sample for the record (the issue's closing note shows one).
        const sample = text.split("\n").filter((l) =>
          /^(workqueue_(depth|adds_total)|controller_runtime_reconcile_total|dco_operator_wake_total)\{/
            .test(l)
        );
        console.log(`manager /metrics sample:\n${sample.join("\n")}`);
      },
    );
  }, { name: "end-to-end", kubelet: { images: { [IMAGE]: WEBHOOK_SERVER_IMAGE } } }),
});

async function writeJSON(cp: ControlPlane, obj: unknown): Promise<string> {
  const dir = await cp.makeTempDir("obj");
  const file = `${dir}/obj.json`;
  await Deno.writeTextFile(file, JSON.stringify(obj));
  return file;
}
