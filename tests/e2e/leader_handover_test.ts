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
  assert.equal(order.filter((h) => h === old.identity).length, old.rec.writes.length);

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
    } catch (e) {
      console.error(logs.join("\n"));
      throw e;
    } finally {
      setLogSink(undefined);
    }
  },
  { name: "handover" },
);
