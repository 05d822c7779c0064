/**
 * LeaderElector on a fake clock and an in-memory Lease (no cluster): a stopping leader aborts
 * its work, keeps the Lease (renewing) while the in-flight reconcile finishes and releases only
 * after; work that outlives stopTimeout leaves the Lease to expire instead of releasing it; a
 * renewal that finds another holder steps down at once, with no retry and no write; leadership
 * counts from the last successful renewal, and a lost Lease is never released; a Lease taken
 * (or cleared) while the work winds down is left alone. The fenced
 * client view (`KubeClient.withSignal`) sends nothing once its signal aborted and aborts what is
 * in flight.
 */
import assert from "node:assert/strict";
import {
  Controller,
  FakeClock,
  KubeApiError,
  KubeClient,
  type KubeObject,
  LeaderElector,
  type Lease,
} from "../../src/kube/mod.ts";
import { createMetricsRegistry } from "../../src/obs/metrics.ts";
import type { Registry } from "prom-client";
import { deferred, sample, scrape, settle } from "./_helpers.ts";

/** One Lease in memory with optimistic concurrency, and a log of every write's holder. */
class FakeLeases {
  lease: Lease | undefined;
  rv = 0;
  writes: string[] = [];
  gets = 0;
  failWrites = false;
  readonly client = {
    get: (): Promise<Lease> => {
      this.gets++;
      if (!this.lease) return Promise.reject(new KubeApiError(404, "NotFound", "not found"));
      return Promise.resolve(structuredClone(this.lease));
    },
    create: (_ref: unknown, obj: Lease): Promise<Lease> => {
      if (this.failWrites) return Promise.reject(new Error("cut"));
      if (this.lease) return Promise.reject(new KubeApiError(409, "AlreadyExists", "exists"));
      return Promise.resolve(this.#store(obj));
    },
    update: (_ref: unknown, obj: Lease): Promise<Lease> => {
      if (this.failWrites) return Promise.reject(new Error("cut"));
      if (obj.metadata.resourceVersion !== String(this.rv)) {
        return Promise.reject(new KubeApiError(409, "Conflict", "conflict"));
      }
      return Promise.resolve(this.#store(obj));
    },
  } as unknown as KubeClient;

  #store(obj: Lease): Lease {
    this.rv++;
    this.lease = structuredClone({
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: String(this.rv) },
    });
    this.writes.push(obj.spec?.holderIdentity ?? "");
    return structuredClone(this.lease);
  }

  /** Another candidate writes itself as holder. */
  takeOver(holder: string): void {
    this.#store({ ...this.lease!, spec: { ...this.lease!.spec, holderIdentity: holder } });
  }

  get holder(): string | undefined {
    return this.lease?.spec?.holderIdentity ?? undefined;
  }
}

const TIMING = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 };

function elector(
  leases: FakeLeases,
  clock: FakeClock,
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>,
  extra: { stopTimeoutMs?: number; registry?: Registry } = {},
) {
  const rec = { stopped: 0, signal: undefined as AbortSignal | undefined };
  const e = new LeaderElector({
    client: leases.client,
    namespace: "ns",
    name: "lock",
    identity: "a",
    clock,
    ...TIMING,
    ...extra,
    onStartedLeading: (signal) => {
      rec.signal = signal;
      return onStartedLeading(signal);
    },
    onStoppedLeading: () => rec.stopped++,
  });
  return { e, rec };
}

/** Advances the fake clock in steps, letting promise chains run between them. */
async function tick(clock: FakeClock, ms: number, step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    await settle();
  }
}

Deno.test("a stopping leader stops its controller and waits for the in-flight reconcile before it releases", async () => {
  const clock = new FakeClock();
  const leases = new FakeLeases();
  const events: string[] = [];
  const inFlight = deferred();
  const reconciled: string[] = [];
  const controller = new Controller({
    name: "demo",
    registry: createMetricsRegistry().registry,
    clock,
    reconcile: async (key, signal) => {
      reconciled.push(key);
      events.push(`reconcile ${key} start`);
      await inFlight.promise;
      events.push(`reconcile ${key} end (aborted=${signal.aborted})`);
    },
  });
  const { e, rec } = elector(leases, clock, async (signal) => {
    await controller.run(signal);
    events.push("work ended");
  });
  const run = e.run();
  await settle();
  assert.ok(e.isLeader());
  controller.enqueue("k1");
  await settle();
  assert.deepEqual(events, ["reconcile k1 start"]);

  const stopped = e.stop();
  await settle();
  assert.ok(rec.signal?.aborted, "the work's signal aborts first");
  assert.ok(!e.isLeader());
  controller.enqueue("k2"); // a stopped controller hands out nothing more
  const writesBefore = leases.writes.length;
  await tick(clock, 2000);
  assert.equal(leases.holder, "a", "the Lease is kept while the reconcile is in flight");
  assert.ok(leases.writes.length > writesBefore, "and renewed meanwhile");
  assert.ok(leases.writes.slice(writesBefore).every((h) => h === "a"));

  inFlight.resolve();
  await stopped;
  assert.equal(await run, "stopped");
  assert.equal(leases.holder, "", "released after the work ended");
  assert.deepEqual(events, ["reconcile k1 start", "reconcile k1 end (aborted=true)", "work ended"]);
  assert.deepEqual(reconciled, ["k1"]);
  assert.equal(rec.stopped, 1);
});

Deno.test("work that outlives stopTimeout leaves the Lease to expire: no release", async () => {
  const clock = new FakeClock();
  const leases = new FakeLeases();
  const { e } = elector(leases, clock, () => new Promise<void>(() => {}), {
    stopTimeoutMs: 1500,
  });
  const run = e.run();
  await settle();
  assert.ok(e.isLeader());
  const stopped = e.stop();
  await tick(clock, 2000);
  await stopped;
  assert.equal(await run, "stopped");
  assert.equal(leases.holder, "a", "never released while the work may still write");
  assert.ok(!leases.writes.includes(""));
});

Deno.test("a renewal that finds another holder steps down at once: no retry, no write", async () => {
  const clock = new FakeClock();
  const leases = new FakeLeases();
  let workEnded = false;
  const { e, rec } = elector(leases, clock, async (signal) => {
    await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
    workEnded = true;
  });
  const run = e.run();
  await settle();
  await tick(clock, 1000); // a couple of renewals
  assert.ok(e.isLeader());
  leases.takeOver("b");
  const gets = leases.gets;
  const writes = leases.writes.length;
  let outcome: string | undefined;
  run.then((o) => outcome = o);
  clock.advance(TIMING.retryPeriodMs); // the next renewal
  await settle();
  assert.equal(outcome, "lost", "stepped down on the first renewal that saw b");
  assert.equal(leases.gets, gets + 1, "read once, not retried for the rest of renewDeadline");
  assert.equal(leases.writes.length, writes, "nothing written over b's Lease");
  assert.equal(leases.holder, "b");
  assert.ok(rec.signal?.aborted && workEnded, "the work was told to stop");
  assert.ok(!e.isLeader());
  assert.equal(e.getLeader(), "b");
  assert.equal(rec.stopped, 1);
});

Deno.test("renewDeadline counts from the last successful renewal; a lost Lease is not released", async () => {
  const clock = new FakeClock();
  const leases = new FakeLeases();
  const { e, rec } = elector(leases, clock, () => {});
  const run = e.run();
  await settle();
  await tick(clock, 1000);
  assert.ok(e.isLeader());
  leases.failWrites = true;
  const lastRenewal = clock.now(); // renewals happen on retryPeriod boundaries; this is one
  let outcome: string | undefined;
  run.then((o) => outcome = o);
  // Leadership ends renewDeadline after the last successful renewal was sent, by the clock.
  while (e.isLeader()) {
    clock.advance(100);
    await settle();
  }
  assert.ok(clock.now() <= lastRenewal + TIMING.renewDeadlineMs);
  await settle();
  assert.equal(outcome, "lost");
  assert.ok(rec.signal?.aborted);
  leases.failWrites = false;
  await tick(clock, 1000);
  assert.equal(leases.holder, "a", "a lost Lease is left to expire, not released");
});

Deno.test("a client view fenced by a signal sends nothing once it aborted and aborts in-flight requests", async () => {
  let requests = 0;
  const hold = deferred();
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      requests++;
      if (new URL(req.url).pathname.endsWith("/slow")) await hold.promise;
      return Response.json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } });
    },
  );
  using base = new KubeClient({
    server: `http://127.0.0.1:${server.addr.port}`,
    namespace: "default",
    description: "test",
  });
  const term = new AbortController();
  const fenced = base.withSignal(term.signal);
  const ref = { group: "", version: "v1", plural: "configmaps", namespace: "default" };
  assert.equal((await fenced.get<KubeObject>(ref, "x")).metadata.name, "x");
  const slow = fenced.get(ref, "slow");
  await settle(20);
  assert.equal(requests, 2);
  term.abort(new Error("term ended"));
  await assert.rejects(slow, /term ended/);
  await assert.rejects(fenced.get(ref, "x"), /term ended/);
  assert.equal(requests, 2, "nothing sent after the fence closed");
  assert.equal((await base.get<KubeObject>(ref, "x")).metadata.name, "x", "the base is open");
  fenced.close(); // closes nothing of the base
  assert.equal((await base.get<KubeObject>(ref, "x")).metadata.name, "x");
  hold.resolve();
});

for (const other of ["b", ""]) {
  Deno.test(`a Lease taken (holder "${other}") while the work winds down is neither written over nor released`, async () => {
    const clock = new FakeClock();
    const leases = new FakeLeases();
    const { e } = elector(leases, clock, () => new Promise<void>(() => {}));
    const run = e.run();
    await settle();
    const stopped = e.stop();
    await settle();
    leases.takeOver(other);
    const writes = leases.writes.length;
    await tick(clock, TIMING.leaseDurationMs + 1000);
    await stopped;
    assert.equal(await run, "stopped");
    assert.equal(leases.holder, other);
    assert.equal(leases.writes.length, writes, "nothing written after it was taken");
  });
}

Deno.test("leader_election_master_status{name} is 0 before and after leading, 1 while leading", async () => {
  const clock = new FakeClock();
  const leases = new FakeLeases();
  const { registry } = createMetricsRegistry({ runtime: false });
  const status = async () =>
    sample(await scrape(registry), "leader_election_master_status", { name: "lock" });
  const { e } = elector(leases, clock, () => {}, { registry });
  assert.equal(await status(), 0);
  const run = e.run();
  await settle();
  assert.ok(e.isLeader());
  assert.equal(await status(), 1);
  await e.stop();
  assert.equal(await run, "stopped");
  assert.equal(await status(), 0);
});
