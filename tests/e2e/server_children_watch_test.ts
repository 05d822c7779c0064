/**
 * The ConversionWebhookServer controller's optional children and served-target Leases, with the
 * manager as a real process under the chart's own RBAC (its ServiceAccount, ClusterRole and Roles
 * as helm renders them, `--webhook-server-namespaces` as the chart passes it) against a real
 * kube-apiserver (no kubelet: the Pods behind the Leases stay Pending, which the aggregate does not
 * read).
 *
 * - A server with `autoscaling` and `podDisruptionBudget` gets its HPA and PDB, owned by it.
 * - Replicas' reports reach `status.servedTargets`/`reportingReplicas` through the Lease watch: a
 *   first replica's Lease, a new replica's (the intersection), and a Lease going away, each
 *   followed well inside the wait helper's timeout, far below the 5-minute requeue; the wake
 *   metric counts them as `watch` and no `backstop` ever came due.
 * - Removing `autoscaling` deletes the HPA (a `ChildDeleted` Event says so) and leaves the PDB;
 *   removing `podDisruptionBudget` deletes the PDB.
 * - An HPA someone else put at the child's name is never deleted: after a later reconcile (the
 *   PDB re-added; that generation's status written) it is still there.
 */
import assert from "node:assert/strict";
import { SERVER_RESOURCE } from "../../src/api/resources.ts";
import { servedLeaseName } from "../../src/api/served_lease.ts";
import { isNotFound, type KubeClient, type KubeObject } from "../../src/kube/mod.ts";
import { HPAS, LEASES, PDBS } from "../../src/kube/resources.ts";
import { ServedTargetPublisher } from "../../src/webhook/served_lease.ts";
import { type ControlPlane, e2eTest, waitFor } from "../support/control_plane.ts";
import {
  admissionCertificate,
  installDcoCRDs,
  type ManagerProcess,
  startManager,
  webhookServer,
} from "../support/dco_stack.ts";
import { CHART, FULLNAME, helm, setArgs } from "../support/helm.ts";
import { httpGet } from "../support/role_process.ts";
import { sample } from "../kube/_helpers.ts";
import { adminClient, serviceAccountKubeconfig } from "./kube/_support.ts";

const CWS = "scaled";
const CHILD = `${CWS}-webhook-server`;
const MANAGER_SA = `${FULLNAME}-manager`;
const PODS = (namespace: string) => ({ group: "", version: "v1", plural: "pods", namespace });
const EVENTS = { group: "events.k8s.io", version: "v1", plural: "events", namespace: "default" };
const SCALING = {
  autoscaling: { minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 70 },
  podDisruptionBudget: { minAvailable: 1 },
};

/** The chart's ServiceAccounts and the manager's RBAC for release namespace `ns`, applied. */
async function applyManagerRBAC(cp: ControlPlane, ns: string): Promise<void> {
  const out = await helm(
    "template",
    FULLNAME,
    CHART,
    "--namespace",
    ns,
    "--kube-version",
    "1.37.2",
    ...setArgs({
      "features.crossplane.enabled": "false",
      "certificates.mode": "existing-secret",
      "certManager.enabled": "false",
      "manager.leaderElection.enabled": "false",
    }),
    ...[
      "templates/serviceaccount.yaml",
      "templates/rbac/clusterrole.yaml",
      "templates/rbac/clusterrolebinding.yaml",
      "templates/rbac/manager-roles.yaml",
    ].flatMap((t) => ["--show-only", t]),
  );
  assert.equal(out.code, 0, out.stderr);
  const file = `${await cp.makeTempDir("rbac")}/manager-rbac.yaml`;
  await Deno.writeTextFile(file, out.stdout);
  const r = await cp.kubectl("apply", "--server-side", "-f", file);
  assert.equal(r.code, 0, r.stderr);
}

async function getOrUndefined(
  client: KubeClient,
  ref: ReturnType<typeof HPAS>,
  name: string,
): Promise<KubeObject | undefined> {
  try {
    return await client.get(ref, name);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** `dco_operator_wake_total` of the server controller, by cause. */
async function wakes(role: ManagerProcess): Promise<{ watch: number; backstop: number }> {
  const text = (await httpGet(`${role.metricsURL}/metrics`)).text;
  const of = (cause: string) =>
    sample(text, "dco_operator_wake_total", { controller: "conversionwebhookserver", cause }) ?? 0;
  return { watch: of("watch"), backstop: of("backstop") };
}

/** A (Pending) Pod to own replica `pod`'s Lease, and that replica's publisher. */
async function replica(client: KubeClient, ns: string, pod: string) {
  const created = await client.create(PODS(ns), {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: pod },
    spec: { containers: [{ name: "c", image: "registry.invalid/none:1" }] },
  });
  const quiet = { info: () => {}, warn: () => {}, error: () => {} };
  return new ServedTargetPublisher({
    client,
    namespace: ns,
    serverName: CWS,
    podName: pod,
    podUID: created.metadata.uid,
    logger: quiet,
  });
}

e2eTest("manager: CWS HPA/PDB pruning and Lease-driven servedTargets", async (cp, t) => {
  await installDcoCRDs(cp);
  const ns = await cp.createNamespace("dco-system");
  const { certDir } = await admissionCertificate(cp, "dco-children-ca");
  await applyManagerRBAC(cp, ns);
  using admin = await adminClient(cp);
  const kubeconfig = await serviceAccountKubeconfig(
    cp,
    admin,
    ns,
    MANAGER_SA,
    await cp.makeTempDir("sa"),
  );
  await cp.apply(webhookServer(CWS, { certificate: { issuerRef: { name: "x" } }, ...SCALING }));

  await using role = startManager(cp, {
    certDir,
    namespace: ns,
    certificateMode: "existing-secret",
    features: { xrd: false },
    kubeconfig,
    webhookServerNamespaces: [ns],
  });
  const diagnose = async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } catch (e) {
      throw new Error(`${(e as Error).message}\n--- manager ---\n${role.output().slice(-4000)}`);
    }
  };
  const server = () => admin.get(SERVER_RESOURCE, CWS) as Promise<KubeObject & { status?: Obj }>;

  await t.step("the HPA and the PDB are created, owned by the server", async () => {
    const uid = (await server()).metadata.uid;
    for (const ref of [HPAS(ns), PDBS(ns)]) {
      const child = await diagnose(waitFor(
        ref.plural,
        () => getOrUndefined(admin, ref, CHILD),
        { timeoutMs: 60_000 },
      ));
      assert.equal(child.metadata.ownerReferences?.[0]?.uid, uid, ref.plural);
      assert.equal(
        child.metadata.labels?.["app.kubernetes.io/managed-by"],
        "declarative-conversion-operator",
      );
    }
  });

  await t.step("replica reports reach status.servedTargets through the Lease watch", async () => {
    // Settled: this generation's status is written, no replica reports yet.
    await diagnose(waitFor("settled status", async () => {
      const s = await server();
      return s.status?.observedGeneration === s.metadata.generation &&
        s.status?.reportingReplicas === 0;
    }, { timeoutMs: 60_000 }));
    const before = await wakes(role);
    const servedBy = (targets: string[], replicas: number) =>
      diagnose(waitFor(`servedTargets ${targets} from ${replicas} replica(s)`, async () => {
        const s = (await server()).status;
        return JSON.stringify(s?.servedTargets) === JSON.stringify(targets) &&
          s?.reportingReplicas === replicas;
      }, { timeoutMs: 60_000 }));

    const a = await replica(admin, ns, `${CHILD}-a`);
    await a.publish(["widgets.x.example.com", "gizmos.x.example.com"]);
    await servedBy(["gizmos.x.example.com", "widgets.x.example.com"], 1);
    const b = await replica(admin, ns, `${CHILD}-b`); // a new replica, not yet serving gizmos
    await b.publish(["widgets.x.example.com"]);
    await servedBy(["widgets.x.example.com"], 2);
    await admin.delete(LEASES(ns), servedLeaseName(`${CHILD}-b`));
    await servedBy(["gizmos.x.example.com", "widgets.x.example.com"], 1);

    const after = await wakes(role);
    assert.equal(after.backstop, 0, "no timed requeue came due");
    assert.ok(after.watch >= before.watch + 3, `watch wakes ${before.watch} → ${after.watch}`);
  });

  await t.step("removing autoscaling deletes the HPA and keeps the PDB", async () => {
    await admin.patch(SERVER_RESOURCE, CWS, { spec: { autoscaling: null } }, { type: "merge" });
    await diagnose(waitFor(
      "the HPA gone",
      async () => (await getOrUndefined(admin, HPAS(ns), CHILD)) === undefined,
      { timeoutMs: 60_000 },
    ));
    assert.ok(await getOrUndefined(admin, PDBS(ns), CHILD), "the PDB stays");
    const event = await diagnose(waitFor("the ChildDeleted Event", async () => {
      const list = await admin.list<KubeObject & Obj>(EVENTS);
      return list.items.find((e) => e.reason === "ChildDeleted" && e.regarding?.name === CWS);
    }, { timeoutMs: 30_000 }));
    assert.match(event.note, new RegExp(`HorizontalPodAutoscaler ${ns}/${CHILD}`));
  });

  await t.step("removing the disruption budget deletes the PDB", async () => {
    await admin.patch(SERVER_RESOURCE, CWS, { spec: { podDisruptionBudget: null } }, {
      type: "merge",
    });
    await diagnose(waitFor(
      "the PDB gone",
      async () => (await getOrUndefined(admin, PDBS(ns), CHILD)) === undefined,
      { timeoutMs: 60_000 },
    ));
  });

  await t.step("an HPA the server does not control is left alone", async () => {
    const foreign = await admin.create(HPAS(ns), {
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: CHILD },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "someone-else" },
        maxReplicas: 3,
      },
    });
    // A later reconcile, finished: its status (written after the prune step) is of the new
    // generation, and the PDB it applied is back.
    const patched = await admin.patch(SERVER_RESOURCE, CWS, {
      spec: { podDisruptionBudget: SCALING.podDisruptionBudget },
    }, { type: "merge" });
    await diagnose(waitFor("the reconcile of the new generation", async () => {
      const s = await server();
      return (s.status?.observedGeneration ?? 0) >= (patched.metadata.generation ?? 0);
    }, { timeoutMs: 60_000 }));
    assert.ok(await getOrUndefined(admin, PDBS(ns), CHILD), "the PDB is back");
    const still = await getOrUndefined(admin, HPAS(ns), CHILD);
    assert.equal(still?.metadata.uid, foreign.metadata.uid, "the foreign HPA is untouched");
  });
});

// deno-lint-ignore no-explicit-any
type Obj = any;
