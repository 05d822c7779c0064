/**
 * `--webhook-server-metrics-secure` on the manager, end to end: the Deployment it renders for a
 * ConversionWebhookServer runs its Pod with `--metrics-secure`, and the (test) kubelet's HTTPS
 * probes make it ready. The Pod's metrics port then serves TLS with the server's own serving
 * certificate (issued by the manager's built-in CA); a scrape without a token or with a forged one
 * is 401, a ServiceAccount without rights is 403, and one bound to the chart's `metrics-reader`
 * ClusterRole gets the exposition — the Pod reviews them with the rights the chart grants the
 * webhook-server ServiceAccount under `webhookServers.metrics.secure=true`. `/readyz` stays open.
 */
import assert from "node:assert/strict";
import https from "node:https";
import { type ControlPlane, e2eTest, waitFor } from "../support/control_plane.ts";
import {
  getJSON,
  installDco,
  readyWebhookServer,
  startDcoManager,
  WEBHOOK_SERVER_SA,
  webhookServer,
  webhookServerKubelet,
} from "../support/dco_stack.ts";
import { FULLNAME } from "../support/helm.ts";
import { KubeClient, loadKubeconfig } from "../../src/kube/mod.ts";
import { serviceAccountToken } from "./kube/_support.ts";

const CWS = "dco";
const SVC = `${CWS}-webhook-server`;
const IMAGE = "dco.test/webhook-server:e2e";

/** One GET over TLS, verified against `ca` for the Service's name (the Pod IP is not a SAN). */
function tlsGet(
  url: string,
  ca: string,
  servername: string,
  token?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, {
      ca,
      servername,
      timeout: 5_000,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: timeout`)));
    req.on("error", reject);
  });
}

e2eTest(
  "--webhook-server-metrics-secure: the server's Pods serve metrics over TLS, reviewed",
  async (cp: ControlPlane) => {
    const ns = await installDco(cp, { rbac: { webhookServerMetricsSecure: true } });

    const admin = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
    const reader = await serviceAccountToken(admin, ns, "scraper");
    const nobody = await serviceAccountToken(admin, ns, "nobody");
    await admin.create({
      group: "rbac.authorization.k8s.io",
      version: "v1",
      plural: "clusterrolebindings",
    }, {
      metadata: { name: `${ns}-scraper` },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: `${FULLNAME}-metrics-reader`,
      },
      subjects: [{ kind: "ServiceAccount", name: "scraper", namespace: ns }],
    });
    admin.close();

    await using manager = await startDcoManager(cp, {
      caName: "dco-metrics-ca",
      namespace: ns,
      webhookServerImage: IMAGE,
      features: { xrd: false },
      webhookServerMetricsSecure: true,
    });

    await cp.apply(webhookServer(CWS, {
      replicas: 1,
      serviceAccountName: WEBHOOK_SERVER_SA,
      certificate: { issuerRef: { name: "unused" } },
      rollout: { preStopSleepSeconds: 1, terminationGracePeriodSeconds: 35 },
    }));
    // Ready means the startup and readiness probes passed, over HTTPS.
    await waitFor("CWS ready", () => readyWebhookServer(cp, CWS, 1), { timeoutMs: 120_000 })
      .catch(manager.failing);

    const container = (await getJSON(cp, "deployment", SVC, "-n", ns)).spec.template.spec
      .containers[0];
    assert.ok(container.args.includes("--metrics-secure=true"), container.args.join(" "));
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
      assert.equal(container[probe].httpGet.scheme, "HTTPS", probe);
    }

    const ca = atob((await getJSON(cp, "secret", `${SVC}-tls`, "-n", ns)).data["ca.crt"]);
    const pods = (await getJSON(cp, "pods", "-n", ns, "-l", `app.kubernetes.io/instance=${CWS}`))
      .items;
    assert.equal(pods.length, 1);
    const base = `https://${pods[0].status.podIP}:8443`;
    const get = (path: string, token?: string) =>
      tlsGet(`${base}${path}`, ca, `${SVC}.${ns}.svc`, token);

    assert.equal((await get("/readyz")).status, 200, "probes need no token");
    assert.equal((await get("/metrics")).status, 401);
    assert.equal((await get("/metrics", "not-a-token")).status, 401);
    const denied = await get("/metrics", nobody);
    assert.equal(denied.status, 403);
    assert.match(denied.text, /Authorization denied for user system:serviceaccount:.*:nobody/);
    const ok = await get("/metrics", reader);
    assert.equal(ok.status, 200, ok.text);
    assert.match(ok.text, /^dco_webhook_ready 1$/m);
  },
  { name: "webhook-server-metrics-secure", kubelet: webhookServerKubelet(IMAGE) },
);
