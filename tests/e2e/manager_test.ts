/**
 * The manager role as a real process, under exactly its Deno permission flags, against a real
 * kube-apiserver (no kubelet, no controller-manager), once for CRDs and once for Crossplane XRDs
 * (`--enable-xrd-support=true`). Both play the kubelet's part by writing the webhook server's
 * Deployment status, and provide the server's TLS Secret; the shared steps (listeners and
 * readiness, children mirroring the feature flags, the kubelet's part, an invalid config, SIGTERM)
 * are written once below and each flow adds the checks only its kind has.
 *
 * CRDs: a ConversionWebhookServer gets its Service and Deployment; a valid CRDConversionConfig
 * waits `Pending` (WebhookServerReady=False) with its target untouched until the server is ready
 * and is then `Applied`, with the CRD's conversion pointing at the server's Service; an invalid
 * config is `Invalid` with a classed message and its target untouched.
 *
 * XRDs: Crossplane's own controller does not run here, so the test plays its part
 * (`_crossplane.ts`): a minimal stand-in of the XRD CRD (v2 rejects `claimNames` like Crossplane
 * 2.x), XRDs marked Established, the CRDs Crossplane would generate from an XRD (composite, plus
 * the claim CRD when the XRD offers claims, owned by the XRD) and, while asked to, the XRD's
 * `spec.conversion` copied into them. Flow: the XRD is patched (exact stanza, annotations, written
 * at v2) → GeneratedCRDNotFound → NotPropagated once the CRD is rendered without the stanza →
 * Propagated once copied; an out-of-band revert of the XRD's conversion is re-applied and counted
 * (`dco_manager_conversion_reverts_total`); an XRD offering claims is written at v1 and both its
 * generated CRDs are verified; an invalid config leaves its XRD untouched; deleting a config
 * reverts its XRD.
 *
 * The XRD conversion guard (XRD only): once a MutatingWebhookConfiguration points at the
 * manager's admission listener (URL clientConfig + caBundle, as the validating one is registered
 * in other tests), an establisher-like full-object UPDATE that drops `spec.conversion` and both
 * annotations is stored with them put back at admission (no caBundle: the next reconcile supplies
 * it) and is not counted as a revert; a write that sets a foreign webhook stays foreign (the
 * controller then counts and re-applies, as before).
 *
 * Not here: running webhook-server Pods and converting objects through the Service
 * (end_to_end_test.ts does that).
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { b64, type CertificateAuthority } from "../support/certs.ts";
import {
  assertStays,
  type ControlPlane,
  e2eTest,
  freePort,
  waitFor,
} from "../support/control_plane.ts";
import {
  admissionCertificate,
  fieldRenameConfig,
  findCondition as cond,
  installDcoCRDs,
  kubectlFor,
  type ManagerProcess,
  type Obj,
  startManager,
  tryGetJSON,
  twoVersionXRD,
  webhookServer,
  xrdGuardWebhookConfiguration,
} from "../support/dco_stack.ts";
import { httpGet } from "../support/role_process.ts";
import { markServerAvailable, provideServingSecret } from "../support/server_stand_in.ts";
import { isConflict, KubeClient, loadKubeconfig } from "../../src/kube/mod.ts";
import { FakeCrossplane, XRDS } from "./_crossplane.ts";
import { crdTarget, MANAGED_BY, PLAN_HASH, type TargetKind, xrdTarget } from "./_targets.ts";
import { base64ToText } from "../../src/lib/mod.ts";

const CWS = "dco";
const SVC = `${CWS}-webhook-server`;
const FIELD_MANAGER = "declarative-conversion-operator";

// ---------------------------------------------------------------------------------------------
// The steps both kinds share

/** dco's CRDs (and the target kind's), the operator namespace and the admission certificate. */
async function managerStack(cp: ControlPlane, target: TargetKind) {
  await installDcoCRDs(cp, target.extraCRDs);
  const ns = await cp.createNamespace("dco-system");
  const { certDir, ca } = await admissionCertificate(cp, "dco-mgr-ca");
  return { ns, certDir, ca };
}

/** Waits for /readyz, then: /healthz, the informer caches' log line (`caches`), admission. */
async function assertListeners(
  role: ManagerProcess,
  admissionPort: number,
  ca: CertificateAuthority,
  caches: RegExp,
): Promise<void> {
  await waitFor("readyz", async () => (await httpGet(`${role.healthURL}/readyz`)).status === 200, {
    timeoutMs: 60_000,
  });
  assert.equal((await httpGet(`${role.healthURL}/healthz`)).status, 200);
  assert.match(role.output(), caches);
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
}

/** Waits for server CWS's Deployment; asserts its replicas mirror the manager's feature flags. */
async function serverDeployment(cp: ControlPlane, ns: string, target: TargetKind): Promise<Obj> {
  const dep = await waitFor(
    "Deployment",
    () => tryGetJSON(cp, "deployment", SVC, "-n", ns),
    { timeoutMs: 60_000 },
  );
  assert.equal(dep.spec.template.spec.containers[0].name, "webhook-server");
  assert.ok(
    dep.spec.template.spec.containers[0].args.includes(
      `--enable-xrd-support=${target.features.xrd}`,
    ),
    "the replicas mirror the manager's feature flags",
  );
  return dep;
}

/** Applies `config`, waits until it is Invalid; asserts the classed message. */
async function assertInvalid(
  cp: ControlPlane,
  target: TargetKind,
  config: k8s.KubernetesObject,
): Promise<Obj> {
  await cp.apply(config);
  const { getJSON } = kubectlFor(cp);
  const invalid = await waitFor("Invalid", async () => {
    const c = await getJSON(target.configResource, config.metadata!.name!);
    return c.status?.phase === "Invalid" ? c : undefined;
  }, { timeoutMs: 60_000 });
  assert.match(invalid.status.message, /\[path-not-found\]/);
  assert.equal(cond(invalid, "Validated").status, "False");
  return invalid;
}

/** SIGTERM: the manager exits 0. */
async function assertCleanExit(role: ManagerProcess): Promise<void> {
  role.child.kill("SIGTERM");
  const status = await role.child.status;
  assert.equal(status.code, 0, role.output().slice(-3000));
}

// ---------------------------------------------------------------------------------------------
// CRDs

const crds = crdTarget("mgr.dco.test");

e2eTest(
  "manager process: CWS children, the readiness gate, apply and an invalid config",
  async (cp: ControlPlane, t) => {
    const { ns, certDir, ca } = await managerStack(cp, crds);
    await using targets = await crds.open(cp);
    const widgets = `widgets.${crds.group}`;
    const gizmos = `gizmos.${crds.group}`;
    await targets.create(crds.named("widgets", "Widget"), crds.named("gizmos", "Gizmo"));
    await cp.apply(
      webhookServer(CWS, { default: true, certificate: { issuerRef: { name: "x" } } }),
    );
    await cp.apply(crds.config("widgets", widgets, "spec.capacity"));

    const admissionPort = freePort();
    await using role = startManager(cp, {
      certDir,
      namespace: ns,
      admissionPort,
      certificateMode: "existing-secret",
      features: crds.features,
      leaderElect: true,
      logLevel: "debug",
    });
    const kubectl = kubectlFor(cp, { diagnostics: () => role.output() });
    const { getJSON } = kubectl;
    const crdConfig = (name: string) => getJSON(crds.configResource, name);
    const metrics = async () => (await httpGet(`${role.metricsURL}/metrics`)).text;

    await t.step("health, readiness and admission listeners", async () => {
      await assertListeners(role, admissionPort, ca, /informer caches scoped/);
      // The caches' families are wired in the process (docs/observability.md#informer-metrics).
      const text = await metrics();
      assert.match(
        text,
        /^dco_informer_last_sync_timestamp_seconds\{resource="deployments\.apps"\} \d/m,
      );
      assert.match(
        text,
        /^dco_watch_map_list_errors_total\{map_func="conversionwebhookserver\.enqueueAllServers"\} 0$/m,
      );
    });

    await t.step("(a) the CWS children appear, owned by the CWS", async () => {
      const dep = await serverDeployment(cp, ns, crds);
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
        { timeoutMs: 60_000 },
      );
      // Stays so (the 15 s requeue and any event re-check the gate).
      await assertStays(async () => {
        const c = await crdConfig("widgets");
        assert.equal(c.status.phase, "Pending");
        assert.equal(cond(c, "Validated").status, "True");
        assert.equal(cond(c, "WebhookServerReady").status, "False");
        assert.equal(cond(c, "WebhookServerReady").reason, "ServerNotReady");
        const crd = await getJSON("crd", widgets);
        assert.equal(crd.spec.conversion.strategy, "None");
      }, { forMs: 2_000, everyMs: 200, what: "Pending with the target untouched" });
    });

    await t.step("(c) once the server is ready the conversion is applied", async () => {
      await provideServingSecret(cp, ca, ns, CWS);
      // Still gated: the Deployment is not available.
      assert.equal((await crdConfig("widgets")).status.phase, "Pending");
      assert.equal((await getJSON("crd", widgets)).spec.conversion.strategy, "None");
      await markServerAvailable(kubectl, ns, CWS);
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
      const m = await metrics();
      assert.match(
        m,
        new RegExp(
          `dco_manager_phase_transitions_total\\{config_kind="crd",target="${widgets}",` +
            `from_phase="Pending",to_phase="Applied",reason="Applied"\\} 1\\n`,
        ),
      );
      assert.match(m, /controller_runtime_reconcile_total\{controller="crdconversionconfig"/);
      assert.match(m, /controller_runtime_reconcile_total\{controller="conversionwebhookserver"/);
      assert.match(m, /dco_operator_wake_total\{controller="crdconversionconfig"/);
      assert.match(m, /dco_manager_apply_duration_seconds_count\{[^}]*result="success"/);
    });

    await t.step("(d) an invalid config is Invalid and its target untouched", async () => {
      const invalid = await assertInvalid(cp, crds, crds.config("gizmos", gizmos, "spec.missing"));
      assert.match(invalid.status.message, /spec\.missing/);
      assert.equal((await getJSON("crd", gizmos)).spec.conversion.strategy, "None");
      assert.match(
        await metrics(),
        new RegExp(
          `dco_manager_analyze_failures_total\\{config_kind="crd",target="${gizmos}",` +
            `reason="ValidationErrors"\\} [1-9]`,
        ),
      );
    });

    await t.step("SIGTERM exits cleanly", () => assertCleanExit(role));
  },
);

// ---------------------------------------------------------------------------------------------
// XRDs

const xrds = xrdTarget("xrd.dco.test");
const GROUP = xrds.group;

/** An XRD with v1 (`size`) and v2 (`capacity`, referenceable); `claim` ⇒ legacy, at v1. */
const xrd = (plural: string, kind: string, claimNames?: { plural: string; kind: string }) =>
  twoVersionXRD({ group: GROUP, plural, kind, referenceable: "v2", claimNames });

/** An XRDConversionConfig with hub v2 renaming `spec.capacity` to v1's `spokePath`. */
const config = (name: string, target: string, spokePath: string) =>
  fieldRenameConfig({
    kind: "XRDConversionConfig",
    name,
    target,
    hubVersion: "v2",
    spokeVersion: "v1",
    hubPath: "spec.capacity",
    spokePath,
  });

async function sha256Hex(s: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)));
  return "sha256:" + [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

e2eTest(
  "manager process (XRD): patch, propagation into generated CRDs, revert detection, delete",
  async (cp: ControlPlane, t) => {
    const { ns, certDir, ca } = await managerStack(cp, xrds);
    const client = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
    const crossplane = new FakeCrossplane(client);
    try {
      const kubectlAt = kubectlFor(cp);
      const { kubectl, getJSON } = kubectlAt;
      const getXRD = (name: string) => client.get(XRDS(), name) as Promise<Obj>;
      const xrdConfig = (name: string) => getJSON(xrds.configResource, name);
      const establish = (name: string, version = "v2") => crossplane.establish(name, version);

      const nets = `xnets.${GROUP}`;
      const dbs = `xdbs.${GROUP}`;
      const gadgets = `xgadgets.${GROUP}`;
      await cp.apply(xrd("xnets", "XNet"));
      await establish(nets);
      await cp.apply(
        webhookServer(CWS, { default: true, certificate: { issuerRef: { name: "x" } } }),
      );
      await provideServingSecret(cp, ca, ns, CWS);
      await cp.apply(config("nets", nets, "spec.size"));

      const admissionPort = freePort();
      await using role = startManager(cp, {
        certDir,
        namespace: ns,
        admissionPort,
        features: { xrd: true },
        leaderElect: true,
        logLevel: "debug",
      });
      const metrics = async () => (await httpGet(`${role.metricsURL}/metrics`)).text;
      const metric = (name: string, labels: string) =>
        new RegExp(`^${escape(name)}\\{${escape(labels)}\\} (\\S+)$`, "m");
      const reverts = metric(
        "dco_manager_conversion_reverts_total",
        `config_kind="xrd",target="${nets}"`,
      );
      crossplane.start();

      await t.step("readiness: the manager is ready, the server becomes ready", async () => {
        await assertListeners(role, admissionPort, ca, /informer caches scoped.*generated CRDs/);
        await serverDeployment(cp, ns, xrds);
        await markServerAvailable(kubectlAt, ns, CWS);
      });

      /**
       * The CA the manager reads (`ca.crt`, else `tls.crt`, of the server's TLS Secret), base64.
       * Read back rather than assumed: depending on the certificate mode the manager may issue
       * that Secret itself instead of using the one this test provided.
       */
      const servedCA = async (): Promise<{ b64: string; pem: string }> => {
        const secret = await getJSON("secret", `${CWS}-webhook-server-tls`, "-n", ns);
        const data = secret.data["ca.crt"] || secret.data["tls.crt"];
        return {
          b64: data,
          pem: base64ToText(data),
        };
      };

      let planHash = "";
      await t.step("(a) the XRD is patched at v2; its generated CRD is not there yet", async () => {
        // Applying spec.conversion bumps the XRD's generation, which is part of the schema hash:
        // the next reconcile re-stamps the annotation. Wait for that steady state: the status
        // observed the XRD's current generation and the XRD carries the same hash.
        const applied = await waitFor("Applied", async () => {
          const c = await xrdConfig("nets");
          const xrd = await getXRD(nets);
          const annotated = xrd.metadata.annotations?.[PLAN_HASH];
          return c.status?.phase === "Applied" &&
              cond(c, "ConversionPropagated") !== undefined &&
              c.status.observedXRDGeneration === xrd.metadata.generation &&
              annotated === c.status.schemaHash
            ? c
            : undefined;
        }, { timeoutMs: 60_000 });
        planHash = applied.status.schemaHash;
        assert.match(planHash, /^sha256:/);
        assert.equal(applied.status.lastAppliedPlanHash, planHash);
        assert.equal(applied.status.webhookPort, 443);
        assert.equal(applied.status.webhookURL, `https://${SVC}.${ns}.svc/convert/${nets}`);
        assert.equal(cond(applied, "XRDHealthy").reason, "Established");
        assert.equal(cond(applied, "PackageManaged").status, "False");
        assert.equal(cond(applied, "PackageManaged").reason, "NotPackageManaged");
        const prop = cond(applied, "ConversionPropagated");
        assert.equal(prop.status, "False");
        assert.equal(prop.reason, "GeneratedCRDNotFound", prop.message);
        assert.equal(applied.status.generatedCRDs.length, 1);
        assert.equal(applied.status.generatedCRDs[0].name, nets);
        assert.equal(applied.status.generatedCRDs[0].role, "composite");
        assert.equal(applied.status.generatedCRDs[0].propagated, false);

        const x = await getXRD(nets);
        assert.deepEqual(x.spec.conversion, {
          strategy: "Webhook",
          webhook: {
            clientConfig: {
              service: { name: SVC, namespace: ns, path: `/convert/${nets}`, port: 443 },
              caBundle: (await servedCA()).b64,
            },
            conversionReviewVersions: ["v1"],
          },
        });
        assert.equal(x.metadata.annotations[MANAGED_BY], "nets");
        assert.equal(x.metadata.annotations[PLAN_HASH], planHash);
        const ours = x.metadata.managedFields.filter((f: Obj) => f.manager === FIELD_MANAGER);
        assert.equal(ours.length, 1);
        assert.equal(ours[0].operation, "Apply");
        assert.equal(ours[0].apiVersion, "apiextensions.crossplane.io/v2", "written at v2");
        const m = await metrics();
        assert.equal(
          m.match(metric("dco_manager_conversion_propagated", `target="${nets}"`))?.[1],
          "0",
        );
        assert.doesNotMatch(m, /^dco_manager_conversion_reverts_total\{/m, "never on first apply");
      });

      await t.step("(b) rendered without the stanza → NotPropagated", async () => {
        crossplane.render.add(nets);
        const c = await waitFor("NotPropagated", async () => {
          const c = await xrdConfig("nets");
          return cond(c, "ConversionPropagated")?.reason === "NotPropagated" ? c : undefined;
        }, { timeoutMs: 30_000 });
        assert.match(cond(c, "ConversionPropagated").message, /"None"/);
        assert.equal(c.status.generatedCRDs[0].propagated, false);
        assert.equal(c.status.generatedCRDs[0].observedCABundleHash, "");
        assert.equal((await getJSON("crd", nets)).spec.conversion.strategy, "None");
      });

      await t.step("(c) Crossplane copies the stanza → Propagated", async () => {
        crossplane.copy.add(nets);
        const c = await waitFor("Propagated", async () => {
          const c = await xrdConfig("nets");
          return cond(c, "ConversionPropagated")?.status === "True" ? c : undefined;
        }, { timeoutMs: 30_000 });
        assert.equal(cond(c, "ConversionPropagated").reason, "Propagated");
        assert.equal(c.status.generatedCRDs[0].propagated, true);
        assert.equal(c.status.generatedCRDs[0].message ?? "", "");
        assert.equal(
          c.status.generatedCRDs[0].observedCABundleHash,
          await sha256Hex((await servedCA()).pem),
        );
        assert.equal((await getJSON("crd", nets)).spec.conversion.strategy, "Webhook");
        const m = await waitFor("gauge 1", async () => {
          const m = await metrics();
          return m.match(metric("dco_manager_conversion_propagated", `target="${nets}"`))?.[1] ===
              "1"
            ? m
            : undefined;
        });
        assert.equal(
          m.match(metric("dco_manager_propagation_lag_seconds_count", `target="${nets}"`))?.[1],
          "1",
        );
        assert.doesNotMatch(m, /^dco_manager_conversion_reverts_total\{/m);
      });

      await t.step("(d) an out-of-band revert is re-applied and counted", async () => {
        // A full-object write like Crossplane's package establisher: the stanza and our
        // annotations are gone.
        await client.patch(XRDS(), nets, [
          { op: "replace", path: "/spec/conversion", value: { strategy: "None" } },
          { op: "remove", path: "/metadata/annotations" },
        ], { type: "json", fieldManager: "package-establisher" });
        await waitFor("reverts_total", async () => (await metrics()).match(reverts)?.[1] === "1", {
          timeoutMs: 30_000,
        });
        const x = await waitFor("re-applied", async () => {
          const x = await getXRD(nets);
          return x.spec.conversion?.strategy === "Webhook" ? x : undefined;
        });
        assert.equal(x.metadata.annotations[MANAGED_BY], "nets");
        assert.equal(x.spec.conversion.webhook.clientConfig.caBundle, (await servedCA()).b64);
        assert.match(role.output(), /out-of-band revert/);
        // Crossplane re-renders; the config ends Propagated again and the count stays 1.
        await waitFor("Propagated again", async () => {
          const c = await xrdConfig("nets");
          const gen = await getJSON("crd", nets);
          return cond(c, "ConversionPropagated")?.status === "True" &&
            gen.spec.conversion.strategy === "Webhook";
        }, { timeoutMs: 30_000 });
        await assertStays(async () => {
          assert.equal((await metrics()).match(reverts)?.[1], "1");
          assert.equal((await xrdConfig("nets")).status.phase, "Applied");
        }, { forMs: 1_000, what: "one revert, Applied" });
      });

      await t.step(
        "(d2) the guard restores an establisher's full-object update at admission",
        async () => {
          assert.equal((await metrics()).match(reverts)?.[1], "1");
          await cp.apply(xrdGuardWebhookConfiguration(admissionPort, ca.cert));
          /** The package's copy of the XRD: no spec.conversion, none of our annotations. */
          const stripped = (x: Obj): Obj => {
            const out = structuredClone(x);
            delete out.spec.conversion;
            delete out.metadata.annotations?.[MANAGED_BY];
            delete out.metadata.annotations?.[PLAN_HASH];
            delete out.metadata.managedFields;
            return out;
          };
          /** A full-object UPDATE (PUT) of the stored XRD edited by `edit`, retried on a conflict. */
          const replace = async (edit: (x: Obj) => Obj, dryRun = false): Promise<Obj> => {
            for (let attempt = 0;; attempt++) {
              try {
                return await client.update(XRDS(), edit(await getXRD(nets)), {
                  fieldManager: "package-establisher",
                  dryRun,
                }) as Obj;
              } catch (e) {
                if (!isConflict(e) || attempt >= 5) throw e;
              }
            }
          };
          // The apiserver picks the registration up asynchronously: probe with server dry runs.
          await waitFor(
            "guard live",
            async () => (await replace(stripped, true)).spec.conversion?.strategy === "Webhook",
            { timeoutMs: 30_000 },
          );
          const before = await getXRD(nets);
          assert.equal(before.spec.conversion.strategy, "Webhook");
          const planHashBefore = before.metadata.annotations[PLAN_HASH];
          // The real write: what was stored is the guard's restore (race-free: the PUT's answer).
          const stored = await replace(stripped);
          assert.deepEqual(stored.spec.conversion, {
            strategy: "Webhook",
            webhook: {
              clientConfig: {
                service: { name: SVC, namespace: ns, path: `/convert/${nets}`, port: 443 },
              },
              conversionReviewVersions: ["v1"],
            },
          }, "restored at admission, without a caBundle");
          assert.equal(stored.metadata.annotations[MANAGED_BY], "nets");
          assert.equal(
            stored.metadata.annotations[PLAN_HASH],
            planHashBefore,
          );
          assert.match(role.output(), /XRD conversion guard restored the conversion stanza/);
          // The controller supplies the caBundle again; the XRD was never without our stanza, so
          // nothing is counted.
          await waitFor("caBundle back", async () => {
            const x = await getXRD(nets);
            return x.spec.conversion?.webhook?.clientConfig?.caBundle === (await servedCA()).b64;
          }, { timeoutMs: 30_000 });
          await waitFor("Applied and Propagated", async () => {
            const c = await xrdConfig("nets");
            return c.status.phase === "Applied" &&
              cond(c, "ConversionPropagated")?.status === "True";
          }, { timeoutMs: 30_000 });
          await assertStays(async () => {
            assert.equal(
              (await metrics()).match(reverts)?.[1],
              "1",
              "a guarded write is no revert",
            );
          }, { forMs: 1_000, what: "the revert count" });
          const x = await getXRD(nets);
          assert.equal(x.spec.conversion.strategy, "Webhook");
          assert.equal(x.metadata.annotations[MANAGED_BY], "nets");
        },
      );

      await t.step("(d3) a write that sets a foreign webhook stays foreign", async () => {
        const foreign = {
          strategy: "Webhook",
          webhook: {
            clientConfig: {
              service: { name: "foreign-converter", namespace: ns, path: "/convert", port: 443 },
            },
            conversionReviewVersions: ["v1"],
          },
        };
        let stored: Obj | undefined;
        for (let attempt = 0; stored === undefined; attempt++) {
          const x = await getXRD(nets);
          x.spec.conversion = foreign;
          x.metadata.annotations = { "conversion.terasky.com/managed-by": "someone-else" };
          delete x.metadata.managedFields;
          try {
            stored = await client.update(XRDS(), x, { fieldManager: "someone-else" }) as Obj;
          } catch (e) {
            if (!isConflict(e) || attempt >= 5) throw e;
          }
        }
        // Not hijacked at admission: stored exactly as written.
        assert.deepEqual(stored.spec.conversion, foreign);
        assert.deepEqual(stored.metadata.annotations, {
          "conversion.terasky.com/managed-by": "someone-else",
        });
        // The controller then counts it as an out-of-band revert and re-applies, as in (d).
        await waitFor("counted", async () => (await metrics()).match(reverts)?.[1] === "2", {
          timeoutMs: 30_000,
        });
        await waitFor("re-applied", async () => {
          const x = await getXRD(nets);
          const c = await xrdConfig("nets");
          return x.spec.conversion?.webhook?.clientConfig?.service?.name === SVC &&
            x.metadata.annotations?.[MANAGED_BY] === "nets" &&
            c.status.phase === "Applied" && cond(c, "ConversionPropagated")?.status === "True";
        }, { timeoutMs: 30_000 });
      });

      await t.step("(e) an XRD offering claims is written at v1; both generated CRDs", async () => {
        const legacy = xrd("xdbs", "XDb", { plural: "dbs", kind: "Db" });
        await cp.apply(legacy);
        await establish(dbs, "v1");
        crossplane.render.add(dbs);
        crossplane.copy.add(dbs);
        await cp.apply(config("dbs", dbs, "spec.size"));
        const c = await waitFor("claim XRD Propagated", async () => {
          const c = await xrdConfig("dbs");
          return cond(c, "ConversionPropagated")?.status === "True" ? c : undefined;
        }, { timeoutMs: 60_000 });
        assert.equal(c.status.phase, "Applied");
        assert.deepEqual(
          c.status.generatedCRDs.map((g: Obj) => [g.name, g.role, g.propagated]),
          [[dbs, "composite", true], [`dbs.${GROUP}`, "claim", true]],
        );
        const x = await getXRD(dbs);
        const ours = x.metadata.managedFields.filter((f: Obj) => f.manager === FIELD_MANAGER);
        assert.deepEqual(ours.map((f: Obj) => f.apiVersion), ["apiextensions.crossplane.io/v1"]);
        assert.equal(x.spec.conversion.strategy, "Webhook");
        assert.deepEqual(x.spec.claimNames, { plural: "dbs", kind: "Db" });
        // Our stand-in rejects claims at v2, as Crossplane does: the v1 write is what made it.
        const r = await cp.kubectl(
          "patch",
          `compositeresourcedefinitions.v2.apiextensions.crossplane.io/${dbs}`,
          "--type=merge",
          "-p",
          JSON.stringify({ spec: { conversion: { strategy: "None" } } }),
        );
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /claimNames is not supported/);
      });

      await t.step("(f) an invalid config is Invalid and its XRD untouched", async () => {
        await cp.apply(xrd("xgadgets", "XGadget"));
        await establish(gadgets);
        const c = await assertInvalid(cp, xrds, config("gadgets", gadgets, "spec.missing"));
        assert.equal(cond(c, "ConversionPropagated"), undefined, "only after an apply");
        assert.equal(cond(c, "PackageManaged").reason, "NotPackageManaged");
        const x = await getXRD(gadgets);
        assert.equal(x.spec.conversion, undefined);
        assert.equal(x.metadata.annotations, undefined);
        assert.ok(!x.metadata.managedFields.some((f: Obj) => f.manager === FIELD_MANAGER));
      });

      await t.step("(g) deleting the config reverts the XRD", async () => {
        await kubectl("delete", xrds.configResource, "nets", "--wait=false");
        const held = await waitFor("DeletionBlocked", async () => {
          const c = await xrdConfig("nets");
          return cond(c, "DeletionBlocked")?.status === "True" ? c : undefined;
        }, { timeoutMs: 30_000 });
        assert.equal(cond(held, "DeletionBlocked").reason, "MultipleServedVersions");
        assert.equal((await getXRD(nets)).spec.conversion.strategy, "Webhook");
        await kubectl(
          "annotate",
          xrds.configResource,
          "nets",
          "conversion.terasky.com/allow-unsafe-delete=true",
        );
        await waitFor("config gone", async () => {
          const r = await cp.kubectl("get", xrds.configResource, "nets");
          return r.code !== 0 && /NotFound/.test(r.stderr);
        }, { timeoutMs: 30_000 });
        const x = await getXRD(nets);
        // The whole stanza goes, as it was before dco (Crossplane's v1 refuses `None`).
        assert.equal(x.spec.conversion, undefined);
        assert.equal(x.metadata.annotations?.[MANAGED_BY], undefined);
        assert.equal(x.metadata.annotations?.[PLAN_HASH], undefined);
        // 1 from (d), 1 from the foreign write of (d3); never during delete.
        assert.equal((await metrics()).match(reverts)?.[1], "2", "never during delete");
        // The legacy XRD offering claims is written at v1, whose schema admits a stanza only
        // with strategy Webhook and a webhook: its delete completes too, both CRDs back to None.
        await kubectl(
          "annotate",
          xrds.configResource,
          "dbs",
          "conversion.terasky.com/allow-unsafe-delete=true",
        );
        await kubectl("delete", xrds.configResource, "dbs", "--wait=false");
        await waitFor("claim XRD config gone", async () => {
          const r = await cp.kubectl("get", xrds.configResource, "dbs");
          return r.code !== 0 && /NotFound/.test(r.stderr);
        }, { timeoutMs: 30_000 });
        const legacy = await getXRD(dbs);
        assert.equal(legacy.spec.conversion, undefined);
        assert.equal(legacy.metadata.annotations?.[MANAGED_BY], undefined);
        assert.deepEqual(legacy.spec.claimNames, { plural: "dbs", kind: "Db" });
        for (const crd of [dbs, `dbs.${GROUP}`]) {
          await waitFor(`${crd} None`, async () => {
            const g = await getJSON("crd", crd);
            return g.spec.conversion.strategy === "None" && g.spec.conversion.webhook === undefined;
          }, { timeoutMs: 30_000 });
        }
      });

      await t.step("SIGTERM exits cleanly", async () => {
        await crossplane.stop();
        assert.deepEqual(crossplane.errors.filter((e) => !/conflict/i.test(e)), []);
        await assertCleanExit(role);
      });
    } finally {
      await crossplane.stop();
      client.close();
    }
  },
);
