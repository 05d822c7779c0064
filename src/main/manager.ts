/**
 * The manager role: reconciles the config kinds and ConversionWebhookServers and serves the
 * admission webhooks. It never talks to webhook-server pods. This file is only the startup
 * order; each step and why it comes where it does: docs/design/manager.md#startup-order.
 *
 * `--prepare-uninstall` runs the one-shot uninstall preparation of src/manager/uninstall.ts instead
 * (the chart's pre-delete hook Job) and exits with its code; `--check-installation` runs the
 * installation check of src/manager/install_check.ts (the chart's `helm test` Pod) likewise.
 *
 * Permissions: `--allow-net --allow-env --allow-read=<cert dir>,<service-account dir>`.
 */
import { type ConfigKind, CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "../api/mod.ts";
import { LeaderElector, MANAGER_LEASE_NAME, SERVICE_ACCOUNT_DIR } from "../kube/mod.ts";
import { startAdmission } from "../manager/admission_setup.ts";
import { setupCARotation } from "../manager/ca_rotation_setup.ts";
import { createManagerCaches, type DepsOptions } from "../manager/caches.ts";
import { setupConfigControllers } from "../manager/config_controller.ts";
import {
  checkCrossplane,
  CROSSPLANE_GROUP_VERSION,
  XRD_SUPPORT_OFF_FLAG,
  XRD_SUPPORT_OFF_HELM_VALUE,
} from "../manager/crossplane_check.ts";
import { admissionDenialEvent, managerEventRecorder } from "../manager/events.ts";
import {
  parseManagerFlags,
  resolveOperatorNamespace,
  webhookServerPolicyOf,
} from "../manager/flags.ts";
import { LeaderTerm } from "../manager/leadership.ts";
import { ManagerMetrics } from "../manager/metrics.ts";
import {
  resolveServerCertificateMode,
  serverChildSettings,
  setupServerController,
} from "../manager/server_controller.ts";
import { runPrepareUninstall } from "../manager/uninstall.ts";
import { runInstallCheck } from "../manager/install_check.ts";
import { createLogger } from "../obs/log.ts";
import { registerBuildInfo } from "../obs/build_info.ts";
import { createMetricsRegistry, metricsResponse } from "../obs/metrics.ts";
import { startMetricsListener } from "./_metrics.ts";
import { parseRoleFlags, Role } from "./_role.ts";

/**
 * The whole stop's deadline: inside the chart's terminationGracePeriodSeconds (10 s), so the Lease
 * release and the admission listener's drain happen before the kubelet's SIGKILL.
 */
const SHUTDOWN_TIMEOUT_MS = 8_000;
/** How long a stopping leader waits for in-flight reconciles before leaving its Lease to expire. */
const LEADER_STOP_TIMEOUT_MS = 5_000;

async function serviceAccountNamespace(): Promise<string | undefined> {
  try {
    return (await Deno.readTextFile(`${SERVICE_ACCOUNT_DIR}/namespace`)).trim();
  } catch {
    return undefined; // not in a pod (or not readable)
  }
}

async function main(argv: readonly string[]): Promise<never> {
  const flags = parseRoleFlags("manager", argv, parseManagerFlags);
  if (flags.prepareUninstall) Deno.exit(await runPrepareUninstall(flags));
  if (flags.checkInstallation) {
    const ns = resolveOperatorNamespace(
      flags.operatorNamespace,
      Deno.env.get("POD_NAMESPACE"),
      await serviceAccountNamespace(),
    );
    Deno.exit(await runInstallCheck(flags, ns));
  }
  const role = new Role({ logger: "manager", shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS });
  const log = role.log;
  const operatorNamespace = resolveOperatorNamespace(
    flags.operatorNamespace,
    Deno.env.get("POD_NAMESPACE"),
    await serviceAccountNamespace(),
  );
  if (flags.enableXrdConversionGuard && !flags.enableXrdSupport) {
    log.info("XRD support is off: the XRD conversion guard is not served", {
      flag: "--enable-xrd-conversion-guard",
    });
  }

  const metricsRegistry = createMetricsRegistry();
  role.onStop("metrics", () => metricsRegistry.stop());
  const registry = metricsRegistry.registry;
  registerBuildInfo(registry);
  const client = await role.client(flags.kubeconfig, registry);
  role.onStop("client", () => client.close());
  if (flags.enableXrdSupport) {
    // Before any cache: an XRD informer without Crossplane's API could never sync.
    const crossplane = await role.step(
      `cannot discover whether ${CROSSPLANE_GROUP_VERSION} is served (--enable-xrd-support)`,
      {},
      () => checkCrossplane(client, { signal: role.signal }),
    );
    if (!crossplane.ok) {
      await role.fail(crossplane.message, {
        missing: crossplane.missing,
        flag: XRD_SUPPORT_OFF_FLAG,
        helmValue: XRD_SUPPORT_OFF_HELM_VALUE,
      });
    }
  }
  const certificateMode = await role.step(
    "cannot discover whether cert-manager.io/v1 is served (--certificate-mode=auto)",
    {},
    () => resolveServerCertificateMode(client, flags.certificateMode, role.signal),
  );
  log.info("certificate mode", { flag: flags.certificateMode, mode: certificateMode });
  const kinds: ConfigKind[] = [];
  if (flags.enableCrdSupport) kinds.push(CRD_CONFIG_KIND);
  if (flags.enableXrdSupport) kinds.push(XRD_CONFIG_KIND);

  // Caches, metrics, controllers and their wiring (keys buffer in the queues until start).
  const caches = createManagerCaches({
    client,
    kinds,
    logger: createLogger("manager.cache"),
    registry,
    ...(flags.webhookServerNamespaces === undefined
      ? {}
      : { namespaces: flags.webhookServerNamespaces }),
  });
  role.onStop("caches", () => caches.stop());
  const deps: DepsOptions & { metrics: ManagerMetrics } = {
    client,
    caches,
    operatorNamespace,
    serverPolicy: webhookServerPolicyOf(flags),
    metrics: new ManagerMetrics(registry),
  };
  const settings = { registry, workers: flags.maxConcurrentReconciles };
  // The controllers write through the term's fenced client; admission keeps the plain one.
  const term = new LeaderTerm(client);
  const events = managerEventRecorder(term.client);
  role.onStop("events", () => events.stop());
  const controllerDeps = { ...deps, client: term.client, events };
  const configControllers = setupConfigControllers(caches, controllerDeps, settings);
  const children = serverChildSettings(flags, operatorNamespace, certificateMode);
  const serverController = setupServerController(caches, controllerDeps, children, settings);

  // The metrics and health listeners before any sync (metrics over TLS with --metrics-secure).
  const routes = {
    readiness: role.readiness,
    registry: { snapshot: () => [] },
    metrics: () => metricsResponse(registry),
  };
  for (const address of new Set([flags.metricsBindAddress, flags.healthProbeBindAddress])) {
    const metrics = address === flags.metricsBindAddress;
    await role.listen(
      metrics ? "cannot start the metrics listener" : "cannot start the health listener",
      address,
      () =>
        startMetricsListener({
          address,
          secure: metrics && flags.metricsSecure,
          certDir: flags.webhookCertDir,
          client,
          routes,
          log,
        }),
    );
  }

  caches.start();
  log.info("informer caches scoped", { scope: caches.description });
  await role.waitForSync(caches);

  // Every replica answers admission: its denial Events go through the plain client.
  const admissionEvents = managerEventRecorder(client);
  role.onStop("admission events", () => admissionEvents.stop());
  const admissionKeeper = await startAdmission(role, deps, flags, {
    metrics: deps.metrics.admission,
    onDenied: (denial) => admissionEvents.record(admissionDenialEvent(denial)),
  });
  // The built-in CA's rotation, when the manager issues anything from it (leader only).
  const rotation = certificateMode === "builtin" || admissionKeeper !== undefined
    ? setupCARotation({
      client: term.client,
      caches,
      operatorNamespace,
      registry,
      builtinServers: certificateMode === "builtin",
      events,
      ...(admissionKeeper === undefined ? {} : {
        admission: {
          secretName: flags.admissionCertSecret,
          validatingWebhookConfiguration: flags.admissionWebhookConfiguration,
          mutatingWebhookConfiguration: flags.admissionMutatingWebhookConfiguration,
          run: () => admissionKeeper.runOnce(),
        },
      }),
      serverQueue: serverController.queue,
      configQueues: configControllers.controllers.map((c, i) => {
        const cache = [...caches.configs.values()][i];
        return { queue: c.queue, keys: () => cache.list().map((o) => o.metadata?.name ?? "") };
      }),
      caValidityMs: flags.caValidityMs,
      checkIntervalMs: flags.caRotationCheckIntervalMs,
      propagationDelayMs: flags.caRotationPropagationDelayMs,
    })
    : undefined;
  term.add([
    ...configControllers.controllers,
    serverController,
    ...(rotation === undefined ? [] : [rotation]),
  ], configControllers.pacers);
  role.readiness.set(true);

  const termLog = log.with({ operatorNamespace, workers: settings.workers });
  if (flags.leaderElect) {
    // Stopping the elector stops the controllers, waits for their in-flight reconciles and only
    // then releases the Lease; a lost Lease aborts them at once and the process exits 1.
    const elector = new LeaderElector({
      client,
      namespace: flags.leaderElectionNamespace || operatorNamespace,
      name: MANAGER_LEASE_NAME,
      identity: `${Deno.env.get("POD_NAME") || "manager"}_${crypto.randomUUID()}`,
      stopTimeoutMs: LEADER_STOP_TIMEOUT_MS,
      registry,
      onStartedLeading: (signal) => term.run(signal, termLog),
      onStoppedLeading: () => {
        if (!role.signal.aborted) {
          log.error("leader election lost; exiting");
          role.shutdown("leader election lost", 1);
        }
      },
    });
    role.onStop("leader election", () => elector.stop());
    elector.start();
  } else {
    const stop = new AbortController();
    const running = term.run(stop.signal, termLog);
    role.onStop("controllers", () => {
      stop.abort(new Error("shutting down"));
      return running;
    });
  }
  return await role.run();
}

if (import.meta.main) {
  await main(Deno.args);
}
