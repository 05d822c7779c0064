/**
 * [P11] The manager process with `--enable-xrd-support=true` against a real kube-apiserver, for
 * Crossplane CompositeResourceDefinitions (runtime §4.1 steps 1 and 12, §4.4, §4.6, §4.7).
 *
 * Crossplane's own controller does not run here, so THE TEST PLAYS CROSSPLANE'S PART (`_crossplane.ts`): it installs
 * a minimal stand-in of the XRD CRD (`testdata/crossplane_xrd_crd.yaml`; v2 rejects `claimNames`
 * like Crossplane 2.x), marks XRDs Established, renders the CRDs Crossplane would generate from an
 * XRD (composite, plus the claim CRD when the XRD offers claims, owned by the XRD) and, while
 * asked to, copies the XRD's `spec.conversion` into them (a small background loop). As in
 * `manager_test.ts`, it also plays the kubelet (the Deployment status) and provides the TLS Secret.
 *
 * Flow: the XRD is patched (exact stanza, annotations, written at v2) → GeneratedCRDNotFound →
 * NotPropagated once the CRD is rendered without the stanza → Propagated once copied; an
 * out-of-band revert of the XRD's conversion is re-applied and counted
 * (`dco_manager_conversion_reverts_total`); an XRD offering claims is written at v1 and both its
 * generated CRDs are verified; an invalid config leaves its XRD untouched; deleting a config
 * reverts its XRD. Converting objects through the Service is not part of this test.
 *
 * [P11] The XRD conversion guard (api §4.3): once a MutatingWebhookConfiguration points at the
 * manager's admission listener (URL clientConfig + caBundle, as the validating one is registered
 * in other tests), an establisher-like full-object UPDATE that drops `spec.conversion` and both
 * annotations is stored with them put back at admission (no caBundle: the next reconcile supplies
 * it) and is not counted as a revert; a write that sets a foreign webhook stays foreign (the
 * controller then counts and re-applies, as before).
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
  type Obj,
  startManager,
  twoVersionXRD,
  webhookServer,
} from "../support/dco_stack.ts";
import { httpGet } from "../support/role_process.ts";
import { isConflict, KubeClient, loadKubeconfig } from "../../src/kube/mod.ts";
import { FakeCrossplane, XRD_CRD, XRDS } from "./_crossplane.ts";

const GROUP = "xrd.dco.test";
const CWS = "dco";
const SVC = `${CWS}-webhook-server`;
const FIELD_MANAGER = "declarative-conversion-operator";

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

Deno.test({
  name: "manager process (XRD): patch, propagation into generated CRDs, revert detection, delete",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: withControlPlane(async (cp: ControlPlane, t) => {
    await installDcoCRDs(cp, [XRD_CRD]);
    const client = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
    const crossplane = new FakeCrossplane(client);
    try {
      const ns = await cp.createNamespace("dco-system");
      const { certDir, ca } = await admissionCertificate(cp, "dco-mgr-ca");

      const { kubectl, getJSON } = kubectlFor(cp);
      const getXRD = (name: string) => client.get(XRDS(), name) as Promise<Obj>;
      const xrdConfig = (name: string) => getJSON("xrdconversionconfigs.terasky.com", name);
      const establish = (name: string, version = "v2") => crossplane.establish(name, version);

      const nets = `xnets.${GROUP}`;
      const dbs = `xdbs.${GROUP}`;
      const gadgets = `xgadgets.${GROUP}`;
      await cp.apply(xrd("xnets", "XNet"));
      await establish(nets);
      await cp.apply(
        webhookServer(CWS, { default: true, certificate: { issuerRef: { name: "x" } } }),
      );
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
      crossplane.start();

      await t.step("readiness: the manager is ready, the server becomes ready", async () => {
        await waitFor(
          "readyz",
          async () => (await httpGet(`${role.healthURL}/readyz`)).status === 200,
          { timeoutMs: 60_000 },
        );
        assert.match(role.output(), /informer caches scoped.*generated CRDs/);
        await waitFor("Deployment", async () => {
          const r = await cp.kubectl("get", "deployment", SVC, "-n", ns, "-o", "json");
          return r.code === 0;
        }, { timeoutMs: 60_000 });
        const dep = await getJSON("deployment", SVC, "-n", ns);
        assert.ok(
          dep.spec.template.spec.containers[0].args.includes("--enable-xrd-support=true"),
          "the replicas mirror the manager's feature flags",
        );
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
          pem: new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0))),
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
          const annotated = xrd.metadata.annotations?.["conversion.terasky.com/plan-hash"];
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
        assert.equal(x.metadata.annotations["conversion.terasky.com/managed-by"], "nets");
        assert.equal(x.metadata.annotations["conversion.terasky.com/plan-hash"], planHash);
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
        const reverts = metric(
          "dco_manager_conversion_reverts_total",
          `config_kind="xrd",target="${nets}"`,
        );
        await waitFor("reverts_total", async () => (await metrics()).match(reverts)?.[1] === "1", {
          timeoutMs: 30_000,
        });
        const x = await waitFor("re-applied", async () => {
          const x = await getXRD(nets);
          return x.spec.conversion?.strategy === "Webhook" ? x : undefined;
        });
        assert.equal(x.metadata.annotations["conversion.terasky.com/managed-by"], "nets");
        assert.equal(x.spec.conversion.webhook.clientConfig.caBundle, (await servedCA()).b64);
        assert.match(role.output(), /out-of-band revert/);
        // Crossplane re-renders; the config ends Propagated again and the count stays 1.
        await waitFor("Propagated again", async () => {
          const c = await xrdConfig("nets");
          const gen = await getJSON("crd", nets);
          return cond(c, "ConversionPropagated")?.status === "True" &&
            gen.spec.conversion.strategy === "Webhook";
        }, { timeoutMs: 30_000 });
        await new Promise((r) => setTimeout(r, 1000));
        assert.equal((await metrics()).match(reverts)?.[1], "1");
        assert.equal((await xrdConfig("nets")).status.phase, "Applied");
      });

      await t.step(
        "(d2) the guard restores an establisher's full-object update at admission",
        async () => {
          const reverts = metric(
            "dco_manager_conversion_reverts_total",
            `config_kind="xrd",target="${nets}"`,
          );
          assert.equal((await metrics()).match(reverts)?.[1], "1");
          await cp.apply({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "MutatingWebhookConfiguration",
            metadata: { name: "dco-xrd-conversion-guard" },
            webhooks: [{
              name: "gxrdconversion.terasky.com",
              admissionReviewVersions: ["v1"],
              sideEffects: "None",
              failurePolicy: "Ignore",
              matchPolicy: "Equivalent",
              timeoutSeconds: 5,
              reinvocationPolicy: "IfNeeded",
              clientConfig: {
                url: `https://127.0.0.1:${admissionPort}/guard-xrd-conversion`,
                caBundle: b64(ca.cert),
              },
              rules: [{
                apiGroups: ["apiextensions.crossplane.io"],
                apiVersions: ["v1", "v2"],
                resources: ["compositeresourcedefinitions"],
                operations: ["CREATE", "UPDATE"],
                scope: "Cluster",
              }],
            }],
          } as k8s.KubernetesObject);
          /** The package's copy of the XRD: no spec.conversion, none of our annotations. */
          const stripped = (x: Obj): Obj => {
            const out = structuredClone(x);
            delete out.spec.conversion;
            delete out.metadata.annotations?.["conversion.terasky.com/managed-by"];
            delete out.metadata.annotations?.["conversion.terasky.com/plan-hash"];
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
          const planHashBefore = before.metadata.annotations["conversion.terasky.com/plan-hash"];
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
          assert.equal(stored.metadata.annotations["conversion.terasky.com/managed-by"], "nets");
          assert.equal(
            stored.metadata.annotations["conversion.terasky.com/plan-hash"],
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
          await new Promise((r) => setTimeout(r, 1000));
          assert.equal((await metrics()).match(reverts)?.[1], "1", "a guarded write is no revert");
          const x = await getXRD(nets);
          assert.equal(x.spec.conversion.strategy, "Webhook");
          assert.equal(x.metadata.annotations["conversion.terasky.com/managed-by"], "nets");
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
        // The controller's own revert handling (runtime §4.7) then counts it and re-applies.
        const reverts = metric(
          "dco_manager_conversion_reverts_total",
          `config_kind="xrd",target="${nets}"`,
        );
        await waitFor("counted", async () => (await metrics()).match(reverts)?.[1] === "2", {
          timeoutMs: 30_000,
        });
        await waitFor("re-applied", async () => {
          const x = await getXRD(nets);
          const c = await xrdConfig("nets");
          return x.spec.conversion?.webhook?.clientConfig?.service?.name === SVC &&
            x.metadata.annotations?.["conversion.terasky.com/managed-by"] === "nets" &&
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
        await cp.apply(config("gadgets", gadgets, "spec.missing"));
        const c = await waitFor("Invalid", async () => {
          const c = await xrdConfig("gadgets");
          return c.status?.phase === "Invalid" ? c : undefined;
        }, { timeoutMs: 60_000 });
        assert.match(c.status.message, /\[path-not-found\]/);
        assert.equal(cond(c, "Validated").status, "False");
        assert.equal(cond(c, "ConversionPropagated"), undefined, "only after an apply");
        assert.equal(cond(c, "PackageManaged").reason, "NotPackageManaged");
        const x = await getXRD(gadgets);
        assert.equal(x.spec.conversion, undefined);
        assert.equal(x.metadata.annotations, undefined);
        assert.ok(!x.metadata.managedFields.some((f: Obj) => f.manager === FIELD_MANAGER));
      });

      await t.step("(g) deleting the config reverts the XRD", async () => {
        await kubectl("delete", "xrdconversionconfigs.terasky.com", "nets", "--wait=false");
        const held = await waitFor("DeletionBlocked", async () => {
          const c = await xrdConfig("nets");
          return cond(c, "DeletionBlocked")?.status === "True" ? c : undefined;
        }, { timeoutMs: 30_000 });
        assert.equal(cond(held, "DeletionBlocked").reason, "MultipleServedVersions");
        assert.equal((await getXRD(nets)).spec.conversion.strategy, "Webhook");
        await kubectl(
          "annotate",
          "xrdconversionconfigs.terasky.com",
          "nets",
          "conversion.terasky.com/allow-unsafe-delete=true",
        );
        await waitFor("config gone", async () => {
          const r = await cp.kubectl("get", "xrdconversionconfigs.terasky.com", "nets");
          return r.code !== 0 && /NotFound/.test(r.stderr);
        }, { timeoutMs: 30_000 });
        const x = await getXRD(nets);
        assert.deepEqual(x.spec.conversion, { strategy: "None" });
        assert.equal(x.metadata.annotations?.["conversion.terasky.com/managed-by"], undefined);
        assert.equal(x.metadata.annotations?.["conversion.terasky.com/plan-hash"], undefined);
        const reverts = metric(
          "dco_manager_conversion_reverts_total",
          `config_kind="xrd",target="${nets}"`,
        );
        // 1 from (d), 1 from the foreign write of (d3); never during delete.
        assert.equal((await metrics()).match(reverts)?.[1], "2", "never during delete");
      });

      await t.step("SIGTERM exits cleanly", async () => {
        await crossplane.stop();
        assert.deepEqual(crossplane.errors.filter((e) => !/conflict/i.test(e)), []);
        role.child.kill("SIGTERM");
        const status = await role.child.status;
        assert.equal(status.code, 0, role.output().slice(-3000));
      });
    } finally {
      await crossplane.stop();
      client.close();
    }
  }),
});
