/**
 * Lease leader election (`coordination.k8s.io/v1`) for the manager's `--leader-elect`
 * (docs/design/kube.md#leader-election-and-its-lease), with client-go's `leaderelection` semantics
 * so a Deno manager and a Go one would respect each other's Lease: acquire when the Lease is
 * absent, released (no holder) or expired; every write is an optimistic-concurrency update (a
 * conflict means another candidate won); the leader renews every `retryPeriod`.
 *
 * Never two leaders at once — stricter than client-go in three places:
 * - a renewal that reads another holder in the Lease steps down at once (no retrying for the
 *   rest of the renew window), and `renewDeadline` counts from the last successful renewal;
 * - a stopping leader aborts its work's signal, keeps renewing while the work winds down (up to
 *   `stopTimeoutMs`) and releases only once the work has ended — if it has not, it leaves the
 *   Lease to expire;
 * - a lost leadership is never released (the work may still be winding down; the owner exits).
 *
 * Expiry is judged like client-go: by this process's clock, from the moment it last saw the
 * Lease record change, plus `leaseDuration` — never by comparing the holder's `renewTime` with
 * our clock, so clock skew between replicas cannot make two leaders. `leaseDuration >
 * renewDeadline` guarantees the old leader has stepped down before anyone may take over.
 */
import { createLogger, type Logger, serializeError } from "../obs/log.ts";
import { type Clock, realClock } from "./clock.ts";
import { rfc3339Micro } from "../lib/time.ts";
import type { KubeClient } from "./client.ts";
import { getOrUndefined, isAlreadyExists, isConflict, isNotFound } from "./errors.ts";
import type { KubeObject, ResourceRef } from "./objects.ts";
import { LEASES } from "./resources.ts";
import { leaderStatusGauge } from "./leader_metrics.ts";
import type { Registry } from "prom-client";

/** `spec` of a `coordination.k8s.io/v1` Lease (times are `metav1.MicroTime`). */
export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  [key: string]: unknown;
}

/** A `coordination.k8s.io/v1` Lease. */
export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** The manager's leader-election Lease name. */
export const MANAGER_LEASE_NAME = "declarative-conversion-operator.terasky.com";

/** client-go's jitter factor of the acquire loop (`JitterFactor = 1.2`). */
const JITTER_FACTOR = 1.2;

/** Options of {@link LeaderElector}. */
export interface LeaderElectorOptions {
  client: KubeClient;
  namespace: string;
  /** Lease name. */
  name: string;
  /** This candidate's unique identity (e.g. `<pod>_<uuid>`). */
  identity: string;
  /** How long a non-leader waits after the last observed change before taking over. 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a failed renewal before stepping down. 10 s. */
  renewDeadlineMs?: number;
  /** Interval between acquire attempts (jittered) and renewals. 2 s. */
  retryPeriodMs?: number;
  /**
   * How long a stopping leader waits (renewing) for the work of `onStartedLeading` to end
   * before it gives up releasing; default `leaseDuration`.
   */
  stopTimeoutMs?: number;
  clock?: Clock;
  /**
   * Called once leadership is acquired; `signal` aborts when it is lost or the elector stops,
   * and the work must stop writing then. The returned promise is the work: it must settle once
   * the work has ended; a stopping leader releases the Lease only after it settled (up to
   * `stopTimeoutMs`), so a successor never starts while it runs. A rejection is logged.
   */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called once after leadership ends (lost or stopped); never if it was not acquired. */
  onStoppedLeading: () => void;
  /** Called when the observed holder changes (including to ourselves); "" = released. */
  onNewLeader?: (identity: string) => void;
  logger?: Logger;
  /** Where `leader_election_master_status{name}` goes (./leader_metrics.ts); 0 from the start. */
  registry?: Registry;
}

/** Why {@link LeaderElector.run} returned. */
export type LeaderElectionOutcome = "stopped" | "lost";

/**
 * One candidate for one Lease. {@link run} blocks: it acquires (retrying), leads and renews, and
 * returns when leadership is lost (`"lost"`; like client-go's `Run`, it does not campaign again
 * — the manager exits) or when stopped (`"stopped"`, after releasing the Lease if held).
 */
export class LeaderElector {
  readonly identity: string;
  readonly namespace: string;
  readonly name: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly stopTimeoutMs: number;
  #opts: LeaderElectorOptions;
  #client: KubeClient;
  #clock: Clock;
  #log: Logger;
  #ref: ResourceRef;
  #leading = false;
  /** From acquiring until stepped down or wound down: a Lease naming anyone else is foreign. */
  #holding = false;
  #observed: string | undefined;
  #observedTime = 0;
  #observedHolder: string | undefined;
  /** Our clock when the last successful acquire/renew write was sent. */
  #renewedAt = -Infinity;
  #stop: AbortController | undefined;
  #done: Promise<LeaderElectionOutcome> | undefined;
  /** Sets `leader_election_master_status` for this Lease (no-op without a registry). */
  #status: (leading: boolean) => void;

  constructor(opts: LeaderElectorOptions) {
    this.#opts = opts;
    this.#client = opts.client;
    this.identity = opts.identity;
    this.namespace = opts.namespace;
    this.name = opts.name;
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    this.stopTimeoutMs = opts.stopTimeoutMs ?? this.leaseDurationMs;
    this.#clock = opts.clock ?? realClock;
    this.#ref = LEASES(opts.namespace);
    const gauge = opts.registry === undefined ? undefined : leaderStatusGauge(opts.registry);
    this.#status = (leading) => gauge?.set({ name: opts.name }, leading ? 1 : 0);
    this.#status(false);
    this.#log = (opts.logger ?? createLogger("kube.leader")).with({
      lease: `${opts.namespace}/${opts.name}`,
      identity: opts.identity,
    });
    if (!opts.identity) throw new Error("leader election: identity must not be empty");
    if (!opts.name || !opts.namespace) throw new Error("leader election: lease name/namespace");
    if (!(this.leaseDurationMs > this.renewDeadlineMs)) {
      throw new Error("leader election: leaseDuration must be greater than renewDeadline");
    }
    if (!(this.renewDeadlineMs > JITTER_FACTOR * this.retryPeriodMs) || this.retryPeriodMs <= 0) {
      throw new Error("leader election: renewDeadline must be greater than 1.2 × retryPeriod > 0");
    }
  }

  /**
   * Whether this candidate currently leads: it has not stepped down and its last renewal is
   * younger than renewDeadline by the clock (so a late timer cannot stretch leadership).
   */
  isLeader(): boolean {
    return this.#leading && this.#clock.now() < this.#renewedAt + this.renewDeadlineMs;
  }

  /** The holder last observed in the Lease ("" = released; undefined = not read yet). */
  getLeader(): string | undefined {
    return this.#observedHolder;
  }

  /** Starts {@link run} in the background (no-op when running); {@link stop} ends it. */
  start(): void {
    if (this.#done) return;
    this.run().catch((e) =>
      this.#log.error("leader election failed", { error: serializeError(e) })
    );
  }

  /**
   * Stops campaigning/leading: aborts the work's signal, waits for the work (renewing, up to
   * stopTimeoutMs), releases the Lease if held and the work ended, and waits for {@link run}.
   */
  async stop(): Promise<void> {
    this.#stop?.abort(new Error("leader election stopped"));
    await this.#done?.catch(() => {});
  }

  /** Campaigns, leads, renews; see the class doc. `signal` stops it like {@link stop}. */
  run(signal?: AbortSignal): Promise<LeaderElectionOutcome> {
    if (this.#done) throw new Error("leader election: already running");
    const stop = new AbortController();
    this.#stop = stop;
    const onAbort = () => stop.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    const done = this.#run(stop.signal).finally(() => {
      signal?.removeEventListener("abort", onAbort);
      this.#done = undefined;
      this.#stop = undefined;
    });
    this.#done = done;
    return done;
  }

  async #run(stop: AbortSignal): Promise<LeaderElectionOutcome> {
    // Acquire.
    this.#log.info("attempting to acquire leader lease");
    for (;;) {
      if (stop.aborted) return "stopped";
      if (await this.#tryAcquireOrRenew(stop, this.renewDeadlineMs) === "held") break;
      const jittered = this.retryPeriodMs * (1 + Math.random() * JITTER_FACTOR);
      await this.#sleep(jittered, stop);
    }
    if (stop.aborted) {
      await this.#release();
      return "stopped";
    }
    this.#leading = true;
    this.#holding = true;
    this.#status(true);
    this.#log.info("successfully acquired lease");
    const lead = new AbortController();
    let work: Promise<void> = Promise.resolve();
    try {
      work = Promise.resolve(this.#opts.onStartedLeading(lead.signal)).catch((e) =>
        this.#log.error("onStartedLeading failed", { error: serializeError(e) })
      );
    } catch (e) {
      this.#log.error("onStartedLeading failed", { error: serializeError(e) });
    }

    // Renew until a renewal fails for good or we are stopped.
    const outcome = await this.#keep(stop);
    this.#leading = false;
    this.#status(false);
    lead.abort(new Error(`leadership ${outcome}`));
    if (outcome === "stopped") {
      // Still the holder: keep the Lease (renewing) until the work has ended, then release so
      // a successor takes over at once. Work that outlives stopTimeoutMs (or a Lease that can
      // no longer be renewed) keeps the Lease from being released: it expires leaseDuration
      // after the last renewal instead.
      const ended = await this.#windDown(work);
      if (ended === "ended") await this.#release();
      else if (ended === "timeout") {
        this.#log.warn("work did not end in time; the lease is left to expire", {
          stopTimeout: this.stopTimeoutMs,
        });
      } else {
        this.#log.warn("lease lost while the work wound down; not released", {
          holder: this.#observedHolder,
        });
      }
    }
    this.#holding = false;
    try {
      this.#opts.onStoppedLeading();
    } catch (e) {
      this.#log.error("onStoppedLeading failed", { error: serializeError(e) });
    }
    return outcome;
  }

  /** Renews every retryPeriod while leading; "stopped" on `stop`, "lost" when it must step down. */
  async #keep(stop: AbortSignal): Promise<LeaderElectionOutcome> {
    for (;;) {
      await this.#sleep(this.retryPeriodMs, stop);
      if (stop.aborted) return "stopped";
      const renewed = await this.#renew(stop);
      if (renewed === "held") continue;
      if (stop.aborted && renewed !== "foreign") return "stopped";
      this.#log.error("leadership lost", {
        reason: renewed === "foreign" ? "the lease names another holder" : "renewDeadline passed",
        holder: this.#observedHolder,
        renewDeadline: this.renewDeadlineMs,
      });
      return "lost";
    }
  }

  /**
   * After a stop: renews every retryPeriod until `work` settles ("ended"), stopTimeoutMs passes
   * ("timeout") or a renewal fails for good ("lost").
   */
  async #windDown(work: Promise<void>): Promise<"ended" | "timeout" | "lost"> {
    let settled = false;
    const ended = work.then(() => settled = true);
    const bound = new AbortController();
    const until = this.#clock.now() + this.stopTimeoutMs;
    const wake = new AbortController();
    ended.then(() => wake.abort());
    try {
      for (;;) {
        if (settled) return "ended";
        const left = until - this.#clock.now();
        if (left <= 0) return "timeout";
        await this.#sleep(Math.min(this.retryPeriodMs, left), wake.signal);
        if (settled) return "ended";
        if (this.#clock.now() >= until) return "timeout";
        if (await this.#renew(bound.signal) !== "held") return settled ? "ended" : "lost";
      }
    } finally {
      bound.abort();
    }
  }

  /**
   * One renewal window: retry every retryPeriod until a renewal lands ("held"), the Lease names
   * another holder ("foreign": step down at once), or renewDeadline has passed since the last
   * successful renewal ("expired"); "expired" too when stopped.
   */
  async #renew(stop: AbortSignal): Promise<"held" | "foreign" | "expired"> {
    for (;;) {
      const left = this.#renewedAt + this.renewDeadlineMs - this.#clock.now();
      if (left <= 0 || stop.aborted) return "expired";
      const got = await this.#tryAcquireOrRenew(stop, left);
      if (got !== "retry") return got;
      const wait = Math.min(
        this.retryPeriodMs,
        this.#renewedAt + this.renewDeadlineMs - this.#clock.now(),
      );
      if (wait <= 0) return "expired";
      await this.#sleep(wait, stop);
    }
  }

  /**
   * client-go's `tryAcquireOrRenew`: read the Lease (create it when absent); refuse when another
   * holder's lease is still valid by our observation; otherwise write ourselves as holder with
   * the read resourceVersion ("held"). While holding, a Lease naming anyone else (or no one) is
   * "foreign": someone took it, and we must not write it back. Any error or conflict is "retry".
   */
  async #tryAcquireOrRenew(
    stop: AbortSignal,
    timeoutMs: number,
  ): Promise<"held" | "foreign" | "retry"> {
    const now = this.#clock.now();
    const stamp = rfc3339Micro(now);
    const call = { signal: stop, timeoutMs: Math.max(1, Math.ceil(timeoutMs)) };
    const durationSeconds = Math.max(1, Math.ceil(this.leaseDurationMs / 1000));
    let lease: Lease | undefined;
    try {
      lease = await getOrUndefined(this.#client.get<Lease>(this.#ref, this.name, call));
    } catch (e) {
      if (!stop.aborted) this.#log.warn("error retrieving lease", { error: serializeError(e) });
      return "retry";
    }
    if (lease === undefined) {
      if (this.#holding) return "foreign"; // deleted under us
      return await this.#write(
        now,
        "creating",
        stop,
        isAlreadyExists,
        () =>
          this.#client.create<Lease>(this.#ref, {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name: this.name, namespace: this.namespace },
            spec: {
              holderIdentity: this.identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: stamp,
              renewTime: stamp,
              leaseTransitions: 0,
            },
          }, call),
      );
    }
    this.#observe(lease);
    const old = lease.spec ?? {};
    const holder = old.holderIdentity ?? "";
    if (this.#holding && holder !== this.identity) return "foreign";
    if (holder && holder !== this.identity && this.#observedTime + this.leaseDurationMs > now) {
      return "retry"; // held by another, not expired
    }
    const same = holder === this.identity;
    const spec: LeaseSpec = {
      ...old,
      holderIdentity: this.identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: same && old.acquireTime ? old.acquireTime : stamp,
      renewTime: stamp,
      leaseTransitions: same ? (old.leaseTransitions ?? 0) : (old.leaseTransitions ?? 0) + 1,
    };
    const current = lease;
    return await this.#write(
      now,
      "updating",
      stop,
      isConflict,
      () => this.#client.update<Lease>(this.#ref, { ...current, spec }, call),
    );
  }

  /**
   * One Lease write sent at `sentAt`: observed and "held" when it lands (leadership then counts
   * from `sentAt`); "retry" when it fails, logged unless we were stopped or the failure is the
   * expected race (`lost`: another candidate wrote first).
   */
  async #write(
    sentAt: number,
    what: "creating" | "updating",
    stop: AbortSignal,
    lost: (e: unknown) => boolean,
    write: () => Promise<Lease>,
  ): Promise<"held" | "retry"> {
    try {
      this.#observe(await write());
      this.#renewedAt = sentAt;
      return "held";
    } catch (e) {
      if (!stop.aborted && !lost(e)) {
        this.#log.warn(`error ${what} lease`, { error: serializeError(e) });
      }
      return "retry";
    }
  }

  /** Records the Lease record; a changed record restarts the local expiry clock. */
  #observe(lease: Lease): void {
    const spec = lease.spec ?? {};
    const record = JSON.stringify([
      spec.holderIdentity ?? "",
      spec.leaseDurationSeconds,
      spec.acquireTime,
      spec.renewTime,
      spec.leaseTransitions,
    ]);
    if (record === this.#observed) return;
    this.#observed = record;
    this.#observedTime = this.#clock.now();
    const holder = spec.holderIdentity ?? "";
    if (holder !== this.#observedHolder) {
      this.#observedHolder = holder;
      if (holder) this.#log.info("new leader observed", { leader: holder });
      try {
        this.#opts.onNewLeader?.(holder);
      } catch (e) {
        this.#log.error("onNewLeader failed", { error: serializeError(e) });
      }
    }
  }

  /**
   * Clears `holderIdentity` if we still hold the Lease (client-go's release: holder "", duration
   * 1 s, transitions kept), so a successor acquires at once instead of waiting out the lease.
   * Best effort, bounded by renewDeadline; a conflict means someone else already wrote it.
   */
  async #release(): Promise<void> {
    const call = { timeoutMs: this.renewDeadlineMs };
    try {
      const lease = await this.#client.get<Lease>(this.#ref, this.name, call);
      if ((lease.spec?.holderIdentity ?? "") !== this.identity) return;
      const stamp = rfc3339Micro(this.#clock.now());
      const spec: LeaseSpec = {
        ...lease.spec,
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: stamp,
        renewTime: stamp,
        leaseTransitions: lease.spec?.leaseTransitions ?? 0,
      };
      const updated = await this.#client.update<Lease>(this.#ref, { ...lease, spec }, call);
      this.#observe(updated);
      this.#log.info("released leader lease");
    } catch (e) {
      if (isNotFound(e)) return;
      this.#log.warn("failed to release lease", { error: serializeError(e) });
    }
  }

  /** Waits `ms` on the injected clock; resolves early when `signal` aborts. */
  #sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = () => {
        this.#clock.clearTimeout(id);
        resolve();
      };
      const id = this.#clock.setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
