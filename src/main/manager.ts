/**
 * The manager role: reconciles the config kinds and ConversionWebhookServers and serves the
 * admission webhooks. It never talks to webhook-server pods. This file is only the startup
 * order; each step and why it comes where it does: docs/design/manager.md#startup-order.
 *
 * `--prepare-uninstall` runs the one-shot uninstall preparation of src/manager/uninstall.ts instead
 * (the chart's pre-delete hook Job) and exits with its code.
 *
 * Permissions: `--allow-net --allow-env --allow-read=<cert dir>,<service-account dir>`.
 */
import { type ConfigKind, CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "../api/mod.ts";
import { LeaderElector, MANAGER_LEASE_NAME, SERVICE_ACCOUNT_DIR } from "../kube/mod.ts";
import { startAdmission } from "../manager/admission_setup.ts";
import { createManagerCaches, type DepsOptions } from "../manager/caches.ts";
import { setupConfigControllers } from "../manager/config_controller.ts";
import { parseManagerFlags, resolveOperatorNamespace } from "../manager/flags.ts";
import { ManagerMetrics } from "../manager/metrics.ts";
import {
  resolveServerCertificateMode,
  serverChildSettings,
  setupServerController,
} from "../manager/server_controller.ts";
import { runPrepareUninstall } from "../manager/uninstall.ts";
import { createLogger } from "../obs/log.ts";
import { createMetricsRegistry, metricsResponse } from "../obs/metrics.ts";
import { createPlainListener, startPlainServer } from "../net/mod.ts";
import { parseRoleFlags, Role } from "./_role.ts";

const SHUTDOWN_TIMEOUT_MS = 30_000;

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

  const client = await role.client(flags.kubeconfig);
  role.onStop("client", () => client.close());
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
  const metricsRegistry = createMetricsRegistry();
  role.onStop("metrics", () => metricsRegistry.stop());
  const registry = metricsRegistry.registry;
  const caches = createManagerCaches({
    client,
    kinds,
    logger: createLogger("manager.cache"),
    registry,
  });
  role.onStop("caches", () => caches.stop());
  const deps: DepsOptions & { metrics: ManagerMetrics } = {
    client,
    caches,
    operatorNamespace,
    metrics: new ManagerMetrics(registry),
  };
  const settings = { registry, workers: flags.maxConcurrentReconciles };
  const configControllers = setupConfigControllers(caches, deps, settings);
  const children = serverChildSettings(flags, operatorNamespace, certificateMode);
  const controllers = [
    ...configControllers.controllers,
    setupServerController(caches, deps, children, settings),
  ];

  // The plain listeners before any sync.
  const plain = createPlainListener({
    readiness: role.readiness,
    registry: { snapshot: () => [] },
    metrics: () => metricsResponse(registry),
  });
  for (const address of new Set([flags.metricsBindAddress, flags.healthProbeBindAddress])) {
    await role.listen(
      "cannot start the metrics/health listener",
      address,
      () => startPlainServer({ address, listener: plain }),
    );
  }

  caches.start();
  log.info("informer caches scoped", { scope: caches.description });
  await role.waitForSync(caches);

  await startAdmission(role, deps, flags);
  role.readiness.set(true);

  role.onStop("controllers", async () => {
    for (const p of configControllers.pacers) p.stop();
    await Promise.all(controllers.map((c) => c.stop()));
  });
  const startControllers = () => {
    for (const c of controllers) c.start();
    log.info("controllers started", {
      controllers: controllers.map((c) => c.name),
      operatorNamespace,
      workers: settings.workers,
    });
  };
  if (flags.leaderElect) {
    const elector = new LeaderElector({
      client,
      namespace: flags.leaderElectionNamespace || operatorNamespace,
      name: MANAGER_LEASE_NAME,
      identity: `${Deno.env.get("POD_NAME") || "manager"}_${crypto.randomUUID()}`,
      onStartedLeading: startControllers,
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
    startControllers();
  }
  return await role.run();
}

if (import.meta.main) {
  await main(Deno.args);
}
