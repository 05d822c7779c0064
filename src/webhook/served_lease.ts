/**
 * The served-target Lease publisher of one webhook-server replica
 * (docs/design/webhook.md#the-served-target-lease-report-and-handover-gate): it keeps the
 * Lease `dco-served-<pod>` in the pod's namespace saying which targets this replica can serve,
 * so the manager can tell when a target may be moved onto this instance.
 *
 * - Owner: the Pod (`{apiVersion: v1, kind: Pod, name, uid: POD_UID}`, set only when the Lease
 *   has no owner references), so the Lease is garbage-collected with the pod. Without the UID the
 *   publisher refuses to publish (a Lease without an owner would outlive its pod); `start()` says
 *   so once and publishes nothing.
 * - Labels: `conversion.terasky.com/webhook-server=<cws>` and
 *   `app.kubernetes.io/managed-by=declarative-conversion-operator`.
 * - `spec`: holderIdentity = pod name, leaseDurationSeconds = 90, renewTime = now on every
 *   publish (the heartbeat), acquireTime = now on the first write only.
 * - Payload: the wire format of src/api/served_lease.ts; an oversize set is written as the
 *   truncated marker, never a partial list.
 * - Write path: get; NotFound → create (AlreadyExists ignored); else stamp and plain update.
 * - When: `publish()` on demand; after `start()`, a heartbeat every 30 s and a coalescing
 *   one-slot notification (`notify()`, debounced; a burst ⇒ one extra publish). Publishes never
 *   overlap. A failure is logged and retried on the next tick; it never affects serving.
 *
 * The Lease is read uncached (the replica only needs its own object).
 */
import {
  HEARTBEAT_MS,
  LEASE_DURATION_SECONDS,
  servedAnnotations,
  servedLeaseLabels,
  servedLeaseName,
} from "../api/served_lease.ts";
import type { KubeClient } from "../kube/client.ts";
import { type Clock, realClock } from "../kube/clock.ts";
import { getOrUndefined, isAlreadyExists } from "../kube/errors.ts";
import type { Lease } from "../kube/leader.ts";
import { LEASES } from "../kube/resources.ts";
import { rfc3339Micro } from "../lib/time.ts";
import { createLogger } from "../obs/log.ts";
import type { WebhookLogger } from "./_log.ts";
import { isServable, type RegistryEntry } from "./registry.ts";

/** Options of {@link ServedTargetPublisher}. */
export interface ServedTargetPublisherOptions {
  readonly client: KubeClient;
  /** The pod's namespace (`POD_NAMESPACE`). */
  readonly namespace: string;
  /** The ConversionWebhookServer instance (`--webhook-server-name`). */
  readonly serverName: string;
  /** `POD_NAME`. */
  readonly podName: string;
  /** `POD_UID`; empty or missing ⇒ publishing is refused. */
  readonly podUID: string | undefined;
  /** The current set for heartbeats and notifications; default: the last published set. */
  readonly targets?: () => Iterable<string>;
  /** More annotations written on every publish (`undefined` removes a key), e.g. the serial. */
  readonly annotations?: () => Record<string, string | undefined>;
  readonly clock?: Clock;
  readonly logger?: WebhookLogger;
  /** Heartbeat period; default 30 s. */
  readonly heartbeatMs?: number;
  /** Delay coalescing a burst of `notify()` calls; default 100 ms. */
  readonly debounceMs?: number;
}

/** `publish` was asked of a publisher that has no pod UID. */
export class PublisherDisabledError extends Error {
  override readonly name = "PublisherDisabledError";
}

/** What one successful publish wrote. */
export interface PublishResult {
  readonly lease: Lease;
  /** The set was too large: the truncated marker was written instead of the list. */
  readonly truncated: boolean;
  readonly created: boolean;
}

/** The pod identity from the downward API, or the names of the missing variables. */
export type PodIdentity =
  | {
    readonly ok: true;
    readonly podName: string;
    readonly namespace: string;
    readonly uid: string;
  }
  | { readonly ok: false; readonly missing: string[] };

/** Reads `POD_NAME`, `POD_NAMESPACE` and `POD_UID` (all required to publish). */
export function podIdentityFromEnv(get: (name: string) => string | undefined): PodIdentity {
  const podName = get("POD_NAME") ?? "";
  const namespace = get("POD_NAMESPACE") ?? "";
  const uid = get("POD_UID") ?? "";
  const missing = [
    ...(podName ? [] : ["POD_NAME"]),
    ...(namespace ? [] : ["POD_NAMESPACE"]),
    ...(uid ? [] : ["POD_UID"]),
  ];
  return missing.length ? { ok: false, missing } : { ok: true, podName, namespace, uid };
}

/** The published set of a registry: targets whose entry has a servable plan. */
export function servableTargets(registry: { snapshot(): readonly RegistryEntry[] }): string[] {
  return registry.snapshot().filter(isServable).map((e) => e.target);
}

/** Keeps one replica's served-target Lease current (see the module documentation). */
export class ServedTargetPublisher {
  readonly leaseName: string;
  readonly #o: ServedTargetPublisherOptions;
  readonly #clock: Clock;
  readonly #log: WebhookLogger;
  readonly #heartbeatMs: number;
  readonly #debounceMs: number;
  #last: readonly string[] = [];
  #started = false;
  #stopped = false;
  #refusedLogged = false;
  #published = false;
  #heartbeat: number | undefined;
  #debounce: number | undefined;
  #inFlight: Promise<void> | undefined;
  #pending = false;

  constructor(opts: ServedTargetPublisherOptions) {
    this.#o = opts;
    this.leaseName = servedLeaseName(opts.podName);
    this.#clock = opts.clock ?? realClock;
    this.#log = opts.logger ?? createLogger("webhook.served-lease");
    this.#heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    this.#debounceMs = opts.debounceMs ?? 100;
  }

  /** Whether publishing is possible (pod name, namespace and UID all known). */
  get enabled(): boolean {
    return Boolean(this.#o.podUID && this.#o.podName && this.#o.namespace);
  }

  /**
   * Writes the Lease for `targets` (default: the `targets` source, else the last set) now.
   * Throws {@link PublisherDisabledError} without a pod UID, or the API error.
   */
  async publish(targets?: Iterable<string>): Promise<PublishResult> {
    if (!this.enabled) {
      throw new PublisherDisabledError(
        "refusing to publish the served-target Lease without POD_NAME, POD_NAMESPACE and " +
          "POD_UID (a Lease without an owner would outlive its pod)",
      );
    }
    const set = targets !== undefined
      ? [...targets]
      : this.#o.targets !== undefined
      ? [...this.#o.targets()]
      : [...this.#last];
    const result = await this.#write(set);
    this.#last = set;
    this.#published = true;
    return result;
  }

  /**
   * Like {@link publish} but never throws: a failure is logged ("work cannot be moved onto this
   * instance until it succeeds"); returns whether the Lease was written.
   */
  async publishOrLog(targets?: Iterable<string>): Promise<boolean> {
    try {
      const r = await this.publish(targets);
      if (r.truncated) {
        this.#log.warn("served-target list too large for the Lease; published as truncated", {
          lease: this.leaseName,
        });
      }
      return true;
    } catch (e) {
      if (e instanceof PublisherDisabledError) {
        this.#refused();
        return false;
      }
      this.#log.error(
        "publishing the served-target Lease failed; work cannot be moved onto this instance " +
          "until it succeeds",
        { lease: this.leaseName, namespace: this.#o.namespace, error: e },
      );
      return false;
    }
  }

  /**
   * Starts the loop: publishes now unless a publish already succeeded, then on every heartbeat
   * and after {@link notify}. Returns false (logging once) when publishing is disabled.
   */
  start(): boolean {
    if (!this.enabled) {
      this.#refused();
      return false;
    }
    if (this.#started || this.#stopped) return this.#started && !this.#stopped;
    this.#started = true;
    if (this.#published) this.#armHeartbeat();
    else this.#run();
    return true;
  }

  /** A registry change: republish soon (coalesced). No-op unless started. */
  notify(): void {
    if (!this.#started || this.#stopped || this.#debounce !== undefined) return;
    this.#debounce = this.#clock.setTimeout(() => {
      this.#debounce = undefined;
      this.#run();
    }, this.#debounceMs);
  }

  /** Stops the timers and waits for a publish in flight. The Lease is left to owner GC. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#heartbeat !== undefined) this.#clock.clearTimeout(this.#heartbeat);
    if (this.#debounce !== undefined) this.#clock.clearTimeout(this.#debounce);
    this.#heartbeat = this.#debounce = undefined;
    this.#pending = false;
    await this.#inFlight;
  }

  /** Settles when no publish is in flight (tests). */
  async idle(): Promise<void> {
    while (this.#inFlight !== undefined) await this.#inFlight;
  }

  #refused(): void {
    if (this.#refusedLogged) return;
    this.#refusedLogged = true;
    this.#log.warn(
      "served-target Lease publishing disabled: POD_NAME, POD_NAMESPACE and POD_UID must all " +
        "be set (conversions are unaffected; the manager cannot move work onto this instance)",
      { lease: this.leaseName },
    );
  }

  /** One publish, serialized: a request during a publish runs once more afterwards. */
  #run(): void {
    if (this.#stopped) return;
    if (this.#inFlight !== undefined) {
      this.#pending = true;
      return;
    }
    if (this.#heartbeat !== undefined) this.#clock.clearTimeout(this.#heartbeat);
    this.#heartbeat = undefined;
    this.#inFlight = (async () => {
      await this.publishOrLog();
    })().finally(() => {
      this.#inFlight = undefined;
      if (this.#stopped) return;
      if (this.#pending) {
        this.#pending = false;
        this.#run();
      } else {
        this.#armHeartbeat();
      }
    });
  }

  #armHeartbeat(): void {
    if (this.#stopped) return;
    if (this.#heartbeat !== undefined) this.#clock.clearTimeout(this.#heartbeat);
    this.#heartbeat = this.#clock.setTimeout(() => {
      this.#heartbeat = undefined;
      this.#run();
    }, this.#heartbeatMs);
  }

  async #write(targets: readonly string[]): Promise<PublishResult> {
    const { client, namespace, podName, podUID, serverName } = this.#o;
    const ref = LEASES(namespace);
    const now = rfc3339Micro(this.#clock.now());
    const served = servedAnnotations(targets);
    const payload = { ...this.#o.annotations?.(), ...served.annotations };
    const truncated = served.truncated;
    const stamp = (lease: Lease): Lease => {
      const annotations: Record<string, string> = { ...lease.metadata.annotations };
      for (const [k, v] of Object.entries(payload)) {
        if (v === undefined) delete annotations[k];
        else annotations[k] = v;
      }
      const owners = lease.metadata.ownerReferences;
      return {
        ...lease,
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: {
          ...lease.metadata,
          name: this.leaseName,
          namespace,
          labels: { ...lease.metadata.labels, ...servedLeaseLabels(serverName) },
          annotations,
          ownerReferences: owners?.length
            ? owners
            : [{ apiVersion: "v1", kind: "Pod", name: podName, uid: podUID }],
        },
        spec: {
          ...lease.spec,
          holderIdentity: podName,
          leaseDurationSeconds: LEASE_DURATION_SECONDS,
          acquireTime: lease.spec?.acquireTime || now,
          renewTime: now,
        },
      };
    };
    const current = await getOrUndefined(client.get<Lease>(ref, this.leaseName));
    if (current === undefined) {
      const fresh = stamp({ metadata: {} });
      try {
        return { lease: await client.create<Lease>(ref, fresh), truncated, created: true };
      } catch (e) {
        // Another writer (a previous incarnation) made it: the next tick updates it.
        if (isAlreadyExists(e)) return { lease: fresh, truncated, created: false };
        throw e;
      }
    }
    return { lease: await client.update<Lease>(ref, stamp(current)), truncated, created: false };
  }
}
