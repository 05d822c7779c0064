/**
 * The chart's identities against a real apiserver (RBAC and the ValidatingAdmissionPolicy
 * enforced by kube-apiserver itself): `helm install`, then requests with real ServiceAccount
 * tokens from the TokenRequest API.
 *
 * - The webhook-server ServiceAccount is forbidden to update the manager's leader-election Lease
 *   (same namespace, the chart's default) — with an unbound token and with a token bound to a
 *   webhook-server Pod — and may write only `dco-served-<its pod>`.
 * - The manager's ServiceAccount is forbidden to read a Secret in a namespace outside the release
 *   and webhook-server namespaces, and still reads its CA Secret and renews its leader Lease.
 */
import assert from "node:assert/strict";
import {
  KubeApiError,
  KubeClient,
  type KubeObject,
  loadInClusterConfig,
  MANAGER_LEASE_NAME,
} from "../../../src/kube/mod.ts";
import { LEASES, SECRETS } from "../../../src/kube/resources.ts";
import { CA_SECRET_NAME } from "../../../src/manager/builtin_certs.ts";
import { type ControlPlane, e2eTest, waitFor } from "../../support/control_plane.ts";
import { CHART, FULLNAME, helm } from "../../support/helm.ts";
import { adminClient, serviceEnv, writeServiceAccountDir } from "../kube/_support.ts";

const MANAGER_SA = `${FULLNAME}-manager`;
const WEBHOOK_SA = `${FULLNAME}-webhook-server`;
type Lease = KubeObject & { spec: { holderIdentity?: string; leaseDurationSeconds?: number } };
const PODS = (namespace: string) => ({ group: "", version: "v1", plural: "pods", namespace });

/** A client authenticating with a TokenRequest token of `sa`, bound to `pod` when given. */
async function tokenClient(
  cp: ControlPlane,
  admin: KubeClient,
  namespace: string,
  sa: string,
  pod?: { name: string; uid: string },
): Promise<KubeClient> {
  const tr = await admin.call<{ status: { token: string } }>(
    "POST",
    `/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`,
    {
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {
          expirationSeconds: 3600,
          ...(pod ? { boundObjectRef: { apiVersion: "v1", kind: "Pod", ...pod } } : {}),
        },
      },
    },
  );
  const dir = await writeServiceAccountDir(cp, tr.status.token, namespace);
  const env = serviceEnv(cp);
  return new KubeClient(await loadInClusterConfig({ dir, env: (k) => env[k] }));
}

/** The status of a refused request; fails when it succeeded. */
async function refused(p: Promise<unknown>, what: string): Promise<KubeApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof KubeApiError) return e;
    throw e;
  }
  assert.fail(`${what} must be refused`);
}

const lease = (namespace: string, name: string, holder: string) => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name, namespace },
  spec: { holderIdentity: holder, leaseDurationSeconds: 15 },
});

e2eTest(
  "chart: the webhook-server SA cannot touch the manager's leader Lease; the manager reads no Secret outside its namespaces",
  async (cp, t) => {
    const ns = await cp.createNamespace("dco-lp");
    const outside = await cp.createNamespace("outside");
    const admin = await adminClient(cp);
    const install = await helm(
      "install",
      "dco",
      CHART,
      "--kubeconfig",
      cp.kubeconfigPath,
      "--namespace",
      ns,
      "--set",
      "certManager.enabled=false",
      "--set",
      "certificates.mode=builtin",
      "--set",
      "features.crossplane.enabled=false",
      // No manager runs here: nothing may need its admission webhook.
      "--set",
      "admissionWebhook.failurePolicy=Ignore",
      "--set",
      "conversionWebhookServer.create=false",
    );
    assert.equal(install.code, 0, `helm install:\n${install.stdout}\n${install.stderr}`);
    try {
      // The manager's leader Lease and CA Secret, as a running manager would have made them.
      await admin.create(LEASES(ns), lease(ns, MANAGER_LEASE_NAME, "manager-0"));
      await admin.create(SECRETS(ns), {
        metadata: { name: CA_SECRET_NAME, namespace: ns },
        stringData: { "tls.crt": "x" },
      });
      await admin.create(SECRETS(outside), {
        metadata: { name: "not-dcos", namespace: outside },
        stringData: { password: "x" },
      });

      await t.step("webhook-server SA, unbound token: the leader Lease is forbidden", async () => {
        const ws = await tokenClient(cp, admin, ns, WEBHOOK_SA);
        const current = await ws.get<Lease>(LEASES(ns), MANAGER_LEASE_NAME); // get is granted
        // The apiserver picks a new ValidatingAdmissionPolicy up from its informer a moment after
        // it is created: wait (with dry-run writes) until it is in force.
        await waitFor("the Lease policy in force", async () => {
          const r = await ws.update(LEASES(ns), current, { dryRun: true }).then(
            () => undefined,
            (e) => e as KubeApiError,
          );
          return r?.status === 403 ? r : undefined;
        }, { timeoutMs: 30_000 }).catch(async (e) => {
          const vap = await admin.call(
            "GET",
            `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${FULLNAME}-webhook-server-leases`,
          );
          throw new Error(`${(e as Error).message}; policy: ${JSON.stringify(vap)}`);
        });
        const e = await refused(
          ws.update(LEASES(ns), {
            ...current,
            spec: { ...current.spec, holderIdentity: "webhook" },
          }),
          "updating the leader Lease",
        );
        assert.equal(e.status, 403, e.message);
        assert.match(e.message, /may write only its own replica Lease dco-served-<pod name>/);
        const c = await refused(
          ws.create(LEASES(ns), lease(ns, "dco-served-someone", "x")),
          "creating a replica Lease without a Pod-bound token",
        );
        assert.equal(c.status, 403, c.message);
        ws.close();
      });

      await t.step("webhook-server SA, Pod-bound token: its own Lease only", async () => {
        const pod = await admin.create(PODS(ns), {
          metadata: { name: "ws-1", namespace: ns },
          spec: {
            serviceAccountName: WEBHOOK_SA,
            containers: [{ name: "webhook-server", image: "dco.test/webhook-server:lp" }],
          },
        });
        const ws = await tokenClient(cp, admin, ns, WEBHOOK_SA, {
          name: "ws-1",
          uid: pod.metadata!.uid!,
        });
        const own = await ws.create(LEASES(ns), lease(ns, "dco-served-ws-1", "ws-1"));
        assert.equal(own.metadata?.name, "dco-served-ws-1");
        await ws.update(LEASES(ns), {
          ...own,
          spec: { holderIdentity: "ws-1", leaseDurationSeconds: 20 },
        });
        const leader = await ws.get<Lease>(LEASES(ns), MANAGER_LEASE_NAME);
        const e = await refused(
          ws.update(LEASES(ns), {
            ...leader,
            spec: { ...leader.spec, holderIdentity: "ws-1" },
          }),
          "updating the leader Lease",
        );
        assert.equal(e.status, 403, e.message);
        const other = await refused(
          ws.create(LEASES(ns), lease(ns, "dco-served-ws-2", "ws-1")),
          "creating another replica's Lease",
        );
        assert.equal(other.status, 403, other.message);
        const held = await admin.get<Lease>(LEASES(ns), MANAGER_LEASE_NAME);
        assert.equal(
          held.spec.holderIdentity,
          "manager-0",
        );
        ws.close();
      });

      await t.step(
        "manager SA: no Secret outside its namespaces; its own still readable",
        async () => {
          const mgr = await tokenClient(cp, admin, ns, MANAGER_SA);
          const e = await refused(
            mgr.get(SECRETS(outside), "not-dcos"),
            "reading a foreign Secret",
          );
          assert.equal(e.status, 403, e.message);
          const ks = await refused(mgr.get(SECRETS("kube-system"), "anything"), "kube-system");
          assert.equal(ks.status, 403, ks.message);
          const list = await refused(mgr.list(SECRETS(ns)), "listing Secrets");
          assert.equal(list.status, 403, list.message);
          const ca = await mgr.get(SECRETS(ns), CA_SECRET_NAME);
          assert.equal(ca.metadata?.name, CA_SECRET_NAME);
          // The leader Lease: get and update by name.
          const held = await mgr.get<Lease>(LEASES(ns), MANAGER_LEASE_NAME);
          await mgr.update(LEASES(ns), {
            ...held,
            spec: { ...held.spec, holderIdentity: "manager-1" },
          });
          // Not another Lease in its namespace.
          await admin.create(LEASES(ns), lease(ns, "someone-elses", "x"));
          const foreign = await mgr.get(LEASES(ns), "someone-elses").then(
            () => undefined,
            (err) => err as KubeApiError,
          );
          assert.equal(foreign?.status, 403, "get of another Lease by name is not granted");
          mgr.close();
        },
      );
    } finally {
      const un = await helm(
        "uninstall",
        "dco",
        "--kubeconfig",
        cp.kubeconfigPath,
        "--namespace",
        ns,
        "--no-hooks",
      );
      assert.equal(un.code, 0, `${un.stdout}\n${un.stderr}`);
      admin.close();
    }
  },
  { name: "least-privilege-e2e" },
);
