/**
 * The two-manager handover against a real kube-apiserver: two candidates, each the manager's
 * leader-only wiring in-process — a {@link LeaderElector} whose `onStartedLeading` runs a
 * {@link LeaderTerm} (the manager's own class, src/manager/leadership.ts) with one controller
 * writing through the term's fenced client — contend for one Lease. (In-process rather than two
 * manager processes so every write can be attributed to its holder and timed on one monotonic
 * clock; the manager process wires exactly these objects.)
 *
 * Each reconcile waits a little (ignoring its signal, as a reconcile in the middle of its work
 * would), then appends its holder to a ledger ConfigMap (optimistic concurrency, so appends are
 * totally ordered by the apiserver) and requeues at once: a write counter per holder. The first
 * leader leads and writes; then it is stopped (what SIGTERM does) or loses the Lease (its Lease
 * writes are cut, its other writes are not); the second takes over and writes. Asserted: every
 * write of the old leader was answered before the new one sent the Lease write that made it
 * leader, and the ledger has no entry of the old leader after the first of the new one; on a
 * stop the Lease is released only after the old leader's last reconcile ended.
 *
 * Then the same with two real manager processes (`--leader-elect`, each with its own
 * ServiceAccount so the apiserver's audit log attributes every write to its process): while a
 * ConversionWebhookServer's `spec.replicas` keeps changing (so the leader keeps writing its
 * Deployment), the leader gets SIGTERM; the audit log shows no write of the old manager after
 * the request in which the new one took the Lease, and the old one's Lease release after its
 * last other write.
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import {
  Controller,
  KubeClient,
  KubeNetworkError,
  type KubeObject,
  LeaderElector,
  type Lease,
  loadKubeconfig,
  type ResourceRef,
  type WriteOptions,
} from "../../src/kube/mod.ts";
import { LeaderTerm } from "../../src/manager/leadership.ts";
import { createLogger, setLogSink } from "../../src/obs/log.ts";
import { createMetricsRegistry } from "../../src/obs/metrics.ts";
import { type ControlPlane, e2eTest, waitFor } from "../support/control_plane.ts";
import {
  admissionCertificate,
  installDcoCRDs,
  startManager,
  webhookServer,
} from "../support/dco_stack.ts";
import { MANAGER_LEASE_NAME } from "../../src/kube/leader.ts";
import { serviceAccountKubeconfig as saKubeconfig } from "./kube/_support.ts";

/** The apiserver's audit log: every write, at Metadata level (who, what, when). */
const AUDIT = Deno.makeTempDirSync({ prefix: "dco-handover-audit-" });
Deno.writeTextFileSync(
  `${AUDIT}/policy.yaml`,
  [
    "apiVersion: audit.k8s.io/v1",
    "kind: Policy",
    "omitStages: [RequestReceived]",
    "rules:",
    "- level: Metadata",
    "  verbs: [create, update, patch, delete, deletecollection]",
    "- level: None",
    "",
  ].join("\n"),
);

interface AuditEvent {
  stage: string;
  verb: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

async function auditEvents(): Promise<AuditEvent[]> {
  const text = await Deno.readTextFile(`${AUDIT}/audit.log`);
  return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as AuditEvent);
}

const CLUSTER_ROLE_BINDINGS: ResourceRef = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural: "clusterrolebindings",
};

/** A kubeconfig for ServiceAccount `name` (cluster-admin), in `dir`. */
async function serviceAccountKubeconfig(
  cp: ControlPlane,
  admin: KubeClient,
  ns: string,
  name: string,
  dir: string,
): Promise<string> {
  const path = await saKubeconfig(cp, admin, ns, name, dir);
  await admin.create(CLUSTER_ROLE_BINDINGS, {
    metadata: { name: `${ns}-${name}` },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [{ kind: "ServiceAccount", name, namespace: ns }],
  });
  return path;
}

const CONFIGMAPS = (namespace: string): ResourceRef => ({
  group: "",
  version: "v1",
  plural: "configmaps",
  namespace,
});

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** A real client recording when each Lease write was sent and whom it made holder; cuttable. */
class LeaseRecordingClient extends KubeClient {
  cut = false;
  leaseWrites: { sentAt: number; holder: string }[] = [];
  override update<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    obj: NoInfer<T>,
    opts: WriteOptions = {},
  ): Promise<T> {
    return this.#lease(ref, obj, () => super.update<T>(ref, obj, opts));
  }
  override create<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    obj: NoInfer<T>,
    opts: WriteOptions = {},
  ): Promise<T> {
    return this.#lease(ref, obj, () => super.create<T>(ref, obj, opts));
  }
  async #lease<T>(ref: ResourceRef, obj: unknown, write: () => Promise<T>): Promise<T> {
    if (ref.plural !== "leases") return await write();
    if (this.cut) throw new KubeNetworkError("test: connection cut");
    const sentAt = performance.now();
    const written = await write();
    this.leaseWrites.push({ sentAt, holder: (obj as Lease).spec?.holderIdentity ?? "" });
    return written;
  }
}

/** One manager: an elector and the term it runs, with a record of its ledger writes. */
async function manager(cp: ControlPlane, ns: string, identity: string) {
  const client = new LeaseRecordingClient(await loadKubeconfig([cp.kubeconfigPath]));
  const term = new LeaderTerm(client);
  const log = createLogger(`handover.${identity}`);
  const rec = {
    writes: [] as number[], // performance.now() when each ledger write was answered
    refused: 0, // reconciles whose write the fence refused or aborted
    lastReconcileEnd: 0,
    signal: undefined as AbortSignal | undefined,
  };
  const controller = new Controller({
    name: `ledger-${identity}`,
    registry: createMetricsRegistry().registry,
    logger: log,
    reconcile: async () => {
      try {
        await delay(50); // mid-work; the signal is not looked at
        const cm = await term.client.get<ConfigMap>(CONFIGMAPS(ns), "ledger");
        const seq = Number(cm.data?.seq ?? "0");
        const data = {
          ...cm.data,
          seq: String(seq + 1),
          [`w${String(seq).padStart(6, "0")}`]: identity,
        };
        await term.client.update<ConfigMap>(CONFIGMAPS(ns), { ...cm, data });
        rec.writes.push(performance.now());
      } catch (e) {
        if (rec.signal?.aborted) rec.refused++;
        else throw e; // a conflict: retried
      } finally {
        rec.lastReconcileEnd = performance.now();
      }
      return { requeueAfter: 1 };
    },
  });
  term.add([controller], []);
  const elector = new LeaderElector({
    client,
    namespace: ns,
    name: "manager",
    identity,
    leaseDurationMs: 2000,
    renewDeadlineMs: 1500,
    retryPeriodMs: 200,
    logger: log,
    onStartedLeading: (signal) => {
      rec.signal = signal;
      controller.enqueue("tick");
      return term.run(signal, log);
    },
    onStoppedLeading: () => {},
  });
  /** When this manager sent the Lease write that made it leader. */
  const acquiredAt = () => client.leaseWrites.find((w) => w.holder === identity)?.sentAt;
  const releasedAt = () => client.leaseWrites.find((w) => w.holder === "")?.sentAt;
  return {
    identity,
    client,
    elector,
    rec,
    acquiredAt,
    releasedAt,
    [Symbol.dispose]: () => client.close(),
  };
}

type Manager = Awaited<ReturnType<typeof manager>>;

/** The ledger's holders in write order. */
async function ledger(admin: KubeClient, ns: string): Promise<string[]> {
  const cm = await admin.get<ConfigMap>(CONFIGMAPS(ns), "ledger");
  return Object.entries(cm.data ?? {}).filter(([k]) => k.startsWith("w")).sort().map(([, v]) => v);
}

/** Runs both, lets the first leader write, ends its leadership with `end`, checks the handover. */
async function handover(
  cp: ControlPlane,
  admin: KubeClient,
  end: (old: Manager) => Promise<void>,
  expected: "stopped" | "lost",
) {
  const ns = await cp.createNamespace("handover");
  await admin.create(CONFIGMAPS(ns), { metadata: { name: "ledger" }, data: { seq: "0" } });
  using a = await manager(cp, ns, "a");
  using b = await manager(cp, ns, "b");
  const runs = new Map<Manager, Promise<string>>([[a, a.elector.run()], [b, b.elector.run()]]);
  const old = await waitFor(
    "a leader",
    () => a.elector.isLeader() ? a : b.elector.isLeader() ? b : undefined,
    { timeoutMs: 10_000 },
  );
  const next = old === a ? b : a;
  await waitFor("the leader to write", () => old.rec.writes.length >= 5, { timeoutMs: 10_000 });
  assert.equal(next.rec.writes.length, 0, "the follower never writes");

  await end(old);
  assert.equal(await runs.get(old), expected);
  await waitFor("the other to take over and write", () => next.rec.writes.length >= 5, {
    timeoutMs: 15_000,
  });
  const takeover = next.acquiredAt();
  assert.ok(takeover !== undefined);
  const late = old.rec.writes.filter((t) => t >= takeover);
  assert.deepEqual(late, [], "no write of the old leader answered after the new one acquired");
  assert.ok(old.rec.lastReconcileEnd < takeover, "the old leader's last reconcile ended first");
  const order = await ledger(admin, ns);
  const firstNew = order.indexOf(next.identity);
  assert.ok(firstNew > 0);
  assert.ok(!order.slice(firstNew).includes(old.identity), `ledger: ${order.join(",")}`);
  // Every answered write is in the ledger; a write the fence aborted in flight may have landed
  // too (the apiserver had it already) — but, as checked above, only before the new leader's.
  const oldEntries = order.filter((h) => h === old.identity).length;
  assert.ok(
    oldEntries >= old.rec.writes.length && oldEntries <= old.rec.writes.length + old.rec.refused,
    `old leader: ${oldEntries} ledger entries, ${old.rec.writes.length} answered writes, ` +
      `${old.rec.refused} aborted`,
  );

  await next.elector.stop();
  assert.equal(await runs.get(next), "stopped");
  return { old, next, order };
}

e2eTest(
  "leader handover: no reconcile of the old leader after the new one leads",
  async (cp, t) => {
    using admin = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
    const logs: string[] = [];
    setLogSink((l) => logs.push(l));
    try {
      await t.step("a stopped leader finishes its reconciles, then releases", async () => {
        const { old, order } = await handover(cp, admin, (old) => old.elector.stop(), "stopped");
        const released = old.releasedAt();
        assert.ok(released !== undefined, "the stopped leader released the Lease");
        assert.ok(old.rec.lastReconcileEnd < released, "released after its last reconcile ended");
        console.log(
          `stop: ledger ${order.length} writes; old leader's fence refused ${old.rec.refused}`,
        );
      });
      await t.step(
        "a leader that cannot renew stops writing before the other takes over",
        async () => {
          const { old, order } = await handover(cp, admin, async (old) => {
            old.client.cut = true; // its Lease writes fail; its ledger writes do not
            await waitFor("the old leader to step down", () => old.rec.signal?.aborted, {
              timeoutMs: 10_000,
            });
          }, "lost");
          assert.equal(old.releasedAt(), undefined, "a lost Lease is not released");
          console.log(
            `lost: ledger ${order.length} writes; old leader's fence refused ${old.rec.refused}`,
          );
        },
      );
      await t.step(
        "two manager processes: SIGTERM hands over, no write of the old one after",
        () => processHandover(cp, admin),
      );
    } catch (e) {
      console.error(logs.join("\n"));
      throw e;
    } finally {
      setLogSink(undefined);
    }
  },
  {
    name: "handover",
    apiServerArgs: [
      `--audit-policy-file=${AUDIT}/policy.yaml`,
      `--audit-log-path=${AUDIT}/audit.log`,
    ],
  },
);

async function processHandover(cp: ControlPlane, admin: KubeClient) {
  await installDcoCRDs(cp, []);
  const ns = await cp.createNamespace("dco-system");
  const { certDir } = await admissionCertificate(cp, "dco-handover-ca");
  const dir = await Deno.makeTempDir({ prefix: "dco-handover-" });
  const kubeconfig = {
    a: await serviceAccountKubeconfig(cp, admin, ns, "manager-a", dir),
    b: await serviceAccountKubeconfig(cp, admin, ns, "manager-b", dir),
  };
  const users = {
    a: `system:serviceaccount:${ns}:manager-a`,
    b: `system:serviceaccount:${ns}:manager-b`,
  };
  const cws = "handover";
  await cp.apply(
    webhookServer(cws, { default: true, replicas: 2, certificate: { issuerRef: { name: "x" } } }),
  );
  const start = (which: "a" | "b") =>
    startManager(cp, {
      certDir,
      namespace: ns,
      certificateMode: "existing-secret",
      features: { xrd: false },
      leaderElect: true,
      kubeconfig: kubeconfig[which],
    });
  await using a = start("a");
  await waitFor("a to lead", () => a.output().includes("controllers started"), {
    timeoutMs: 60_000,
  });
  await using b = start("b");
  await waitFor("b to see a lead", () => /new leader observed.*manager_/.test(b.output()), {
    timeoutMs: 60_000,
  });
  const deployments: ResourceRef = {
    group: "apps",
    version: "v1",
    plural: "deployments",
    namespace: ns,
  };
  const cwsRef: ResourceRef = {
    group: "terasky.com",
    version: "v1alpha1",
    plural: "conversionwebhookservers",
  };
  const deployment = async () =>
    (await admin.list<KubeObject & { spec?: { replicas?: number } }>(deployments)).items[0];
  // Keep the leader writing: spec.replicas changes every 100 ms.
  let churn = true;
  let replicas = 2;
  const churning = (async () => {
    while (churn) {
      replicas = replicas === 2 ? 3 : 2;
      await admin.patch(cwsRef, cws, { spec: { replicas } }, { type: "merge" });
      await delay(100);
    }
  })();
  try {
    await waitFor("a to follow the churn", async () => (await deployment())?.spec?.replicas === 3, {
      timeoutMs: 30_000,
    });
    await delay(500);
    a.child.kill("SIGTERM");
    assert.equal((await a.child.status).code, 0, a.output().slice(-3000));
    await waitFor("b to lead", () => b.output().includes("controllers started"), {
      timeoutMs: 30_000,
    });
    await delay(1000);
  } finally {
    churn = false;
    await churning;
  }
  await waitFor(
    "b to reconcile the last change",
    async () => (await deployment())?.spec?.replicas === replicas,
    { timeoutMs: 30_000 },
  );
  assert.match(a.output(), /released leader lease/);

  const events = (await auditEvents()).filter((e) =>
    e.stage === "ResponseComplete" && (e.responseStatus?.code ?? 0) < 300
  );
  const isLease = (e: AuditEvent) =>
    e.objectRef?.resource === "leases" && e.objectRef.name === MANAGER_LEASE_NAME;
  const acquired = events.find((e) => e.user.username === users.b && isLease(e));
  assert.ok(acquired, "b took the Lease");
  const ofA = events.filter((e) => e.user.username === users.a);
  const aWork = ofA.filter((e) => !isLease(e));
  const bWork = events.filter((e) => e.user.username === users.b && !isLease(e));
  const describe = (e: AuditEvent) =>
    `${e.stageTimestamp} ${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}`;
  assert.ok(aWork.length > 0 && bWork.length > 0, `writes: a ${aWork.length}, b ${bWork.length}`);
  // MicroTime stamps have a fixed width: they order as strings.
  const late = ofA.filter((e) => e.stageTimestamp >= acquired.requestReceivedTimestamp);
  assert.deepEqual(late.map(describe), [], "no write of a after b's request that took the Lease");
  const released = ofA.filter(isLease).at(-1)!;
  const lastWork = aWork.at(-1)!;
  assert.ok(
    lastWork.stageTimestamp < released.requestReceivedTimestamp,
    "a released after its last write",
  );
  console.log(
    `processes: writes a ${aWork.length}, b ${bWork.length} (non-Lease); b acquired at ${acquired.requestReceivedTimestamp}, a's last write ${lastWork.stageTimestamp}`,
  );
}
