/**
 * The self-issued admission certificate (docs/manager.md "Admission certificate"): in the
 * built-in certificate mode the manager issues the serving certificate of its own admission
 * listener from the built-in CA (src/manager/builtin_certs.ts, Secret `dco-webhook-ca`) and keeps
 * the ValidatingWebhookConfiguration's `caBundle` in sync, so the chart needs no cert-manager and
 * no hand-made Secret.
 *
 * - The leaf lives in `--admission-cert-secret` (operator namespace; `kubernetes.io/tls` with
 *   `tls.crt`, `tls.key`, `ca.crt`; no owner: it is the manager's own; an `Opaque` Secret made by
 *   hand for an older install is taken over in place, its type being immutable), SANs `<svc>`,
 *   `<svc>.<ns>`, `<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local` of `--admission-service`.
 *   Issuance, re-issue reasons and renewal (two thirds of the lifetime) are the issuer's.
 * - Replicas race safely: every write is a create, or an update carrying the `resourceVersion`
 *   read; a 409 (AlreadyExists/Conflict) means another replica wrote first, so the Secret is read
 *   again and, being current, kept.
 * - The listener reads the pair from the Secret through the API ({@link readAdmissionKeyPair}) —
 *   no files, no extra permissions — and reloads it when it changes.
 * - `caBundle`: every webhook of `--admission-webhook-configuration` gets the CA (`ca.crt` as
 *   stored, base64); the configuration is read first and patched only when some webhook differs
 *   (strategic merge patch keyed by webhook name, so nothing else is touched). The same for
 *   the MutatingWebhookConfiguration of the XRD conversion guard,
 *   `--admission-mutating-webhook-configuration`.
 *
 * {@link AdmissionCertKeeper.ensure} does both; `start()` repeats it every
 * {@link ADMISSION_RESYNC_MS}, at the renewal time when that is sooner, and after a failure every
 * {@link ADMISSION_RETRY_MS}. Cluster access goes through small interfaces (fakes in tests).
 */
import type { KubeObject } from "../kube/mod.ts";
import { base64ToText } from "../lib/base64.ts";
import type { Logger } from "../obs/log.ts";
import type { KeyPairPem } from "../net/mod.ts";
import { type BuiltinIssuer, type SecretStore, x509 } from "./builtin_certs.ts";
import { LABEL_MANAGED_BY, MANAGED_BY } from "./server/names.ts";

/** The admission listeners re-read their pair this often (cert dir or Secret). */
export const ADMISSION_CERT_RELOAD_MS = 30_000;
/** Periodic re-check of the Secret and the caBundle. */
export const ADMISSION_RESYNC_MS = 10 * 60_000;
/** Retry after a failed ensure. */
export const ADMISSION_RETRY_MS = 15_000;
/** Attempts when a write loses a race (409) before giving up until the next run. */
const RACE_ATTEMPTS = 3;

/** The SANs of the admission Service `svc` in namespace `ns`. */
export function admissionDnsNames(svc: string, ns: string): string[] {
  return [svc, `${svc}.${ns}`, `${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`];
}

/**
 * The Validating- (or Mutating-) WebhookConfiguration operations the keeper needs
 * (cluster-scoped).
 */
export interface WebhookConfigStore {
  /** The configuration, or undefined when not found. */
  get(name: string): Promise<KubeObject | undefined>;
  /** A strategic merge patch (`application/strategic-merge-patch+json`). */
  patch(name: string, patch: unknown): Promise<KubeObject>;
}

export interface AdmissionCertOptions {
  issuer: BuiltinIssuer;
  /** Reads the admission Secret (the issuer's store; read through, never cached). */
  secrets: Pick<SecretStore, "get">;
  /** The operator namespace (home of the Secret and the Service). */
  namespace: string;
  /** `--admission-cert-secret`. */
  secretName: string;
  /** `--admission-service`. */
  serviceName: string;
  /** `--admission-webhook-configuration`; "" ⇒ the caBundle is left alone. */
  webhookConfiguration: string;
  webhookConfigs?: WebhookConfigStore;
  /** `--admission-mutating-webhook-configuration` (the XRD conversion guard's); ""/absent ⇒ left alone. */
  mutatingWebhookConfiguration?: string;
  /** The MutatingWebhookConfiguration store (needed with the name above). */
  mutatingWebhookConfigs?: WebhookConfigStore;
  /** A write that lost a race: HTTP 409 (AlreadyExists or Conflict). */
  isRaceLost?: (e: unknown) => boolean;
  now?: () => number;
  logger?: Pick<Logger, "info" | "warn" | "error">;
}

export interface AdmissionCertState {
  /** The certificate's serial (hex) and expiry. */
  serial: string;
  notAfter: number;
  /** When the issuer will re-issue it. */
  renewAt: number;
  /** Why it was (re-)issued this time; undefined when the stored one was kept. */
  issued?: string;
  /** The CA (base64 PEM, as `ca.crt` is stored): the caBundle. */
  caBundle: string;
  /** Whether the VWC (or the MWC) was patched this time. */
  caBundlePatched: boolean;
}

function dataOf(secret: KubeObject | undefined): Record<string, unknown> {
  const data = (secret as { data?: unknown } | undefined)?.data;
  return typeof data === "object" && data !== null ? data as Record<string, unknown> : {};
}

function decode(value: unknown, what: string): string {
  if (typeof value !== "string" || value === "") throw new Error(`${what} is missing`);
  try {
    return base64ToText(value);
  } catch {
    throw new Error(`${what} is not base64`);
  }
}

/** The pair of an admission Secret (throws when it is missing or incomplete). */
export function keyPairOfSecret(secret: KubeObject | undefined, where: string): KeyPairPem {
  if (secret === undefined) throw new Error(`${where} does not exist yet`);
  const data = dataOf(secret);
  return {
    cert: decode(data["tls.crt"], `${where}: tls.crt`),
    key: decode(data["tls.key"], `${where}: tls.key`),
  };
}

/** Reads the pair from the admission Secret through the API (the listener's pair source). */
export async function readAdmissionKeyPair(
  secrets: Pick<SecretStore, "get">,
  namespace: string,
  name: string,
): Promise<KeyPairPem> {
  return keyPairOfSecret(await secrets.get(namespace, name), `Secret ${namespace}/${name}`);
}

interface WebhookEntry {
  name?: string;
  clientConfig?: { caBundle?: string };
}

/**
 * The strategic merge patch that sets every webhook's `clientConfig.caBundle` to `caBundle`, or
 * undefined when they all have it already (or there are none).
 */
export function caBundlePatch(
  config: KubeObject,
  caBundle: string,
): { webhooks: Array<{ name: string; clientConfig: { caBundle: string } }> } | undefined {
  const webhooks = (config as { webhooks?: unknown }).webhooks;
  if (!Array.isArray(webhooks)) return undefined;
  const stale = (webhooks as WebhookEntry[]).filter((w) =>
    typeof w?.name === "string" && w.clientConfig?.caBundle !== caBundle
  );
  if (stale.length === 0) return undefined;
  return {
    webhooks: stale.map((w) => ({ name: w.name as string, clientConfig: { caBundle } })),
  };
}

/** Keeps the admission Secret issued and the VWC's caBundle in sync. */
export class AdmissionCertKeeper {
  readonly #o: AdmissionCertOptions;
  readonly #now: () => number;
  readonly #isRaceLost: (e: unknown) => boolean;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  #running: Promise<unknown> = Promise.resolve();
  /** Called after every successful ensure (e.g. the listener's `reloadNow`). */
  onEnsured: ((state: AdmissionCertState) => void | Promise<unknown>) | undefined;

  constructor(opts: AdmissionCertOptions) {
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
    this.#isRaceLost = opts.isRaceLost ?? (() => false);
  }

  get secretRef(): string {
    return `Secret ${this.#o.namespace}/${this.#o.secretName}`;
  }

  /** The listener's pair source: the Secret, read through. */
  readPair(): Promise<KeyPairPem> {
    return readAdmissionKeyPair(this.#o.secrets, this.#o.namespace, this.#o.secretName);
  }

  /**
   * Ensures the Secret holds a current leaf for the Service's names (issuing or renewing it) and
   * the VWC carries the CA. A write that lost a race to another replica is retried from a fresh
   * read.
   */
  async ensure(): Promise<AdmissionCertState> {
    const o = this.#o;
    const dnsNames = admissionDnsNames(o.serviceName, o.namespace);
    let result;
    for (let attempt = 1;; attempt++) {
      try {
        result = await o.issuer.ensureServingCertificate({
          namespace: o.namespace,
          secretName: o.secretName,
          dnsNames,
          commonName: `${o.serviceName}.${o.namespace}.svc`,
          labels: { [LABEL_MANAGED_BY]: MANAGED_BY },
          acceptOpaque: true,
        });
        break;
      } catch (e) {
        if (!this.#isRaceLost(e) || attempt >= RACE_ATTEMPTS) throw e;
        o.logger?.info("admission certificate written by another replica; reading it again", {
          secret: this.secretRef,
        });
      }
    }
    const data = dataOf(result.secret);
    const caBundle = typeof data["ca.crt"] === "string" ? data["ca.crt"] : "";
    if (caBundle === "") throw new Error(`${this.secretRef} has no ca.crt`);
    const cert = new x509.X509Certificate(decode(data["tls.crt"], `${this.secretRef}: tls.crt`));
    if (result.issued !== undefined) {
      o.logger?.info("admission certificate issued", {
        secret: this.secretRef,
        reason: result.issued,
        serial: cert.serialNumber,
        notAfter: new Date(result.notAfter).toISOString(),
      });
    }
    const caBundlePatched = await this.syncCABundle(caBundle);
    return {
      serial: cert.serialNumber,
      notAfter: result.notAfter,
      renewAt: result.renewAt,
      issued: result.issued,
      caBundle,
      caBundlePatched,
    };
  }

  /**
   * Sets every webhook's caBundle of the VWC and, when configured, of the MWC; true when it
   * patched either. Read first, write on change. Both are attempted; the first failure is thrown.
   */
  async syncCABundle(caBundle: string): Promise<boolean> {
    const o = this.#o;
    let patched = false;
    let failure: unknown;
    const targets: Array<[string, string | undefined, WebhookConfigStore | undefined]> = [
      ["ValidatingWebhookConfiguration", o.webhookConfiguration, o.webhookConfigs],
      ["MutatingWebhookConfiguration", o.mutatingWebhookConfiguration, o.mutatingWebhookConfigs],
    ];
    for (const [kind, name, store] of targets) {
      if (name === undefined || name === "" || store === undefined) continue;
      try {
        patched = await this.#syncOne(kind, name, store, caBundle) || patched;
      } catch (e) {
        failure ??= e;
      }
    }
    if (failure !== undefined) throw failure;
    return patched;
  }

  async #syncOne(
    kind: string,
    name: string,
    store: WebhookConfigStore,
    caBundle: string,
  ): Promise<boolean> {
    const config = await store.get(name);
    if (config === undefined) {
      throw new Error(`${kind} ${name} not found (its caBundle is set once it exists)`);
    }
    const patch = caBundlePatch(config, caBundle);
    if (patch === undefined) return false;
    await store.patch(name, patch);
    this.#o.logger?.info("admission caBundle updated", {
      [
        kind === "ValidatingWebhookConfiguration"
          ? "validatingWebhookConfiguration"
          : "mutatingWebhookConfiguration"
      ]: name,
      webhooks: patch.webhooks.map((w) => w.name),
    });
    return true;
  }

  /** The delay before the next run after `state` (undefined: the run failed). */
  nextDelay(state: AdmissionCertState | undefined): number {
    if (state === undefined) return ADMISSION_RETRY_MS;
    const untilRenewal = state.renewAt - this.#now();
    return Math.max(1_000, Math.min(ADMISSION_RESYNC_MS, untilRenewal));
  }

  /** One run: ensure, notify, schedule the next. Never throws (failures are logged). */
  async runOnce(): Promise<AdmissionCertState | undefined> {
    let state: AdmissionCertState | undefined;
    try {
      state = await this.ensure();
      await this.onEnsured?.(state);
    } catch (e) {
      state = undefined;
      this.#o.logger?.error("ensuring the admission certificate failed; retrying", {
        secret: this.secretRef,
        validatingWebhookConfiguration: this.#o.webhookConfiguration,
        error: e instanceof Error ? e.message : String(e),
      });
    }
    return state;
  }

  /** Schedules runs (the first after `firstDelayMs`) until {@link stop}. */
  start(firstDelayMs: number): void {
    const schedule = (ms: number) => {
      if (this.#stopped) return;
      this.#timer = setTimeout(() => {
        const run = this.runOnce().then((s) => schedule(this.nextDelay(s)));
        this.#running = run;
      }, ms);
    };
    schedule(firstDelayMs);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running.catch(() => {});
  }
}
