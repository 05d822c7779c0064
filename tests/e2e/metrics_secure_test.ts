/**
 * `--metrics-secure` on the manager against a real kube-apiserver: metrics over TLS (the admission
 * serving pair of `--webhook-cert-dir`); a scrape without a token or with a forged one is 401, a
 * ServiceAccount without rights is 403, and one bound to the chart's `metrics-reader` ClusterRole
 * (rendered by helm with `metrics.secure=true`) gets the exposition — with the role-wide families
 * (`dco_build_info`, `rest_client_*`, `leader_election_master_status`) in it. The probes stay plain
 * on the health port.
 */
import assert from "node:assert/strict";
import { e2eTest, waitFor } from "../support/control_plane.ts";
import {
  admissionCertificate,
  applyChartRBAC,
  installDcoCRDs,
  startManager,
} from "../support/dco_stack.ts";
import { FULLNAME } from "../support/helm.ts";
import { httpGet } from "../support/role_process.ts";
import { KubeClient, loadKubeconfig } from "../../src/kube/mod.ts";
import { serviceAccountToken } from "./kube/_support.ts";

const CLUSTER_ROLE_BINDINGS = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural: "clusterrolebindings",
};

e2eTest(
  "--metrics-secure: 401 without a valid token, 403 unauthorised, 200 for metrics-reader",
  async (cp) => {
    await installDcoCRDs(cp);
    const ns = await cp.createNamespace("dco-system");
    const { certDir, ca } = await admissionCertificate(cp, "dco-metrics-ca");

    // The chart's RBAC with metrics.secure=true, as helm renders it (metrics-reader among it).
    await applyChartRBAC(cp, ns, { metricsSecure: true });

    const admin = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
    const reader = await serviceAccountToken(admin, ns, "scraper");
    const nobody = await serviceAccountToken(admin, ns, "nobody");
    await admin.create(CLUSTER_ROLE_BINDINGS, {
      metadata: { name: `${ns}-scraper` },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: `${FULLNAME}-metrics-reader`,
      },
      subjects: [{ kind: "ServiceAccount", name: "scraper", namespace: ns }],
    });
    admin.close();

    await using manager = startManager(cp, {
      certDir,
      namespace: ns,
      features: { xrd: false },
      leaderElect: true,
      metricsSecure: true,
    });
    await waitFor(
      "readyz",
      async () => (await httpGet(`${manager.healthURL}/readyz`)).status === 200,
      { timeoutMs: 60_000 },
    ).catch((e) => {
      throw new Error(`${(e as Error).message}\n--- manager ---\n${manager.output()}`);
    });
    assert.ok(manager.metricsURL.startsWith("https://"));
    const tls = Deno.createHttpClient({ caCerts: [ca.cert] });
    const scrape = async (token?: string) => {
      const res = await fetch(`${manager.metricsURL}/metrics`, {
        client: tls,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      });
      return { status: res.status, text: await res.text() };
    };
    try {
      assert.equal((await scrape()).status, 401);
      assert.equal((await scrape("not-a-token")).status, 401);
      const denied = await scrape(nobody);
      assert.equal(denied.status, 403);
      assert.match(denied.text, /Authorization denied for user system:serviceaccount:.*:nobody/);
      const ok = await scrape(reader);
      assert.equal(ok.status, 200, ok.text);
      assert.match(ok.text, /^process_start_time_seconds /m);
      // The role-wide families, wired in the real process.
      assert.match(ok.text, /^dco_build_info\{version="[^"]+",commit="[^"]+",deno="[^"]+"/m);
      const apiHost = new URL(cp.server).host;
      assert.ok(
        ok.text.includes(`rest_client_requests_total{code="201",method="POST",host="${apiHost}"}`),
        "the reviews themselves are counted",
      );
      assert.match(
        ok.text,
        /^rest_client_request_duration_seconds_count\{verb="GET",host="[^"]+"\} \d+/m,
      );
      await waitFor(
        "leader",
        async () =>
          /^leader_election_master_status\{name="declarative-conversion-operator\.terasky\.com"\} 1$/m
            .test((await scrape(reader)).text),
        { timeoutMs: 30_000 },
      );
      assert.equal((await httpGet(`${manager.healthURL}/healthz`)).status, 200);
    } finally {
      tls.close();
    }
  },
);
