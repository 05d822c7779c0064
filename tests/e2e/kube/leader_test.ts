/**
 * Lease leader election and status patching against a real kube-apiserver. Two electors compete
 * for one Lease: exactly one leads; a stopping leader releases and the other takes over at once
 * with `leaseTransitions` incremented; a leader whose renewals fail (its Lease writes are cut on
 * the client side, a partition) steps down after renewDeadline — aborting the signal its work
 * got — and the other takes over once the Lease expires; a Lease abandoned by a holder whose
 * clock is skewed is taken after leaseDuration by our own clock. Durations are short (1–2 s); assertions
 * are on outcomes, never on exact timing. The status step writes conditions through
 * `patchStatus` on a CRD's `/status` subresource and reads back what the apiserver persisted.
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import {
  KubeClient,
  KubeNetworkError,
  type KubeObject,
  loadKubeconfig,
  type ResourceRef,
  type WriteOptions,
} from "../../../src/kube/mod.ts";
import { LeaderElector, type Lease } from "../../../src/kube/leader.ts";
import { LEASES } from "../../../src/kube/resources.ts";
import {
  applyObject,
  patchStatus,
  setCondition,
  type StatusCondition,
} from "../../../src/kube/status.ts";
import { type ControlPlane, waitFor, withControlPlane } from "../../support/control_plane.ts";
import { setLogSink } from "../../../src/obs/log.ts";
import { adminClient } from "./_support.ts";

/** A real client whose writes can be cut (as if the network to the apiserver broke). */
class CuttableClient extends KubeClient {
  cut = false;
  override update<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    obj: NoInfer<T>,
    opts: WriteOptions = {},
  ): Promise<T> {
    if (this.cut) return Promise.reject(new KubeNetworkError("test: connection cut"));
    return super.update<T>(ref, obj, opts);
  }
}

async function cuttableClient(cp: ControlPlane): Promise<CuttableClient> {
  return new CuttableClient(await loadKubeconfig([cp.kubeconfigPath]));
}

/** An elector with short timings plus a record of its callbacks. */
function candidate(client: KubeClient, namespace: string, name: string, identity: string) {
  const rec = {
    started: 0,
    stopped: 0,
    signal: undefined as AbortSignal | undefined,
    leaders: [] as string[],
  };
  const elector = new LeaderElector({
    client,
    namespace,
    name,
    identity,
    leaseDurationMs: 2000,
    renewDeadlineMs: 1500,
    retryPeriodMs: 200,
    onStartedLeading: (signal) => {
      rec.started++;
      rec.signal = signal;
    },
    onStoppedLeading: () => rec.stopped++,
    onNewLeader: (id) => rec.leaders.push(id),
  });
  return { elector, rec };
}

/** A candidate for Lease "lock" on a cuttable client of its own, closed when it is disposed. */
async function contender(cp: ControlPlane, namespace: string, identity: string) {
  const client = await cuttableClient(cp);
  return {
    ...candidate(client, namespace, "lock", identity),
    client,
    [Symbol.dispose]: () => client.close(),
  };
}

Deno.test("LeaderElector rejects timings that could make two leaders", () => {
  const client = {} as KubeClient;
  const base = {
    client,
    namespace: "ns",
    name: "lock",
    identity: "a",
    onStartedLeading: () => {},
    onStoppedLeading: () => {},
  };
  assert.throws(() => new LeaderElector({ ...base, leaseDurationMs: 1000, renewDeadlineMs: 1000 }));
  assert.throws(() => new LeaderElector({ ...base, renewDeadlineMs: 1000, retryPeriodMs: 900 }));
  assert.throws(() => new LeaderElector({ ...base, identity: "" }));
  const e = new LeaderElector(base);
  assert.deepEqual([e.leaseDurationMs, e.renewDeadlineMs, e.retryPeriodMs], [15000, 10000, 2000]);
  assert.equal(e.isLeader(), false);
});

Deno.test(
  "leader election and status patches against a real apiserver",
  withControlPlane(async (cp, t) => {
    using admin = await adminClient(cp);
    const logs: string[] = [];
    setLogSink((l) => logs.push(l));
    try {
      await steps(cp, t, admin, logs);
    } catch (e) {
      console.error(logs.join("\n"));
      throw e;
    } finally {
      setLogSink(undefined);
    }
  }, { name: "leader" }),
);

async function steps(cp: ControlPlane, t: Deno.TestContext, admin: KubeClient, logs: string[]) {
  const readLease = (ns: string, name: string) => admin.get<Lease>(LEASES(ns), name);

  await t.step("exactly one of two leads; release hands over at once", async () => {
    const ns = await cp.createNamespace("le");
    using a = await contender(cp, ns, "a");
    using b = await contender(cp, ns, "b");
    let overlap = false;
    const monitor = setInterval(() => {
      if (a.elector.isLeader() && b.elector.isLeader()) overlap = true;
    }, 10);
    const runA = a.elector.run();
    const runB = b.elector.run();
    const first = await waitFor(
      "a leader",
      () => a.elector.isLeader() ? a : b.elector.isLeader() ? b : undefined,
    );
    const second = first === a ? b : a;
    // Hold for several renew periods: the leader keeps it, the other never leads.
    await delay(1200);
    assert.ok(first.elector.isLeader());
    assert.ok(!second.elector.isLeader());
    assert.equal(second.rec.started, 0);
    const held = await readLease(ns, "lock");
    assert.equal(held.spec?.holderIdentity, first.elector.identity);
    assert.equal(held.spec?.leaseDurationSeconds, 2);
    assert.match(held.spec?.renewTime ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(held.spec?.acquireTime ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const transitions = held.spec?.leaseTransitions ?? 0;
    // The follower observed who leads.
    assert.equal(second.elector.getLeader(), first.elector.identity);

    // Stop the leader: it releases; the other acquires well before the lease would expire.
    await first.elector.stop();
    assert.equal(await (first === a ? runA : runB), "stopped");
    assert.ok(!first.elector.isLeader());
    assert.equal(first.rec.stopped, 1);
    assert.ok(first.rec.signal?.aborted, "the stopped leader's signal is aborted");
    await waitFor("the other to take over", () => second.elector.isLeader(), {
      timeoutMs: 10_000,
    });
    const taken = await readLease(ns, "lock");
    assert.equal(taken.spec?.holderIdentity, second.elector.identity);
    assert.equal(taken.spec?.leaseTransitions, transitions + 1);
    assert.equal(second.rec.started, 1);
    assert.ok(!second.rec.signal?.aborted);

    await second.elector.stop();
    assert.equal(await (second === a ? runA : runB), "stopped");
    clearInterval(monitor);
    assert.ok(!overlap, "never two leaders at once");
    const released = await readLease(ns, "lock");
    assert.equal(released.spec?.holderIdentity, "");
    assert.equal(released.spec?.leaseTransitions, transitions + 1, "release keeps the count");
  });

  await t.step("a leader that cannot renew steps down; the other takes over", async () => {
    const ns = await cp.createNamespace("le");
    using a = await contender(cp, ns, "a");
    const runA = a.elector.run();
    await waitFor("a to lead", () => a.elector.isLeader(), { timeoutMs: 10_000 });
    using b = await contender(cp, ns, "b");
    const runB = b.elector.run();
    await delay(600);
    assert.ok(!b.elector.isLeader(), "b must not take a lease that is being renewed");
    const before = (await readLease(ns, "lock")).spec?.leaseTransitions ?? 0;

    a.client.cut = true; // a's renewals now fail
    const signal = a.rec.signal;
    assert.ok(signal && !signal.aborted);
    assert.equal(await runA, "lost");
    assert.ok(signal.aborted, "onStartedLeading's signal aborts when leadership is lost");
    assert.ok(!a.elector.isLeader());
    assert.equal(a.rec.stopped, 1);
    assert.ok(logs.some((l) => l.includes("leadership lost") && l.includes('"identity":"a"')));

    await waitFor("b to take over after expiry", () => b.elector.isLeader(), {
      timeoutMs: 15_000,
    });
    const lease = await readLease(ns, "lock");
    assert.equal(lease.spec?.holderIdentity, "b");
    assert.equal(lease.spec?.leaseTransitions, before + 1);
    assert.deepEqual(b.rec.leaders.at(-1), "b");
    await b.elector.stop();
    assert.equal(await runB, "stopped");
  });

  await t.step("a non-leader's stop leaves the leader's lease alone", async () => {
    const ns = await cp.createNamespace("le");
    using a = await contender(cp, ns, "a");
    using b = await contender(cp, ns, "b");
    const runA = a.elector.run();
    await waitFor("a to lead", () => a.elector.isLeader(), { timeoutMs: 10_000 });
    const runB = b.elector.run();
    await waitFor("b to observe a", () => b.elector.getLeader() === "a", { timeoutMs: 10_000 });
    await b.elector.stop();
    assert.equal(await runB, "stopped");
    assert.equal(b.rec.started, 0);
    assert.equal(b.rec.stopped, 0, "onStoppedLeading only after leading");
    assert.equal((await readLease(ns, "lock")).spec?.holderIdentity, "a");
    assert.ok(a.elector.isLeader());
    await a.elector.stop();
    assert.equal(await runA, "stopped");
  });

  await t.step("an abandoned lease is taken after leaseDuration by our clock", async () => {
    // A holder whose clock runs a year ahead left a Lease that looks valid by its renewTime;
    // expiry counts from when we saw the record last change, so skew cannot block (or hurry)
    // a takeover.
    const ns = await cp.createNamespace("le");
    const future = new Date(Date.now() + 365 * 86_400_000).toISOString().replace("Z", "000Z");
    await admin.create(LEASES(ns), {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "lock", namespace: ns },
      spec: {
        holderIdentity: "ghost",
        leaseDurationSeconds: 2,
        acquireTime: future,
        renewTime: future,
        leaseTransitions: 4,
      },
    });
    using a = await contender(cp, ns, "a");
    const runA = a.elector.run();
    await waitFor("a to observe ghost", () => a.elector.getLeader() === "ghost");
    assert.ok(!a.elector.isLeader(), "a valid-looking lease is not taken at once");
    await waitFor("a to take the abandoned lease", () => a.elector.isLeader(), {
      timeoutMs: 15_000,
    });
    const lease = await readLease(ns, "lock");
    assert.equal(lease.spec?.holderIdentity, "a");
    assert.equal(lease.spec?.leaseTransitions, 5);
    assert.notEqual(lease.spec?.acquireTime, future);
    await a.elector.stop();
    assert.equal(await runA, "stopped");
  });

  await t.step("status merge patches persist condition timestamps correctly", async () => {
    const group = "leader.dco.test";
    const crds: ResourceRef = {
      group: "apiextensions.k8s.io",
      version: "v1",
      plural: "customresourcedefinitions",
    };
    const open = { type: "object", "x-kubernetes-preserve-unknown-fields": true };
    await applyObject(admin, crds, {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: "Cluster",
        names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
        versions: [{
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: { type: "object", properties: { spec: open, status: open } },
          },
        }],
      },
    });
    await cp.waitForCRD(`widgets.${group}`);
    const ref: ResourceRef = { group, version: "v1", plural: "widgets" };
    interface Widget extends KubeObject {
      status?: { phase?: string; conditions?: StatusCondition[]; observedGeneration?: number };
    }
    const created = await waitFor(
      "widget create",
      () =>
        applyObject<Widget>(admin, ref, {
          apiVersion: `${group}/v1`,
          kind: "Widget",
          metadata: { name: "w1" },
          spec: { size: 1 },
        }),
      { timeoutMs: 20_000 },
    );
    const t0 = Date.UTC(2026, 0, 1, 0, 0, 0);
    const t1 = t0 + 3_600_000;

    // First reconcile: status written from nothing.
    const r1 = structuredClone(created);
    r1.status = {
      phase: "Pending",
      observedGeneration: created.metadata.generation,
      conditions: setCondition(r1.status?.conditions, {
        type: "Ready",
        status: "False",
        reason: "Waiting",
        message: "not yet",
      }, t0),
    };
    r1.status.conditions = setCondition(r1.status.conditions, {
      type: "Synced",
      status: "True",
      reason: "Ok",
      message: "",
    }, t0);
    await patchStatus(admin, ref, "w1", created, r1);
    const read1 = await admin.get<Widget>(ref, "w1");
    assert.equal(read1.status?.phase, "Pending");
    assert.deepEqual(read1.status?.conditions, r1.status.conditions);

    // A concurrent writer touches another status field; our next patch must not clobber it.
    await admin.patch(ref, "w1", { status: { foreign: "keep" } }, {
      type: "merge",
      subresource: "status",
    });

    // Second reconcile, from the object as read before the foreign write: Ready's reason
    // changes (timestamp kept), Synced flips (restamped).
    const r2 = structuredClone(read1);
    let conds = setCondition(r2.status?.conditions, {
      type: "Ready",
      status: "False",
      reason: "StillWaiting",
      message: "later",
    }, t1);
    conds = setCondition(
      conds,
      { type: "Synced", status: "False", reason: "Err", message: "x" },
      t1,
    );
    r2.status = { ...r2.status, phase: "Failed", conditions: conds };
    const answer = await patchStatus<Widget>(admin, ref, "w1", read1, r2);
    assert.ok(answer);
    const read2 = await admin.get<Widget & { status?: { foreign?: string } }>(ref, "w1");
    const ready = read2.status?.conditions?.find((c) => c.type === "Ready");
    const synced = read2.status?.conditions?.find((c) => c.type === "Synced");
    assert.equal(ready?.reason, "StillWaiting");
    assert.equal(ready?.lastTransitionTime, "2026-01-01T00:00:00Z", "reason change keeps time");
    assert.equal(synced?.status, "False");
    assert.equal(synced?.lastTransitionTime, "2026-01-01T01:00:00Z", "status flip restamps");
    assert.equal(read2.status?.phase, "Failed");
    assert.equal(read2.status?.foreign, "keep", "fields this reconcile did not change survive");
    assert.deepEqual((read2 as { spec?: unknown }).spec, { size: 1 }, "spec untouched");
  });
}
