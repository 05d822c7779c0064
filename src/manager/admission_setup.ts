/**
 * The manager's admission listener: its cluster reads (from the caches), the XRD conversion
 * guard's lookup, and which certificate it serves with — the pair in `--webhook-cert-dir`, else
 * the self-issued one, else none (admission off). The choice and its failures:
 * docs/design/manager.md#admission.
 */
import { XRD_CONFIG_KIND } from "../api/mod.ts";
import { CONFIG_RESOURCES } from "../api/resources.ts";
import {
  getOrUndefined,
  isAlreadyExists,
  isConflict,
  type KubeClient,
  type KubeObject,
} from "../kube/mod.ts";
import {
  MUTATING_WEBHOOK_CONFIGURATIONS,
  SECRETS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from "../kube/resources.ts";
import type { ResourceRef } from "../kube/mod.ts";
import { type ServerHandle, TlsServer, type TlsState } from "../net/mod.ts";
import { createLogger, type Logger } from "../obs/log.ts";
import type { AdmissionContext, ConfigSummary } from "./admission/context.ts";
import {
  ADMISSION_CERT_RELOAD_MS,
  AdmissionCertKeeper,
  type AdmissionCertState,
} from "./admission_certs.ts";
import { type AdmissionHandlerOptions, createNodeAdmissionListener } from "./admission/http.ts";
import { BuiltinIssuer } from "./builtin_certs.ts";
import {
  type DepsOptions,
  getTarget,
  type ManagerCaches,
  rawConfigSummary,
  rawServerInfo,
  TARGET_INDEX,
} from "./caches.ts";
import { type ManagerFlags, selfIssuedAdmission } from "./flags.ts";
import type { XrdConfigLookup } from "./admission/xrd_guard.ts";

const CERT_RELOAD_INTERVAL_MS = ADMISSION_CERT_RELOAD_MS;
const LISTEN_FAILED = "cannot start the admission listener";
const ENSURE_ATTEMPTS = 5;
const ENSURE_RETRY_MS = 2_000;

/** The admission rules' cluster reads, from the caches. */
export function admissionContext(
  o: DepsOptions,
  features: { xrd: boolean; crd: boolean },
): AdmissionContext {
  return {
    features,
    getTarget: (kind, name) => getTarget(o, kind, name),
    listConfigs() {
      const out: ConfigSummary[] = [];
      for (const [kind, informer] of o.caches.configs) {
        for (const obj of informer.list()) out.push(rawConfigSummary(kind, obj));
      }
      return out;
    },
    listServers: () => o.caches.servers.list().map(rawServerInfo),
    serverPolicy: { policy: o.serverPolicy ?? {}, operatorNamespace: o.operatorNamespace },
  };
}

/**
 * The XRD conversion guard's lookup: the stored XRDConversionConfigs whose
 * `spec.targetXRD.name` is the XRD's name, through the config cache's `target` index; none when
 * XRD configs are not cached.
 */
export function xrdGuardLookup(caches: Pick<ManagerCaches, "configs">): XrdConfigLookup {
  return (xrdName) => {
    const informer = caches.configs.get(XRD_CONFIG_KIND);
    if (informer === undefined) return [];
    return informer.indexKeys(TARGET_INDEX, xrdName)
      .map((key) => informer.get(key))
      .filter((obj): obj is KubeObject => obj !== undefined);
  };
}

/**
 * The XRD conversion guard's confirmation before a restore: each config the cache named, read
 * live (a quorum read), kept while it exists and still targets `xrdName`.
 */
export function xrdGuardConfirm(
  client: Pick<KubeClient, "get">,
): (xrdName: string, cached: readonly unknown[]) => Promise<readonly unknown[]> {
  return async (xrdName, cached) => {
    const out: KubeObject[] = [];
    for (const c of cached) {
      const name = (c as KubeObject).metadata?.name;
      if (typeof name !== "string") continue;
      const live = await getOrUndefined(client.get(CONFIG_RESOURCES[XRD_CONFIG_KIND], name));
      const spec = live?.spec as { targetXRD?: { name?: unknown } } | undefined;
      if (live !== undefined && spec?.targetXRD?.name === xrdName) out.push(live);
    }
    return out;
  };
}

/** What starting admission needs of the role runtime (src/main/_role.ts). */
export interface AdmissionStartup {
  readonly log: Logger;
  /** Readiness gates: held while the admission listener has no usable pair. */
  readonly readiness: { gate(name: string, reason: string): void };
  /** Exits (without an error) when a shutdown was asked for. */
  exitIfStopping(): Promise<void>;
  /** Starts a listener; its failure is logged as `failure`, and exits 1. */
  listen<S extends ServerHandle>(
    failure: string,
    address: string,
    start: () => Promise<S>,
  ): Promise<S>;
  fail(message: string, fields?: Record<string, unknown>): Promise<never>;
  onStop(name: string, stop: () => unknown): void;
}

/** What the manager observes of its admission answers: request metrics, denials. */
export type AdmissionHooks = Pick<AdmissionHandlerOptions, "metrics" | "onDenied">;

/**
 * Starts the admission listener on TLS: the pair in the cert dir (cert-manager, user-provided)
 * when it is there, else the self-issued one (built-in CA), else not at all (logged). Returns the
 * self-issued certificate's keeper when there is one (the CA rotation runs it on the leader).
 */
export async function startAdmission(
  role: AdmissionStartup,
  deps: DepsOptions,
  flags: ManagerFlags,
  hooks: AdmissionHooks = {},
): Promise<AdmissionCertKeeper | undefined> {
  const address = flags.webhookBindAddress;
  const listener = () => admissionListener(deps, flags, role.log, hooks);
  if (await hasKeyPair(flags.webhookCertDir)) {
    await role.listen(LISTEN_FAILED, address, () =>
      TlsServer.start({
        address,
        certDir: flags.webhookCertDir,
        reloadIntervalMs: CERT_RELOAD_INTERVAL_MS,
        listener: listener(),
        onState: gateReadiness(role),
      }));
    role.log.info("admission webhooks serving", { address });
    return undefined;
  }
  if (!selfIssuedAdmission(flags)) {
    role.log.info("admission webhooks disabled: no tls.crt/tls.key in the webhook cert dir", {
      dir: flags.webhookCertDir,
      ...(flags.admissionCertSecret !== ""
        ? { ignored: `--admission-* (--certificate-mode=${flags.certificateMode})` }
        : {}),
    });
    return undefined;
  }
  const keeper = admissionCertKeeper(deps.client, flags, deps.operatorNamespace);
  role.onStop("admission certificate keeper", () => keeper.stop());
  const state = await ensureCertificate(role, keeper, flags);
  const server = await role.listen(LISTEN_FAILED, address, () =>
    TlsServer.start({
      address,
      loadPair: () => keeper.readPair(),
      source: keeper.secretRef,
      reloadIntervalMs: CERT_RELOAD_INTERVAL_MS,
      listener: listener(),
      onState: gateReadiness(role),
    }));
  keeper.onEnsured = () => server.reloadNow();
  keeper.start(keeper.nextDelay(state));
  role.log.info("admission webhooks serving (self-issued certificate)", {
    address,
    secret: keeper.secretRef,
    validatingWebhookConfiguration: flags.admissionWebhookConfiguration || undefined,
    mutatingWebhookConfiguration: flags.admissionMutatingWebhookConfiguration || undefined,
    notAfter: state ? new Date(state.notAfter).toISOString() : undefined,
  });
  return keeper;
}

/** The admission listener's certificate state holds the manager's readiness. */
function gateReadiness(role: AdmissionStartup): (state: TlsState) => void {
  return (state) => role.readiness.gate("admission tls", state.problem);
}

/**
 * Before serving: a current leaf in the Secret (and, best effort, the caBundle). A stored pair
 * is served even when ensuring failed; no pair at all exits 1.
 */
async function ensureCertificate(
  role: AdmissionStartup,
  keeper: AdmissionCertKeeper,
  flags: ManagerFlags,
): Promise<AdmissionCertState | undefined> {
  const hasPair = () => keeper.readPair().then(() => true, () => false);
  let state: AdmissionCertState | undefined;
  let lastError: unknown;
  for (let attempt = 0; attempt < ENSURE_ATTEMPTS && state === undefined; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, ENSURE_RETRY_MS));
    await role.exitIfStopping();
    try {
      state = await keeper.ensure();
    } catch (e) {
      lastError = e;
      // The leaf may be fine and only the caBundle failed (e.g. the VWC is not created yet).
      if (await hasPair()) break;
    }
  }
  if (state === undefined && !(await hasPair())) {
    await role.fail("cannot issue the admission certificate", {
      secret: keeper.secretRef,
      error: lastError,
    });
  }
  if (lastError !== undefined && state === undefined) {
    role.log.error(
      "ensuring the admission certificate/caBundle failed; serving the stored pair, retrying",
      {
        secret: keeper.secretRef,
        validatingWebhookConfiguration: flags.admissionWebhookConfiguration,
        error: lastError,
      },
    );
  }
  return state;
}

function admissionListener(
  deps: DepsOptions,
  flags: ManagerFlags,
  log: Logger,
  hooks: AdmissionHooks,
) {
  const guardLog = createLogger("manager.admission.xrdguard");
  const xrdGuardEnabled = flags.enableXrdSupport && flags.enableXrdConversionGuard;
  return createNodeAdmissionListener({
    ctx: admissionContext(deps, { xrd: flags.enableXrdSupport, crd: flags.enableCrdSupport }),
    onError: (error, path) => log.error("admission decision failed", { path, error }),
    ...hooks,
    // The mutating XRD conversion guard; it fails open.
    ...(xrdGuardEnabled
      ? {
        xrdGuard: {
          lookup: xrdGuardLookup(deps.caches),
          confirm: xrdGuardConfirm(deps.client),
          onDecision: (decision, xrd, operation) => {
            const fields = { xrd, operation, reason: decision.reason };
            if (decision.patch.length > 0) {
              guardLog.info("XRD conversion guard restored the conversion stanza", fields);
            } else {
              guardLog.debug("XRD conversion guard allowed the write unchanged", fields);
            }
          },
        },
      }
      : {}),
  });
}

/** The self-issued admission certificate's keeper (src/manager/admission_certs.ts). */
function admissionCertKeeper(
  client: KubeClient,
  flags: ManagerFlags,
  namespace: string,
): AdmissionCertKeeper {
  const store = {
    get: (ns: string, name: string) => getOrUndefined(client.get(SECRETS(ns), name)),
    create: (ns: string, secret: KubeObject) => client.create(SECRETS(ns), secret),
    update: (ns: string, secret: KubeObject) => client.update(SECRETS(ns), secret),
  };
  const webhookConfigStore = (resource: ResourceRef) => ({
    get: (name: string) => getOrUndefined(client.get(resource, name)),
    patch: (name: string, patch: unknown) =>
      client.patch(resource, name, patch, { type: "strategic" }),
  });
  return new AdmissionCertKeeper({
    issuer: new BuiltinIssuer({
      store,
      namespace,
      isAlreadyExists,
      caValidityMs: flags.caValidityMs,
    }),
    secrets: store,
    namespace,
    secretName: flags.admissionCertSecret,
    serviceName: flags.admissionService,
    webhookConfiguration: flags.admissionWebhookConfiguration,
    webhookConfigs: webhookConfigStore(VALIDATING_WEBHOOK_CONFIGURATIONS),
    mutatingWebhookConfiguration: flags.admissionMutatingWebhookConfiguration,
    mutatingWebhookConfigs: webhookConfigStore(MUTATING_WEBHOOK_CONFIGURATIONS),
    isRaceLost: (e) => isConflict(e) || isAlreadyExists(e),
    logger: createLogger("manager.admission.certs"),
  });
}

async function hasKeyPair(dir: string): Promise<boolean> {
  try {
    const [crt, key] = await Promise.all([
      Deno.stat(`${dir}/tls.crt`),
      Deno.stat(`${dir}/tls.key`),
    ]);
    return crt.isFile && key.isFile;
  } catch {
    return false;
  }
}
