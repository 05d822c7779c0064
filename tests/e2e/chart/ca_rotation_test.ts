/**
 * The built-in CA rotates without an outage, against a real apiserver with real Pods: the chart
 * installed with `certificates.mode=builtin` (no cert-manager) runs the manager Pod and two
 * webhook-server Pods (tests/support/kubelet.ts); a CRD's conversion goes through them with the
 * caBundle the manager wrote, and the chart's ValidatingWebhookConfiguration (failurePolicy Fail)
 * goes to the manager Pod's self-issued admission certificate. The rotation clock runs in seconds
 * (`certificates.builtinCA.rotationCheckInterval=1s`, `rotationPropagationDelay=3s`) and the
 * rotation is started by hand with the annotation `conversion.terasky.com/rotate-ca` on
 * `dco-webhook-ca`.
 *
 * Under load all the while — readers listing the objects at the spoke version (every object
 * converted by the webhook-server Pods) and a writer sending dry-run ConversionWebhookServer
 * creates through the admission webhook — the test asserts:
 *
 * - every request succeeded (0 failed conversions, 0 failed admissions; the counts are logged);
 * - the CA Secret went Trusting → Reissuing → Retiring → done, and the new CA now signs alone;
 * - by etcd revision order: the CRD's caBundle carried the new CA before the first serving
 *   certificate of the new CA was written, and the old CA left the CA Secret's bundle only after
 *   every webhook-server replica reported serving a certificate of the new CA in its Lease;
 * - afterwards every caBundle (the CRD, the VWC) and every serving Secret's `ca.crt` hold only the
 *   new CA, and the replicas serve the re-issued leaf.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { type ControlPlane, e2eTest, waitFor } from "../../support/control_plane.ts";
import {
  fieldRenameConfig,
  findCondition as cond,
  kubectlFor,
  type Obj,
  twoVersionCRD,
  writeObjectFile,
} from "../../support/dco_stack.ts";
import { CHART, FULLNAME, helm } from "../../support/helm.ts";
import { roleImage } from "../../support/role_image.ts";
import { adminHttpClient, recordWatch } from "../../support/watch_recorder.ts";

const RELEASE = "dco";
const REGISTRY = "dco.test";
const TAG = "ca-rotation-e2e";
const MANAGER_IMAGE = `${REGISTRY}/manager:${TAG}`;
const WEBHOOK_SERVER_IMAGE = `${REGISTRY}/webhook-server:${TAG}`;
const CWS = "default";
const GROUP = "rotation.dco.test";
const GADGETS = `gadgets.${GROUP}`;
const OBJECTS = 5;
const ROTATE = "conversion.terasky.com/rotate-ca";
const PHASE = "conversion.terasky.com/ca-rotation-phase";
const COMPLETED = "conversion.terasky.com/ca-rotation-completed-at";
const SERIAL = "conversion.terasky.com/serving-certificate-serial";

/** The certificates of a base64 PEM bundle. */
function bundleOf(b64: string | undefined): X509Certificate[] {
  if (!b64) return [];
  const text = atob(b64);
  return [...text.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)]
    .map((m) => new X509Certificate(m[0]));
}

const serialOf = (c: X509Certificate) => c.serialNumber.toLowerCase().replace(/^0+(?=.)/, "");

/** Counts of one load loop. */
interface Load {
  ok: number;
  failed: number;
  failures: string[];
}

/** Runs `once` back to back until `signal` aborts; a false or a throw is a failure. */
async function loop(
  signal: AbortSignal,
  load: Load,
  once: () => Promise<string | undefined>,
): Promise<void> {
  while (!signal.aborted) {
    let problem: string | undefined;
    try {
      problem = await once();
    } catch (e) {
      problem = (e as Error).message;
    }
    if (problem === undefined) load.ok++;
    else {
      load.failed++;
      if (load.failures.length < 10) load.failures.push(`${new Date().toISOString()} ${problem}`);
    }
  }
}

e2eTest(
  "CA rotation: the built-in CA rotates under steady converted reads and admission writes, 0 failures",
  async (cp: ControlPlane, t) => {
    const ns = await cp.createNamespace("dco-rot");
    const { kubectl, getJSON } = kubectlFor(cp);
    const applyObj = async (obj: unknown) => {
      await kubectl("apply", "-f", await writeObjectFile(cp, obj));
    };
    const fail = async (e: unknown): Promise<never> => {
      throw new Error(`${(e as Error).message}\n${await cp.kubelet!.allLogs(40)}`);
    };
    let broken = false;
    const step = async (name: string, fn: () => Promise<void>) => {
      if (!await t.step({ name, ignore: broken, fn })) broken = true;
    };
    const caSecret = () => getJSON("secret", "dco-webhook-ca", "-n", ns);
    const tlsSecret = () => getJSON("secret", `${CWS}-webhook-server-tls`, "-n", ns);
    const VWC = `${FULLNAME}-validating-webhook-configuration`;

    await step("helm install: builtin certificates, rotation clock in seconds", async () => {
      const sets: Record<string, string> = {
        "image.registry": REGISTRY,
        "image.manager.repository": "manager",
        "image.manager.tag": TAG,
        "image.webhookServer.repository": "webhook-server",
        "image.webhookServer.tag": TAG,
        "certificates.mode": "builtin",
        "certManager.enabled": "false",
        "features.crossplane.enabled": "false",
        "conversionWebhookServer.rollout.preStopSleepSeconds": "1",
        "conversionWebhookServer.rollout.terminationGracePeriodSeconds": "35",
        "certificates.builtinCA.rotationCheckInterval": "1s",
        "certificates.builtinCA.rotationPropagationDelay": "3s",
      };
      const r = await helm(
        "install",
        RELEASE,
        CHART,
        "--namespace",
        ns,
        "--kubeconfig",
        cp.kubeconfigPath,
        ...Object.entries(sets).flatMap(([k, v]) => ["--set", `${k}=${v}`]),
      );
      assert.equal(r.code, 0, `helm install:\n${r.stdout}\n${r.stderr}`);
    });

    await step("the manager and two webhook-server Pods run; the VWC trusts the CA", async () => {
      await waitFor("CWS ready", async () => {
        const s = await getJSON("conversionwebhookservers.terasky.com", CWS);
        return s.status?.readyReplicas === 2 && cond(s, "Available")?.status === "True" &&
            cond(s, "CertificateReady")?.status === "True"
          ? s
          : undefined;
      }, { timeoutMs: 180_000 }).catch(fail);
      const ca = await caSecret();
      await waitFor("VWC caBundle", async () => {
        const vwc = await getJSON("validatingwebhookconfiguration", VWC);
        return vwc.webhooks.every((w: Obj) => w.clientConfig.caBundle === ca.data["ca.crt"])
          ? vwc
          : undefined;
      }, { timeoutMs: 60_000 }).catch(fail);
    });

    const objNs = await cp.createNamespace("gadgets");
    await step("a config is Applied and the objects convert", async () => {
      await applyObj(twoVersionCRD({ group: GROUP, plural: "gadgets", kind: "Gadget" }));
      await cp.waitForCRD(GADGETS);
      await applyObj(fieldRenameConfig({
        kind: "CRDConversionConfig",
        name: "gadgets",
        target: GADGETS,
        spokePath: "spec.capacity",
      }));
      await waitFor("gadgets Applied", async () => {
        const c = await getJSON("crdconversionconfigs.terasky.com", "gadgets");
        return c.status?.phase === "Applied" ? c : undefined;
      }, { timeoutMs: 90_000 }).catch(fail);
      for (let i = 0; i < OBJECTS; i++) {
        await applyObj({
          apiVersion: `${GROUP}/v1`,
          kind: "Gadget",
          metadata: { name: `g${i}`, namespace: objNs },
          spec: { size: i, color: "green" },
        });
      }
      await waitFor("read at v2", async () => {
        const r = await cp.kubectl("get", `gadgets.v2.${GROUP}`, "-n", objNs, "-o", "json");
        return r.code === 0 && JSON.parse(r.stdout).items.length === OBJECTS ? true : undefined;
      }, { timeoutMs: 30_000 }).catch(fail);
    });

    await step("the CA rotates under load with 0 failed conversions and admissions", async () => {
      const before = await caSecret();
      const [caA] = bundleOf(before.data["tls.crt"]);
      assert.equal(bundleOf(before.data["ca.crt"]).length, 1, "one CA before");
      await using crdWatch = await recordWatch(
        cp,
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldSelector=metadata.name=${GADGETS}`,
      );
      await using secretWatch = await recordWatch(cp, `/api/v1/namespaces/${ns}/secrets`);
      await using leaseWatch = await recordWatch(
        cp,
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases?labelSelector=conversion.terasky.com/webhook-server=${CWS}`,
      );

      // The load: two readers (every object converted on each list), one admission writer.
      const client = adminHttpClient(cp);
      const stop = new AbortController();
      const reads: Load = { ok: 0, failed: 0, failures: [] };
      const admissions: Load = { ok: 0, failed: 0, failures: [] };
      // A caBundle change is a CRD update: the apiserver rebuilds that CRD's storage and, for a
      // moment, answers 429 "storage is (re)initializing" with Retry-After before any conversion
      // runs. Clients (client-go, kubectl) retry it after Retry-After; so does this reader, and it
      // counts them apart. Any other answer than 200 is a failure.
      let reinitializing = 0;
      const read = async () => {
        let res: Response;
        let body: Obj;
        for (;;) {
          res = await fetch(`${cp.server}/apis/${GROUP}/v2/namespaces/${objNs}/gadgets`, {
            client,
          });
          body = await res.json();
          if (res.status !== 429 || !/storage is \(re\)initializing/.test(body.message)) break;
          reinitializing++;
          const after = Number(res.headers.get("retry-after") ?? "1");
          await new Promise((r) => setTimeout(r, 1000 * (Number.isFinite(after) ? after : 1)));
        }
        if (res.status !== 200) return `list at v2: HTTP ${res.status} ${body.message}`;
        const ok = body.items.length === OBJECTS &&
          body.items.every((g: Obj) => g.apiVersion === `${GROUP}/v2` && "capacity" in g.spec);
        return ok ? undefined : `list at v2: unconverted items ${JSON.stringify(body.items[0])}`;
      };
      let n = 0;
      const admit = async () => {
        const res = await fetch(
          `${cp.server}/apis/terasky.com/v1alpha1/conversionwebhookservers?dryRun=All`,
          {
            client,
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              apiVersion: "terasky.com/v1alpha1",
              kind: "ConversionWebhookServer",
              metadata: { name: `probe-${n++}` },
              // The ServiceAccount the chart's webhook-server policy admits.
              spec: { replicas: 1, serviceAccountName: `${FULLNAME}-webhook-server` },
            }),
          },
        );
        const body = await res.json();
        return res.status === 201 ? undefined : `admission: HTTP ${res.status} ${body.message}`;
      };
      const running = [
        loop(stop.signal, reads, read),
        loop(stop.signal, reads, read),
        loop(stop.signal, admissions, admit),
      ];
      const finish = async () => {
        stop.abort();
        await Promise.all(running);
        client.close();
      };
      try {
        await waitFor("the load to run before the rotation", () => {
          if (reads.ok > 0 && admissions.ok > 0) return true;
          throw new Error(
            `reads ${JSON.stringify(reads)}, admissions ${JSON.stringify(admissions)}`,
          );
        });
        const started = performance.now();
        await kubectl("annotate", "secret", "dco-webhook-ca", "-n", ns, `${ROTATE}=e2e`);
        const done = await waitFor("rotation completed", async () => {
          const s = await caSecret();
          const a = s.metadata.annotations ?? {};
          return a[COMPLETED] !== undefined && a[PHASE] === undefined ? s : undefined;
        }, { timeoutMs: 240_000, intervalMs: 500 }).catch(fail);
        const seconds = (performance.now() - started) / 1000;
        // Keep the load on a little after the old CA left the bundle.
        await new Promise((r) => setTimeout(r, 5_000));
        await finish();
        console.log(
          `CA rotation e2e: rotation took ${seconds.toFixed(1)} s; conversion list requests ` +
            `${reads.ok} ok / ${reads.failed} failed (${reads.ok * OBJECTS} objects converted; ` +
            `${reinitializing} answers 429 "storage is (re)initializing" retried after Retry-After); ` +
            `admission requests ${admissions.ok} ok / ${admissions.failed} failed`,
        );
        assert.deepEqual(reads.failures, [], "failed conversions");
        assert.deepEqual(admissions.failures, [], "failed admissions");
        assert.equal(reads.failed + admissions.failed, 0);

        // The new CA signs alone now.
        const [caB] = bundleOf(done.data["tls.crt"]);
        assert.notEqual(serialOf(caB), serialOf(caA), "a new CA");
        assert.deepEqual(bundleOf(done.data["ca.crt"]).map(serialOf), [serialOf(caB)]);

        // The steps, in order, on the CA Secret.
        const phases = secretWatch.events
          .filter((e) => e.object.metadata.name === "dco-webhook-ca")
          .map((e) => e.object.metadata.annotations?.[PHASE] ?? "Idle")
          .filter((p, i, all) => i === 0 || p !== all[i - 1]);
        assert.deepEqual(phases, ["Idle", "Trusting", "Reissuing", "Retiring", "Idle"]);

        // Trust before signing: the CRD's caBundle carried B before the first leaf from B.
        const hasB = (b64: string | undefined) =>
          bundleOf(b64).some((c) => serialOf(c) === serialOf(caB));
        const crdTrusts = crdWatch.events.find((e) =>
          hasB(e.object.spec?.conversion?.webhook?.clientConfig?.caBundle)
        );
        const leafFromB = secretWatch.events.find((e) =>
          e.object.metadata.name === `${CWS}-webhook-server-tls` &&
          bundleOf(e.object.data?.["tls.crt"])[0]?.verify(caB.publicKey)
        );
        assert.ok(crdTrusts && leafFromB, "the watches saw both");
        assert.ok(
          crdTrusts.rv < leafFromB.rv,
          `CRD trusted B at ${crdTrusts.rv}, leaf from B at ${leafFromB.rv}`,
        );

        // Retire after every replica served the new leaf.
        const leaf = bundleOf(leafFromB.object.data["tls.crt"])[0];
        const retired = secretWatch.events.find((e) =>
          e.object.metadata.name === "dco-webhook-ca" &&
          bundleOf(e.object.data?.["ca.crt"]).length === 1 &&
          serialOf(bundleOf(e.object.data["ca.crt"])[0]) === serialOf(caB)
        );
        assert.ok(retired, "the watch saw the retirement");
        const pods = (await getJSON("pods", "-n", ns, "-l", `app.kubernetes.io/instance=${CWS}`))
          .items.map((p: Obj) => p.metadata.name);
        assert.equal(pods.length, 2);
        for (const pod of pods) {
          const moved = leaseWatch.events.find((e) =>
            e.object.metadata.name === `dco-served-${pod}` &&
            e.object.metadata.annotations?.[SERIAL] === serialOf(leaf)
          );
          assert.ok(moved, `${pod} reported the new leaf`);
          assert.ok(moved.rv < retired.rv, `${pod} moved at ${moved.rv}, retired at ${retired.rv}`);
        }
      } finally {
        if (!stop.signal.aborted) await finish();
      }
    });

    await step("afterwards every caBundle and ca.crt holds only the new CA", async () => {
      const [caB] = bundleOf((await caSecret()).data["tls.crt"]);
      const only = (b64: string | undefined) => bundleOf(b64).map(serialOf);
      await waitFor("the bundles settle on the new CA", async () => {
        const crd = await getJSON("crd", GADGETS);
        const vwc = await getJSON("validatingwebhookconfiguration", VWC);
        const tls = await tlsSecret();
        const admission = await getJSON("secret", `${FULLNAME}-webhook-cert`, "-n", ns);
        const want = JSON.stringify([serialOf(caB)]);
        return JSON.stringify(only(crd.spec.conversion.webhook.clientConfig.caBundle)) === want &&
            vwc.webhooks.every((w: Obj) =>
              JSON.stringify(only(w.clientConfig.caBundle)) === want
            ) &&
            JSON.stringify(only(tls.data["ca.crt"])) === want &&
            JSON.stringify(only(admission.data["ca.crt"])) === want
          ? true
          : undefined;
      }, { timeoutMs: 60_000 }).catch(fail);
      const leaf = bundleOf((await tlsSecret()).data["tls.crt"])[0];
      assert.ok(leaf.verify(caB.publicKey), "the serving leaf is from the new CA");
      const admissionLeaf = bundleOf(
        (await getJSON("secret", `${FULLNAME}-webhook-cert`, "-n", ns)).data["tls.crt"],
      )[0];
      assert.ok(admissionLeaf.verify(caB.publicKey), "the admission leaf is from the new CA");
      const v2 = await getJSON(`gadgets.v2.${GROUP}`, "g3", "-n", objNs);
      assert.deepEqual(v2.spec, { capacity: 3, color: "green" });
    });
  },
  {
    name: "ca-rotation-e2e",
    kubelet: {
      images: {
        [MANAGER_IMAGE]: await roleImage("manager"),
        [WEBHOOK_SERVER_IMAGE]: await roleImage("webhook-server"),
      },
    },
  },
);
