/**
 * The manager role (runtime.md §2): reconciles the config kinds and ConversionWebhookServers and
 * serves the validating admission webhooks. It never talks to webhook-server pods.
 *
 * Startup: flags (invalid ⇒ exit 1) → client → caches (per feature flag) with their event wiring
 * → the plain listeners (/metrics, /healthz, /readyz) before any sync → cache sync (a terminal
 * cache failure ⇒ exit 1) → admission on TLS when `--webhook-cert-dir` holds `tls.crt`/`tls.key`,
 * else from the self-issued admission Secret (`--admission-cert-secret` in builtin/auto mode:
 * issued, or renewed, before serving, then kept current with the VWC caBundle; a Secret that
 * cannot be issued ⇒ exit 1), else disabled (logged) → ready → controllers, directly or once elected (`--leader-elect`; a
 * lost lease exits 1, like controller-runtime).
 *
 * The CWS controller (src/manager/server_reconcile.ts, documented in docs/manager.md): finalizer
 * and delete guard, children (the cert-manager Certificate only in `cert-manager` certificate
 * mode; `--certificate-mode=auto` picks it when discovery finds `cert-manager.io/v1`, else the
 * built-in CA of src/manager/builtin_certs.ts), readiness status, DefaultConflict,
 * assignedConfigs, servedTargets/reportingReplicas (Leases read through; no Lease watch). Not yet:
 * the Crossplane discovery check.
 *
 * [P11] With `--enable-xrd-conversion-guard` and XRD support, the admission listener also serves
 * the mutating XRD conversion guard at `/guard-xrd-conversion` (src/manager/xrd_guard.ts).
 *
 * `--prepare-uninstall` runs the one-shot uninstall preparation of src/manager/uninstall.ts instead
 * (the chart's pre-delete hook Job) and exits with its code.
 *
 * Permissions: `--allow-net --allow-env --allow-read=<cert dir>,<service-account dir>`.
 */
import { type ConfigKind, CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "../api/mod.ts";
import {
  Controller,
  enqueueFor,
  getOrUndefined,
  isAlreadyExists,
  isConflict,
  isNotFound,
  KubeClient,
  type KubeObject,
  LeaderElector,
  MANAGER_LEASE_NAME,
  Pacer,
  SERVICE_ACCOUNT_DIR,
} from "../kube/mod.ts";
import { createNodeAdmissionListener } from "../manager/admission_http.ts";
import { AdmissionCertKeeper, type AdmissionCertState } from "../manager/admission_certs.ts";
import { BuiltinIssuer } from "../manager/builtin_certs.ts";
import { reconcileConfig } from "../manager/config_reconcile.ts";
import {
  admissionContext,
  configReconcileDeps,
  configsToWake,
  createManagerCaches,
  type DepsOptions,
  mapGeneratedCRDToConfigs,
  rawServerInfo,
  SECRETS,
  targetLabelOf,
  xrdGuardLookup,
} from "../manager/deps.ts";
import {
  type CertificateModeFlag,
  certModeOf,
  ManagerFlagError,
  type ManagerFlags,
  parseManagerFlags,
  resolveCertificateMode,
  resolveOperatorNamespace,
  selfIssuedAdmission,
} from "../manager/flags.ts";
import { ManagerMetrics } from "../manager/deps.ts";
import { runPrepareUninstall } from "../manager/uninstall.ts";
import type { ServerChildSettings } from "../manager/server_children.ts";
import {
  configAffectsServers,
  defaultFlagChanged,
  defaultServerNames,
  reconcileServer,
  serverReconcileDeps,
} from "../manager/server_reconcile.ts";
import { configureLogging, createLogger } from "../obs/log.ts";
import { createMetricsRegistry, metricsResponse } from "../obs/metrics.ts";
import { Readiness, type ServerHandle, shutdownAll, TlsServer } from "../net/servers.ts";
import { createPlainListener, startPlainServer } from "../webhook/servers.ts";

const log = createLogger("manager");
const guardLog = createLogger("manager.admission.xrdguard");
const SHUTDOWN_TIMEOUT_MS = 30_000;
const CERT_RELOAD_INTERVAL_MS = 30_000;
const DISCOVERY_ATTEMPTS = 5;
const DISCOVERY_RETRY_MS = 2_000;

function exit(code: number, msg: string, fields?: Record<string, unknown>): never {
  log.error(msg, fields);
  Deno.exit(code);
}

/** Controller names (runtime §2.2). */
const CONTROLLER_OF: Record<ConfigKind, string> = {
  [CRD_CONFIG_KIND]: "crdconversionconfig",
  [XRD_CONFIG_KIND]: "xrdconversionconfig",
};

async function serviceAccountNamespace(): Promise<string | undefined> {
  try {
    return (await Deno.readTextFile(`${SERVICE_ACCOUNT_DIR}/namespace`)).trim();
  } catch {
    return undefined; // not in a pod (or not readable)
  }
}

const VWC_RESOURCE = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  plural: "validatingwebhookconfigurations",
} as const;
const MWC_RESOURCE = { ...VWC_RESOURCE, plural: "mutatingwebhookconfigurations" } as const;

/** The self-issued admission certificate's keeper (src/manager/admission_certs.ts). */
function admissionCertKeeper(
  client: KubeClient,
  flags: ManagerFlags,
  namespace: string,
): AdmissionCertKeeper {
  const getSecret = async (ns: string, name: string) => {
    return await getOrUndefined(client.get(SECRETS(ns), name));
  };
  const store = {
    get: getSecret,
    create: (ns: string, secret: KubeObject) => client.create(SECRETS(ns), secret),
    update: (ns: string, secret: KubeObject) => client.update(SECRETS(ns), secret),
  };
  const webhookConfigStore = (resource: typeof VWC_RESOURCE | typeof MWC_RESOURCE) => ({
    async get(name: string) {
      return await getOrUndefined(client.get(resource, name));
    },
    patch: (name: string, patch: unknown) =>
      client.patch(resource, name, patch, { type: "strategic" }),
  });
  return new AdmissionCertKeeper({
    issuer: new BuiltinIssuer({ store, namespace, isAlreadyExists }),
    secrets: store,
    namespace,
    secretName: flags.admissionCertSecret,
    serviceName: flags.admissionService,
    webhookConfiguration: flags.admissionWebhookConfiguration,
    webhookConfigs: webhookConfigStore(VWC_RESOURCE),
    mutatingWebhookConfiguration: flags.admissionMutatingWebhookConfiguration,
    mutatingWebhookConfigs: webhookConfigStore(MWC_RESOURCE),
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

/** The owner CWS name of a child (its controller owner reference), if any. */
function ownerServer(obj: KubeObject): string | undefined {
  const refs = obj.metadata?.ownerReferences as
    | Array<{ kind?: string; name?: string; controller?: boolean }>
    | undefined;
  return refs?.find((r) => r.kind === "ConversionWebhookServer" && r.controller)?.name;
}

/**
 * `cert-manager.io/v1` served with `certificates` (discovery). 404 => false; any other failure is
 * retried a few times and then thrown: guessing wrong would make two issuers fight over a Secret.
 */
async function certManagerServed(client: KubeClient, signal: AbortSignal): Promise<boolean> {
  let last: unknown;
  for (let attempt = 0; attempt < DISCOVERY_ATTEMPTS; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, DISCOVERY_RETRY_MS));
    if (signal.aborted) throw signal.reason;
    try {
      const list = await client.call<{ resources?: Array<{ name?: string }> }>(
        "GET",
        "/apis/cert-manager.io/v1",
        { signal },
      );
      return (list?.resources ?? []).some((r) => r.name === "certificates");
    } catch (e) {
      if (isNotFound(e)) return false;
      last = e;
    }
  }
  throw last;
}

async function main(argv: readonly string[]): Promise<void> {
  let flags: ManagerFlags;
  try {
    const { rest } = configureLogging(argv);
    flags = parseManagerFlags(rest);
  } catch (e) {
    if (e instanceof ManagerFlagError || e instanceof Error) {
      exit(1, `invalid flags: ${e.message}`);
    }
    throw e;
  }
  if (flags.prepareUninstall) Deno.exit(await runPrepareUninstall(flags));
  const shutdown = new AbortController();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => shutdown.abort(new Error(`received ${signal}`)));
  }
  const operatorNamespace = resolveOperatorNamespace(
    flags.operatorNamespace,
    Deno.env.get("POD_NAMESPACE"),
    await serviceAccountNamespace(),
  );
  const xrdGuardEnabled = flags.enableXrdSupport && flags.enableXrdConversionGuard;
  if (flags.enableXrdConversionGuard && !flags.enableXrdSupport) {
    log.info("XRD support is off: the XRD conversion guard is not served", {
      flag: "--enable-xrd-conversion-guard",
    });
  }

  let client: KubeClient;
  try {
    client = await KubeClient.fromEnvironment({ kubeconfig: flags.kubeconfig || undefined });
  } catch (e) {
    exit(1, "cannot load Kubernetes client configuration", { error: e });
  }
  let certificateMode: Exclude<CertificateModeFlag, "auto">;
  try {
    certificateMode = resolveCertificateMode(
      flags.certificateMode,
      flags.certificateMode === "auto" && await certManagerServed(client, shutdown.signal),
    );
  } catch (e) {
    exit(1, "cannot discover whether cert-manager.io/v1 is served (--certificate-mode=auto)", {
      error: e,
    });
  }
  log.info("certificate mode", { flag: flags.certificateMode, mode: certificateMode });
  const kinds: ConfigKind[] = [];
  if (flags.enableCrdSupport) kinds.push(CRD_CONFIG_KIND);
  if (flags.enableXrdSupport) kinds.push(XRD_CONFIG_KIND);

  // Caches, metrics, controllers and their wiring (keys buffer in the queues until start).
  const metricsRegistry = createMetricsRegistry();
  const registry = metricsRegistry.registry;
  const managerMetrics = new ManagerMetrics(registry);
  const caches = createManagerCaches({ client, kinds, logger: createLogger("manager.cache") });
  const deps: DepsOptions = { client, caches, operatorNamespace, metrics: managerMetrics };
  const settings: ServerChildSettings = {
    operatorNamespace,
    defaultImage: flags.defaultWebhookServerImage,
    enableXrdSupport: flags.enableXrdSupport,
    enableCrdSupport: flags.enableCrdSupport,
    certMode: certModeOf(certificateMode),
  };
  const workers = flags.maxConcurrentReconciles;
  const controllers: Controller[] = [];
  const pacers: Pacer[] = [];
  for (const kind of kinds) {
    const configCache = caches.configs.get(kind)!;
    const kindLabel = kind === XRD_CONFIG_KIND ? "xrd" : "crd";
    const controller = new Controller({
      name: CONTROLLER_OF[kind],
      registry,
      workers,
      logger: createLogger(`manager.${CONTROLLER_OF[kind]}`),
      reconcile: (key) => {
        const target = targetLabelOf(configCache.get(key));
        const hooks = managerMetrics.hooksFor(kindLabel, target);
        return reconcileConfig(kind, key, configReconcileDeps(deps, hooks));
      },
    });
    enqueueFor(configCache, controller.queue);
    enqueueFor(
      caches.targets.get(kind)!,
      controller.queue,
      (t) => configCache.indexKeys("target", t.metadata?.name ?? ""),
    );
    // [P11] A generated CRD → the configs of the XRD that generated it (runtime §2.2).
    if (kind === XRD_CONFIG_KIND && caches.crds) {
      enqueueFor(caches.crds, controller.queue, mapGeneratedCRDToConfigs(configCache));
    }
    // CWS → the configs assigned to it (now, or last applied to it), paced at 50/s (§6.5).
    const pacer = new Pacer(controller.queue);
    pacers.push(pacer);
    enqueueFor(
      caches.servers,
      pacer,
      (cws) =>
        configsToWake(
          cws.metadata?.name ?? "",
          caches.servers.list().map(rawServerInfo),
          configCache.list(),
        ),
    );
    controllers.push(controller);
  }
  const serverDeps = serverReconcileDeps(deps, settings);
  const serverController = new Controller({
    name: "conversionwebhookserver",
    registry,
    workers,
    logger: createLogger("manager.conversionwebhookserver"),
    reconcile: (key) => reconcileServer(key, serverDeps),
  });
  enqueueFor(caches.servers, serverController.queue);
  enqueueFor(caches.deployments, serverController.queue, ownerServer);
  enqueueFor(caches.services, serverController.queue, ownerServer);
  // Configs (both kinds; runtime §2.2 names XRD configs) → every server: `assignedConfigs`.
  for (const configCache of caches.configs.values()) {
    enqueueFor(
      configCache,
      serverController.queue,
      () => caches.servers.list().map((s) => s.metadata?.name ?? ""),
      { predicate: configAffectsServers },
    );
  }
  // A default server added/removed/flipped → every default server: DefaultConflict (api §3.3).
  enqueueFor(
    caches.servers,
    serverController.queue,
    () => defaultServerNames(caches.servers.list()),
    {
      predicate: defaultFlagChanged,
    },
  );
  controllers.push(serverController);

  // The plain listeners before any sync.
  const readiness = new Readiness();
  const plain = createPlainListener({
    readiness,
    registry: { snapshot: () => [] },
    metrics: () => metricsResponse(registry),
  });
  const servers: ServerHandle[] = [];
  for (const address of new Set([flags.metricsBindAddress, flags.healthProbeBindAddress])) {
    try {
      servers.push(await startPlainServer({ address, listener: plain }));
    } catch (e) {
      exit(1, "cannot start the metrics/health listener", { address, error: e });
    }
  }
  let elector: LeaderElector | undefined;
  let keeper: AdmissionCertKeeper | undefined;
  const stopAll = async (code: number): Promise<never> => {
    readiness.set(false);
    await keeper?.stop();
    for (const p of pacers) p.stop();
    await elector?.stop();
    await Promise.all(controllers.map((c) => c.stop()));
    await shutdownAll(servers, SHUTDOWN_TIMEOUT_MS);
    await caches.stop();
    metricsRegistry.stop();
    client.close();
    Deno.exit(code);
  };

  caches.start();
  log.info("informer caches scoped", { scope: caches.description });
  try {
    await caches.waitForSync(shutdown.signal);
  } catch (e) {
    if (shutdown.signal.aborted) await stopAll(0);
    log.error("informer cache failed to sync; exiting", { error: e });
    await stopAll(1);
  }

  // Admission on TLS: the pair in the cert dir (cert-manager, user-provided) when it is there,
  // else the self-issued one (built-in CA), else off.
  const admissionListener = () =>
    createNodeAdmissionListener({
      ctx: admissionContext(deps, {
        xrd: flags.enableXrdSupport,
        crd: flags.enableCrdSupport,
      }),
      onError: (error, path) => log.error("admission decision failed", { path, error }),
      // [P11] The mutating XRD conversion guard (api §4.3), fails open.
      ...(xrdGuardEnabled
        ? {
          xrdGuard: {
            lookup: xrdGuardLookup(caches),
            onDecision: (decision, xrd, operation) => {
              if (decision.patch.length > 0) {
                guardLog.info("XRD conversion guard restored the conversion stanza", {
                  xrd,
                  operation,
                  reason: decision.reason,
                });
              } else {
                guardLog.debug("XRD conversion guard allowed the write unchanged", {
                  xrd,
                  operation,
                  reason: decision.reason,
                });
              }
            },
          },
        }
        : {}),
    });
  if (await hasKeyPair(flags.webhookCertDir)) {
    try {
      servers.push(
        await TlsServer.start({
          address: flags.webhookBindAddress,
          certDir: flags.webhookCertDir,
          reloadIntervalMs: CERT_RELOAD_INTERVAL_MS,
          listener: admissionListener(),
        }),
      );
      log.info("admission webhooks serving", { address: flags.webhookBindAddress });
    } catch (e) {
      exit(1, "cannot start the admission listener", {
        address: flags.webhookBindAddress,
        error: e,
      });
    }
  } else if (selfIssuedAdmission(flags)) {
    keeper = admissionCertKeeper(client, flags, operatorNamespace);
    // Before serving: a current leaf in the Secret (and, best effort, the caBundle).
    let state: AdmissionCertState | undefined;
    let lastError: unknown;
    for (let attempt = 0; attempt < DISCOVERY_ATTEMPTS && state === undefined; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, DISCOVERY_RETRY_MS));
      if (shutdown.signal.aborted) await stopAll(0);
      try {
        state = await keeper.ensure();
      } catch (e) {
        lastError = e;
        // The leaf may be fine and only the caBundle failed (e.g. the VWC is not created yet).
        if (await keeper.readPair().then(() => true, () => false)) break;
      }
    }
    if (state === undefined && !(await keeper.readPair().then(() => true, () => false))) {
      log.error("cannot issue the admission certificate", {
        secret: keeper.secretRef,
        error: lastError,
      });
      await stopAll(1);
    }
    if (lastError !== undefined && state === undefined) {
      log.error(
        "ensuring the admission certificate/caBundle failed; serving the stored pair, retrying",
        {
          secret: keeper.secretRef,
          validatingWebhookConfiguration: flags.admissionWebhookConfiguration,
          error: lastError,
        },
      );
    }
    try {
      const server = await TlsServer.start({
        address: flags.webhookBindAddress,
        loadPair: () => keeper!.readPair(),
        source: keeper.secretRef,
        reloadIntervalMs: CERT_RELOAD_INTERVAL_MS,
        listener: admissionListener(),
      });
      servers.push(server);
      keeper.onEnsured = () => server.reloadNow();
    } catch (e) {
      exit(1, "cannot start the admission listener", {
        address: flags.webhookBindAddress,
        error: e,
      });
    }
    keeper.start(keeper.nextDelay(state));
    log.info("admission webhooks serving (self-issued certificate)", {
      address: flags.webhookBindAddress,
      secret: keeper.secretRef,
      validatingWebhookConfiguration: flags.admissionWebhookConfiguration || undefined,
      mutatingWebhookConfiguration: flags.admissionMutatingWebhookConfiguration || undefined,
      notAfter: state ? new Date(state.notAfter).toISOString() : undefined,
    });
  } else {
    log.info("admission webhooks disabled: no tls.crt/tls.key in the webhook cert dir", {
      dir: flags.webhookCertDir,
      ...(flags.admissionCertSecret !== ""
        ? { ignored: `--admission-* (--certificate-mode=${flags.certificateMode})` }
        : {}),
    });
  }
  readiness.set(true);

  const startControllers = () => {
    for (const c of controllers) c.start();
    log.info("controllers started", {
      controllers: controllers.map((c) => c.name),
      operatorNamespace,
      workers,
    });
  };
  if (flags.leaderElect) {
    const identity = `${Deno.env.get("POD_NAME") || "manager"}_${crypto.randomUUID()}`;
    elector = new LeaderElector({
      client,
      namespace: flags.leaderElectionNamespace || operatorNamespace,
      name: MANAGER_LEASE_NAME,
      identity,
      onStartedLeading: startControllers,
      onStoppedLeading: () => {
        if (!shutdown.signal.aborted) {
          log.error("leader election lost; exiting");
          shutdown.abort(new Error("leader election lost"));
        }
      },
    });
    elector.start();
  } else {
    startControllers();
  }

  await new Promise<void>((resolve) => {
    if (shutdown.signal.aborted) resolve();
    shutdown.signal.addEventListener("abort", () => resolve());
  });
  const reason = String(shutdown.signal.reason);
  log.info("shutting down", { reason });
  await stopAll(reason.includes("leader election lost") ? 1 : 0);
}

if (import.meta.main) {
  await main(Deno.args);
}
