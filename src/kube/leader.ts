/**
 * Lease leader election (`coordination.k8s.io/v1`) for the manager's `--leader-elect`
 * (docs/design/kube.md#leader-election-and-its-lease), with client-go's `leaderelection` semantics so a Deno manager and a Go one
 * would respect each other's Lease: acquire when the Lease is absent, released (no holder) or
 * expired; every write is an optimistic-concurrency update (a conflict means another candidate
 * won); the leader renews every `retryPeriod` and steps down when it could not renew for
 * `renewDeadline`; stopping releases the Lease so a successor takes over at once.
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
  clock?: Clock;
  /**
   * Called once leadership is acquired; `signal` aborts when it is lost or the elector stops.
   * A returned promise is awaited (up to leaseDuration) before a stopping leader releases the
   * Lease, so the work can wind down before a successor starts; its rejection is logged.
   */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called once after leadership ends (lost or stopped); never if it was not acquired. */
  onStoppedLeading: () => void;
  /** Called when the observed holder changes (including to ourselves); "" = released. */
  onNewLeader?: (identity: string) => void;
  logger?: Logger;
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
  #opts: LeaderElectorOptions;
  #client: KubeClient;
  #clock: Clock;
  #log: Logger;
  #ref: ResourceRef;
  #leading = false;
  #observed: string | undefined;
  #observedTime = 0;
  #observedHolder: string | undefined;
  #stop: AbortController | undefined;
  #done: Promise<LeaderElectionOutcome> | undefined;

  constructor(opts: LeaderElectorOptions) {
    this.#opts = opts;
    this.#client = opts.client;
    this.identity = opts.identity;
    this.namespace = opts.namespace;
    this.name = opts.name;
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    this.#clock = opts.clock ?? realClock;
    this.#ref = LEASES(opts.namespace);
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

  /** Whether this candidate currently leads. */
  isLeader(): boolean {
    return this.#leading;
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

  /** Stops campaigning/leading, releases the Lease if held, and waits for {@link run} to end. */
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
      if (await this.#tryAcquireOrRenew(stop, this.renewDeadlineMs)) break;
      const jittered = this.retryPeriodMs * (1 + Math.random() * JITTER_FACTOR);
      await this.#sleep(jittered, stop);
    }
    if (stop.aborted) {
      await this.#release();
      return "stopped";
    }
    this.#leading = true;
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

    // Renew until a renewal window fails or we are stopped.
    let outcome: LeaderElectionOutcome = "stopped";
    for (;;) {
      await this.#sleep(this.retryPeriodMs, stop);
      if (stop.aborted) break;
      if (await this.#renew(stop)) continue;
      if (stop.aborted) break;
      outcome = "lost";
      this.#log.error("failed to renew lease: leadership lost", {
        renewDeadline: this.renewDeadlineMs,
      });
      break;
    }

    this.#leading = false;
    lead.abort(new Error(`leadership ${outcome}`));
    if (outcome === "stopped") {
      // Let the leader's work wind down before a successor may start (bounded: after
      // leaseDuration without renewals the Lease has expired for everyone anyway).
      const bound = new AbortController();
      await Promise.race([work, this.#sleep(this.leaseDurationMs, bound.signal)]);
      bound.abort();
    }
    await this.#release();
    try {
      this.#opts.onStoppedLeading();
    } catch (e) {
      this.#log.error("onStoppedLeading failed", { error: serializeError(e) });
    }
    return outcome;
  }

  /**
   * One renewal window (client-go's `renew`): retry every retryPeriod until a renewal succeeds
   * (true) or renewDeadline has passed since the window opened (false); false when stopped.
   */
  async #renew(stop: AbortSignal): Promise<boolean> {
    const deadline = this.#clock.now() + this.renewDeadlineMs;
    for (;;) {
      const left = deadline - this.#clock.now();
      if (left <= 0 || stop.aborted) return false;
      if (await this.#tryAcquireOrRenew(stop, left)) return true;
      const wait = Math.min(this.retryPeriodMs, deadline - this.#clock.now());
      if (wait <= 0) return false;
      await this.#sleep(wait, stop);
    }
  }

  /**
   * client-go's `tryAcquireOrRenew`: read the Lease (create it when absent); refuse when another
   * holder's lease is still valid by our observation; otherwise write ourselves as holder with
   * the read resourceVersion. Any error or conflict is a `false`.
   */
  async #tryAcquireOrRenew(stop: AbortSignal, timeoutMs: number): Promise<boolean> {
    const now = this.#clock.now();
    const stamp = rfc3339Micro(now);
    const call = { signal: stop, timeoutMs: Math.max(1, Math.ceil(timeoutMs)) };
    const durationSeconds = Math.max(1, Math.ceil(this.leaseDurationMs / 1000));
    let lease: Lease | undefined;
    try {
      lease = await getOrUndefined(this.#client.get<Lease>(this.#ref, this.name, call));
    } catch (e) {
      if (!stop.aborted) this.#log.warn("error retrieving lease", { error: serializeError(e) });
      return false;
    }
    if (lease === undefined) {
      return await this.#write(
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
    if (holder && holder !== this.identity && this.#observedTime + this.leaseDurationMs > now) {
      return false; // held by another, not expired
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
      "updating",
      stop,
      isConflict,
      () => this.#client.update<Lease>(this.#ref, { ...current, spec }, call),
    );
  }

  /**
   * One Lease write: observed and `true` when it lands; `false` when it fails, logged unless we
   * were stopped or the failure is the expected race (`lost`: another candidate wrote first).
   */
  async #write(
    what: "creating" | "updating",
    stop: AbortSignal,
    lost: (e: unknown) => boolean,
    write: () => Promise<Lease>,
  ): Promise<boolean> {
    try {
      this.#observe(await write());
      return true;
    } catch (e) {
      if (!stop.aborted && !lost(e)) {
        this.#log.warn(`error ${what} lease`, { error: serializeError(e) });
      }
      return false;
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
