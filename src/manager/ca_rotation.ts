/**
 * Rotation of the built-in CA without an outage (docs/operations.md "Rotating the built-in CA").
 * One step machine, run by the leader (src/manager/ca_rotation_setup.ts), whose state lives in
 * the CA Secret `dco-webhook-ca` itself — annotations for the phase, keys for the CAs — so a new
 * leader continues where the last one stopped:
 *
 * | phase       | signing CA (`tls.*`) | trust bundle (`ca.crt`) | `next.*` | leaves next step when                              |
 * | ----------- | -------------------- | ----------------------- | -------- | -------------------------------------------------- |
 * | (none)      | old                  | old                     | —        | the CA is due, or `conversion.terasky.com/rotate-ca` is set |
 * | `Trusting`  | old                  | old + new               | new      | every trust store carries the new CA, for the delay |
 * | `Reissuing` | new                  | old + new               | —        | every serving pair is from the new CA and served, for the delay |
 * | `Retiring`  | new                  | new                     | —        | every trust store holds exactly the new bundle     |
 * | (none)      | new                  | new                     | —        | —                                                  |
 *
 * The trust stores are every serving Secret's `ca.crt`, every CRD whose conversion calls a
 * webhook server of this manager, and the admission webhook configurations' caBundles; "served"
 * means every live replica reports the re-issued leaf's serial in its Lease, and the admission
 * Secret holds a leaf of the new CA. "For the delay" (`--ca-rotation-propagation-delay`): the
 * condition must hold continuously that long (the apiservers' caches of the caBundles, the
 * admission listeners' 30 s reload); the moment it was first seen is the annotation
 * `ca-rotation-settled-at`, cleared when the condition breaks. The old CA therefore leaves the
 * bundles only after every serving pair moved, and no leaf of the new CA is issued before every
 * caBundle trusts it. `Retiring` only waits for the writers to drop the old CA everywhere (safety
 * no longer depends on it), so that "completed" means every bundle is the new CA alone.
 *
 * Every write is an update with the resourceVersion read (a conflict is retried by the
 * controller). Cluster access goes through {@link RotationCluster}, so the machine is unit-tested
 * with fakes and a fixed clock.
 */
import type { KubeObject } from "../kube/mod.ts";
import { textToBase64 } from "../lib/base64.ts";
import { rfc3339 } from "../lib/time.ts";
import type { Logger } from "../obs/log.ts";
import {
  BACKDATE_MS,
  type BuiltinIssuer,
  CA_BUNDLE_KEY,
  CA_SECRET_NAME,
  generateCA,
  type LoadedCA,
  NEXT_CERT_KEY,
  NEXT_KEY_KEY,
  renewalTime,
  type SecretStore,
  x509,
} from "./builtin_certs.ts";
import { bundlePem } from "./ca_bundle.ts";

const PREFIX = "conversion.terasky.com/";
/** Set (any value) on `dco-webhook-ca` to start a rotation now; removed when it starts. */
export const ROTATE_CA_ANNOTATION = `${PREFIX}rotate-ca`;
/** `Trusting`, `Reissuing` or `Retiring` while a rotation runs; absent otherwise. */
export const ROTATION_PHASE_ANNOTATION = `${PREFIX}ca-rotation-phase`;
/** When the current phase began (RFC 3339). */
export const ROTATION_SINCE_ANNOTATION = `${PREFIX}ca-rotation-phase-since`;
/** When the current phase's condition was first seen to hold (RFC 3339); absent while it does not. */
export const ROTATION_SETTLED_ANNOTATION = `${PREFIX}ca-rotation-settled-at`;
/** What the current phase waits on (the first few stores or pairs), for `kubectl describe`. */
export const ROTATION_WAITING_ANNOTATION = `${PREFIX}ca-rotation-waiting-on`;
/** When the last rotation completed (RFC 3339). */
export const ROTATION_COMPLETED_ANNOTATION = `${PREFIX}ca-rotation-completed-at`;

export type RotationPhase = "Idle" | "Trusting" | "Reissuing" | "Retiring";
export const ROTATION_PHASES: readonly RotationPhase[] = [
  "Idle",
  "Trusting",
  "Reissuing",
  "Retiring",
];
/** A step that changed the CA Secret: the label of `dco_ca_rotation_steps_total`. */
export type RotationStep = "started" | "promoted" | "retired" | "completed";
export const ROTATION_STEPS: readonly RotationStep[] = [
  "started",
  "promoted",
  "retired",
  "completed",
];

/** What the rotation observes and wakes in the cluster. */
export interface RotationCluster {
  /** The trust stores that do not carry `ca` yet (one line each, e.g. `CRD widgets.example.com`). */
  untrusting(ca: x509.X509Certificate): Promise<string[]>;
  /** The serving pairs not yet issued by `ca` and served by every replica (one line each). */
  notServingFrom(ca: x509.X509Certificate): Promise<string[]>;
  /** The trust stores whose bundle is not exactly `bundle` (one line each). */
  outdated(bundle: readonly x509.X509Certificate[]): Promise<string[]>;
  /** Wakes the writers of serving Secrets and caBundles (server, config, admission). */
  nudge(): void;
}

/** Where the rotation reports (metrics, events); every hook is optional. */
export interface RotationReporter {
  phase?(phase: RotationPhase): void;
  step?(step: RotationStep, message: string): void;
  pending?(count: number): void;
  ca?(info: { notAfter: number; dueAt: number; bundleSize: number }): void;
}

export interface CARotatorOptions {
  issuer: BuiltinIssuer;
  store: SecretStore;
  cluster: RotationCluster;
  /** `--ca-validity`: the lifetime of the new CA, and the schedule (rotate at two thirds). */
  caValidityMs: number;
  /** `--ca-rotation-check-interval`. */
  checkIntervalMs: number;
  /** `--ca-rotation-propagation-delay`: how long a trust condition must hold before promoting. */
  propagationDelayMs: number;
  /** How long the "every pair moved" condition must hold before retiring; ≥ the above. */
  retireDelayMs: number;
  now?: () => number;
  reporter?: RotationReporter;
  logger?: Pick<Logger, "info" | "warn">;
}

/** At most this many stragglers go into the waiting annotation and the log. */
const WAITING_SHOWN = 5;

/**
 * When a CA is due for rotation: two thirds into its own lifetime, or two thirds of
 * `caValidityMs` after it was created (so lowering `--ca-validity` shortens an existing CA's
 * schedule), whichever comes first.
 */
export function rotationDueAt(cert: x509.X509Certificate, caValidityMs: number): number {
  const notBefore = cert.notBefore.getTime();
  const own = renewalTime(notBefore, cert.notAfter.getTime());
  const scheduled = notBefore + BACKDATE_MS + Math.floor((caValidityMs * 2) / 3);
  return Math.min(own, scheduled);
}

/** The phase recorded on the CA Secret. */
export function phaseOf(secret: KubeObject): RotationPhase {
  const v = secret.metadata?.annotations?.[ROTATION_PHASE_ANNOTATION];
  return v === "Trusting" || v === "Reissuing" || v === "Retiring" ? v : "Idle";
}

function timeAnnotation(secret: KubeObject, key: string): number | undefined {
  const v = secret.metadata?.annotations?.[key];
  const t = v === undefined ? NaN : Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
}

function summary(items: readonly string[]): string {
  const shown = items.slice(0, WAITING_SHOWN).join("; ");
  return items.length > WAITING_SHOWN
    ? `${shown}; and ${items.length - WAITING_SHOWN} more`
    : shown;
}

/** The CA rotation's step machine (see the module documentation). */
export class CARotator {
  readonly #o: CARotatorOptions;
  readonly #now: () => number;

  constructor(opts: CARotatorOptions) {
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** One step: read the CA Secret, maybe advance, and say when to look again. */
  async step(): Promise<{ requeueAfter: number; phase: RotationPhase }> {
    const o = this.#o;
    const ca = await o.issuer.ca();
    const phase = phaseOf(ca.secret);
    const now = this.#now();
    const dueAt = rotationDueAt(ca.cert, o.caValidityMs);
    o.reporter?.phase?.(phase);
    o.reporter?.ca?.({ notAfter: ca.cert.notAfter.getTime(), dueAt, bundleSize: ca.bundle.length });
    switch (phase) {
      case "Idle": {
        o.reporter?.pending?.(0);
        const requested = ca.secret.metadata?.annotations?.[ROTATE_CA_ANNOTATION] !== undefined;
        if (!requested && now < dueAt) {
          return { requeueAfter: Math.max(1_000, Math.min(o.checkIntervalMs, dueAt - now)), phase };
        }
        await this.#start(ca, requested ? "requested by annotation" : "the CA is due", now);
        o.cluster.nudge();
        return { requeueAfter: o.checkIntervalMs, phase: "Trusting" };
      }
      case "Trusting": {
        if (ca.next === undefined) {
          // next.* removed by hand: the signing CA is what it is; wait for the pairs to move.
          await this.#write(ca, {
            annotations: {
              [ROTATION_PHASE_ANNOTATION]: "Reissuing",
              [ROTATION_SINCE_ANNOTATION]: rfc3339(now),
              [ROTATION_SETTLED_ANNOTATION]: undefined,
            },
          });
          return { requeueAfter: 1_000, phase: "Reissuing" };
        }
        const incoming = ca.next.cert;
        const pending = await o.cluster.untrusting(incoming);
        return await this.#waitThen(ca, "Trusting", pending, now, () => this.#promote(ca, now));
      }
      case "Reissuing": {
        const pending = await o.cluster.notServingFrom(ca.cert);
        return await this.#waitThen(ca, "Reissuing", pending, now, () => this.#retire(ca, now));
      }
      case "Retiring": {
        const pending = await o.cluster.outdated(ca.bundle);
        return await this.#waitThen(ca, "Retiring", pending, now, () => this.#complete(ca, now));
      }
    }
  }

  /**
   * Waits until `pending` is empty and has been for the phase's delay, then runs `advance`.
   * Records the settled time and the stragglers on the Secret when they change.
   */
  async #waitThen(
    ca: LoadedCA,
    phase: "Trusting" | "Reissuing" | "Retiring",
    pending: readonly string[],
    now: number,
    advance: () => Promise<void>,
  ): Promise<{ requeueAfter: number; phase: RotationPhase }> {
    const o = this.#o;
    o.reporter?.pending?.(pending.length);
    const delay = phase === "Trusting"
      ? o.propagationDelayMs
      : phase === "Reissuing"
      ? o.retireDelayMs
      : 0;
    const settledAt = timeAnnotation(ca.secret, ROTATION_SETTLED_ANNOTATION);
    const waiting = pending.length === 0 ? undefined : summary(pending);
    if (pending.length > 0) {
      o.cluster.nudge();
      const stored = ca.secret.metadata?.annotations ?? {};
      if (settledAt !== undefined || stored[ROTATION_WAITING_ANNOTATION] !== waiting) {
        await this.#write(ca, {
          annotations: {
            [ROTATION_SETTLED_ANNOTATION]: undefined,
            [ROTATION_WAITING_ANNOTATION]: waiting,
          },
        });
        o.logger?.info("CA rotation waiting", {
          phase,
          pending: pending.length,
          waitingOn: waiting,
        });
      }
      return { requeueAfter: o.checkIntervalMs, phase };
    }
    if (settledAt === undefined) {
      await this.#write(ca, {
        annotations: {
          [ROTATION_SETTLED_ANNOTATION]: rfc3339(now),
          [ROTATION_WAITING_ANNOTATION]: undefined,
        },
      });
      return { requeueAfter: Math.max(1_000, Math.min(o.checkIntervalMs, delay)), phase };
    }
    const left = settledAt + delay - now;
    if (left > 0) {
      return { requeueAfter: Math.max(1_000, Math.min(o.checkIntervalMs, left)), phase };
    }
    await advance();
    o.cluster.nudge();
    const next: RotationPhase = phase === "Trusting"
      ? "Reissuing"
      : phase === "Reissuing"
      ? "Retiring"
      : "Idle";
    return { requeueAfter: 1_000, phase: next };
  }

  /** Idle → Trusting: a new CA in `next.*`, trusted next to the old one. */
  async #start(ca: LoadedCA, why: string, now: number): Promise<void> {
    const o = this.#o;
    const fresh = await generateCA(now, o.caValidityMs);
    const incoming = new x509.X509Certificate(fresh.certPem);
    await this.#write(ca, {
      data: {
        [NEXT_CERT_KEY]: textToBase64(fresh.certPem),
        [NEXT_KEY_KEY]: textToBase64(fresh.keyPem),
        [CA_BUNDLE_KEY]: textToBase64(bundlePem([...ca.bundle, incoming])),
      },
      annotations: {
        [ROTATE_CA_ANNOTATION]: undefined,
        [ROTATION_PHASE_ANNOTATION]: "Trusting",
        [ROTATION_SINCE_ANNOTATION]: rfc3339(now),
        [ROTATION_SETTLED_ANNOTATION]: undefined,
        [ROTATION_WAITING_ANNOTATION]: undefined,
      },
    });
    const message = `CA rotation started (${why}): new CA serial ${incoming.serialNumber} is ` +
      `trusted next to ${ca.cert.serialNumber}; leaves stay on the old CA until every caBundle carries the new one`;
    o.reporter?.step?.("started", message);
    o.logger?.info(message, { oldSerial: ca.cert.serialNumber, newSerial: incoming.serialNumber });
  }

  /** Trusting → Reissuing: the new CA signs; the bundle keeps both. */
  async #promote(ca: LoadedCA, now: number): Promise<void> {
    const o = this.#o;
    const next = ca.next!;
    await this.#write(ca, {
      data: {
        "tls.crt": textToBase64(next.certPem),
        "tls.key": textToBase64(next.keyPem),
        [NEXT_CERT_KEY]: undefined,
        [NEXT_KEY_KEY]: undefined,
      },
      annotations: {
        [ROTATION_PHASE_ANNOTATION]: "Reissuing",
        [ROTATION_SINCE_ANNOTATION]: rfc3339(now),
        [ROTATION_SETTLED_ANNOTATION]: undefined,
        [ROTATION_WAITING_ANNOTATION]: undefined,
      },
    });
    const message = `CA rotation: every caBundle trusts CA ${next.cert.serialNumber}; it signs ` +
      `from now on and every serving certificate is re-issued from it`;
    o.reporter?.step?.("promoted", message);
    o.logger?.info(message, { serial: next.cert.serialNumber });
  }

  /** Reissuing → Retiring: every pair moved; the old CA leaves the bundle. */
  async #retire(ca: LoadedCA, now: number): Promise<void> {
    const o = this.#o;
    const retired = ca.bundle.filter((c) => c.serialNumber !== ca.cert.serialNumber);
    await this.#write(ca, {
      data: { [CA_BUNDLE_KEY]: textToBase64(bundlePem([ca.cert])) },
      annotations: {
        [ROTATION_PHASE_ANNOTATION]: "Retiring",
        [ROTATION_SINCE_ANNOTATION]: rfc3339(now),
        [ROTATION_SETTLED_ANNOTATION]: undefined,
        [ROTATION_WAITING_ANNOTATION]: undefined,
      },
    });
    const message = `CA rotation: every serving certificate is from CA ${ca.cert.serialNumber}; ` +
      `retiring ${retired.map((c) => c.serialNumber).join(", ") || "nothing"} from the bundles`;
    o.reporter?.step?.("retired", message);
    o.logger?.info(message, { serial: ca.cert.serialNumber });
  }

  /** Retiring → Idle: every trust store holds the new CA alone. */
  async #complete(ca: LoadedCA, now: number): Promise<void> {
    const o = this.#o;
    await this.#write(ca, {
      annotations: {
        [ROTATION_PHASE_ANNOTATION]: undefined,
        [ROTATION_SINCE_ANNOTATION]: undefined,
        [ROTATION_SETTLED_ANNOTATION]: undefined,
        [ROTATION_WAITING_ANNOTATION]: undefined,
        [ROTATION_COMPLETED_ANNOTATION]: rfc3339(now),
      },
    });
    const message =
      `CA rotation completed: every caBundle and ca.crt holds CA ${ca.cert.serialNumber} alone`;
    o.reporter?.step?.("completed", message);
    o.logger?.info(message, { serial: ca.cert.serialNumber });
  }

  /** Updates the CA Secret (`undefined` removes a key) with the resourceVersion read. */
  async #write(
    ca: LoadedCA,
    change: {
      data?: Record<string, string | undefined>;
      annotations?: Record<string, string | undefined>;
    },
  ): Promise<void> {
    const secret = ca.secret;
    const merge = (base: Record<string, string>, patch: Record<string, string | undefined>) => {
      const out = { ...base };
      for (const [k, v] of Object.entries(patch)) {
        if (v === undefined) delete out[k];
        else out[k] = v;
      }
      return out;
    };
    const data = merge(
      ((secret as { data?: Record<string, string> }).data) ?? {},
      change.data ?? {},
    );
    const annotations = merge(secret.metadata?.annotations ?? {}, change.annotations ?? {});
    await this.#o.store.update(this.#o.issuer.namespace, {
      ...secret,
      metadata: { ...secret.metadata, name: CA_SECRET_NAME, annotations },
      data,
    } as KubeObject);
  }
}
