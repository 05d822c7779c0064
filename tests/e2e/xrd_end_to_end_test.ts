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
import { KubeClient, loadKubeconfig } from "../../src/kube/client.ts";
import { FakeCrossplane, XRD_CRD, XRDS } from "./_crossplane.ts";

const REPO = new URL("../../", import.meta.url).pathname;
const GROUP = "xe2e.dco.test";
const CWS = "dco";
const SVC = `${CWS}-webhook-server`;
const IMAGE = "dco.test/webhook-server:e2e";
const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
const RELEASE = "dco";
const CHART = `${REPO}charts/declarative-conversion-operator`;
const WIDGETS = `xwidgets.${GROUP}`;
const GIZMOS = `xgizmos.${GROUP}`;

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

/** A (modern, Namespaced) XRD: v1 (`size`, referenceable ⇒ storage) and v2 (`capacity`). */
function xrd(plural: string, kind: string, extraV1Field?: string) {
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
    apiVersion: "apiextensions.crossplane.io/v2",
    kind: "CompositeResourceDefinition",
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { plural, kind },
      versions: [
        { name: "v1", served: true, referenceable: true, schema: schema("size", extraV1Field) },
        { name: "v2", served: true, referenceable: false, schema: schema("capacity") },
      ],
    },
  } as k8s.KubernetesObject;
}

function config(name: string, target: string, spokePath: string) {
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "XRDConversionConfig",
    metadata: { name },
    spec: {
      targetXRD: { name: target },
      hubVersion: "v1",
      spokes: [{
        version: "v2",
        rules: [{ strategy: "FieldRename", fieldRename: { hubPath: "spec.size", spokePath } }],
      }],
    },
  } as k8s.KubernetesObject;
}

/** The chart's ServiceAccounts and RBAC (XRD grants included), rendered by helm and applied. */
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
      "--set",
      "features.crossplane.enabled=true",
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
): RoleProcess {
  return startRoleProcess(
    `${REPO}src/main/manager.ts`,
    ["--allow-net", "--allow-env", `--allow-read=${opts.certDir},${SA_DIR},${cp.kubeconfigPath}`],
    [
      `--kubeconfig=${cp.kubeconfigPath}`,
      `--operator-namespace=${opts.namespace}`,
      `--metrics-bind-address=127.0.0.1:${freePort()}`,
      `--health-probe-bind-address=127.0.0.1:${freePort()}`,
      `--webhook-cert-dir=${opts.certDir}`,
      `--webhook-bind-address=127.0.0.1:${opts.admissionPort}`,
      `--default-webhook-server-image=${IMAGE}`,
      "--certificate-mode=builtin",
      "--enable-xrd-support=true",
      "--enable-crd-support=true",
      "--zap-log-level=debug",
    ],
  );
}

Deno.test({
  name: "end to end (XRD): manager, webhook-server Pods, XRs converted through the apiserver",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: withControlPlane(async (cp: ControlPlane, t) => {
    for (const c of [...DCO_CRDS, XRD_CRD]) await cp.apply(c);
    for (const c of [...DCO_CRDS, XRD_CRD]) await cp.waitForCRD(c.metadata!.name!);
    const ns = await cp.createNamespace("dco-system");
    await applyChartRBAC(cp, ns);
    const client = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
    const crossplane = new FakeCrossplane(client);
    try {
      // The manager's admission listener gets a test certificate; the webhook servers' come
      // from the manager's built-in CA (no cert-manager here).
      const certDir = await cp.makeTempDir("mgr-tls");
      const ca = await createCA(certDir, "dco-e2e-ca");
      const admission = await ca.issue({ commonName: "dco-admission", hosts: ["127.0.0.1"] });
      await Deno.writeTextFile(`${certDir}/tls.crt`, admission.cert);
      await Deno.writeTextFile(`${certDir}/tls.key`, admission.key);

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
      await using manager = startManager(cp, { certDir, namespace: ns, admissionPort });
      const kubectl = async (...args: string[]): Promise<string> => {
        const r = await cp.kubectl(...args);
        assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
        return r.stdout;
      };
      const getJSON = async (...args: string[]): Promise<Obj> =>
        JSON.parse(await kubectl("get", ...args, "-o", "json"));
      const getXRD = (name: string) =>
        getJSON(`compositeresourcedefinitions.v2.${XRDS().group}`, name);
      const xrdConfig = (name: string) => getJSON("xrdconversionconfigs.terasky.com", name);
      const cond = (obj: Obj, type: string) =>
        (obj.status?.conditions ?? []).find((c: Obj) => c.type === type);
      const fail = async (msg: string) =>
        `${msg}\n--- manager ---\n${manager.output().split("\n").slice(-40).join("\n")}\n${await cp
          .kubelet!.allLogs(30)}\n--- crossplane ---\n${crossplane.errors.slice(-5).join("\n")}`;
      const failing = async (e: unknown): Promise<never> => {
        throw new Error(await fail((e as Error).message));
      };

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

      await t.step(
        "the server's Deployment becomes two ready XRD-mode webhook-server Pods",
        async () => {
          const ready = await waitFor("CWS ready", async () => {
            const s = await getJSON("conversionwebhookservers.terasky.com", CWS);
            return s.status?.readyReplicas === 2 && cond(s, "Available")?.status === "True" &&
                cond(s, "ServiceReady")?.status === "True"
              ? s
              : undefined;
          }, { timeoutMs: 120_000 }).catch(failing);
          assert.equal(cond(ready, "CertificateReady")?.status, "True");
          const dep = await getJSON("deployment", SVC, "-n", ns);
          const args: string[] = dep.spec.template.spec.containers[0].args;
          assert.ok(args.includes("--enable-xrd-support=true"), args.join(" "));
          assert.ok(args.includes("--enable-crd-support=true"), args.join(" "));
          const pods = (await getJSON("pods", "-n", ns, "-l", `app.kubernetes.io/instance=${CWS}`))
            .items;
          assert.equal(pods.length, 2);
          for (const p of pods) {
            assert.equal(p.status.phase, "Running");
            assert.match(p.status.podIP, /^10\.\d+\.\d+\.\d+$/);
            assert.match(await cp.kubelet!.podLog(ns, p.metadata.name), /"msg":".*ready/i);
          }
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
          const patched = xrdWatch.events.find((e) =>
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
            `server ready at revision ${serverReady.rv}, XRD patched at ${patched.rv}`,
          );
          assert.ok(
            xrdWatch.events.filter((e) => e.rv < serverReady.rv)
              .every((e) => (e.object.spec?.conversion?.strategy ?? "None") === "None"),
            "no webhook stanza before the server was ready",
          );
        },
      );

      const objNs = await cp.createNamespace("objects");
      await t.step("XRs convert on read through the webhook-server Pods", async () => {
        // Only an XRDConversionConfig targets this group: the Pods convert with the plan they
        // derived from the XRD, on /convert/<xrd name>.
        const crdConfigs = await getJSON("crdconversionconfigs.terasky.com");
        assert.deepEqual(crdConfigs.items, []);
        await kubectl(
          "create",
          "-n",
          objNs,
          "-f",
          await writeJSON(cp, {
            apiVersion: `${GROUP}/v1`,
            kind: "XWidget",
            metadata: { name: "w1" },
            spec: { size: 3, color: "red" },
          }),
        );
        const v2 = await waitFor("read at v2", async () => {
          const r = await cp.kubectl(
            "get",
            `xwidgets.v2.${GROUP}`,
            "w1",
            "-n",
            objNs,
            "-o",
            "json",
          );
          return r.code === 0 ? JSON.parse(r.stdout) : undefined;
        }, { timeoutMs: 30_000 }).catch(failing);
        assert.equal(v2.apiVersion, `${GROUP}/v2`);
        assert.deepEqual(v2.spec, { capacity: 3, color: "red" });
        // Written at v2, stored at v1 (the referenceable version), read back at both.
        await kubectl(
          "create",
          "-n",
          objNs,
          "-f",
          await writeJSON(cp, {
            apiVersion: `${GROUP}/v2`,
            kind: "XWidget",
            metadata: { name: "w2" },
            spec: { capacity: 7, color: "blue" },
          }),
        );
        const v1 = await getJSON(`xwidgets.v1.${GROUP}`, "w2", "-n", objNs);
        assert.deepEqual(v1.spec, { size: 7, color: "blue" });
        const list = await getJSON(`xwidgets.v2.${GROUP}`, "-n", objNs);
        assert.deepEqual(
          list.items.map((i: Obj) => [i.metadata.name, i.spec.capacity]),
          [["w1", 3], ["w2", 7]],
        );
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
          await cp.apply({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingWebhookConfiguration",
            metadata: { name: "dco-xrd-e2e" },
            webhooks: [{
              name: "vxrdconversionconfig.terasky.com",
              admissionReviewVersions: ["v1"],
              sideEffects: "None",
              failurePolicy: "Fail",
              clientConfig: {
                url:
                  `https://127.0.0.1:${admissionPort}/validate-terasky-com-v1alpha1-xrdconversionconfig`,
                caBundle: b64(ca.cert),
              },
              rules: [{
                apiGroups: ["terasky.com"],
                apiVersions: ["v1alpha1"],
                operations: ["CREATE", "UPDATE"],
                resources: ["xrdconversionconfigs"],
              }],
            }],
          } as k8s.KubernetesObject);
          const rejected = await waitFor("admission rejects", async () => {
            const file = await writeJSON(cp, config("rejected", WIDGETS, "spec.nowhere"));
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
  }, { name: "xrd-end-to-end", kubelet: { images: { [IMAGE]: WEBHOOK_SERVER_IMAGE } } }),
});

async function writeJSON(cp: ControlPlane, obj: unknown): Promise<string> {
  const dir = await cp.makeTempDir("obj");
  const file = `${dir}/obj.json`;
  await Deno.writeTextFile(file, JSON.stringify(obj));
  return file;
}
