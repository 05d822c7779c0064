/**
 * The `conversionwebhookserver` controller: the reconcile of src/manager/server/reconcile.ts over
 * the caches, the watches that wake it (docs/design/manager.md#controllers-and-what-wakes-them),
 * and the certificate mode its children are built for.
 */
import {
  Controller,
  discoverGroupVersion,
  enqueueFor,
  type KubeClient,
  type KubeObject,
} from "../kube/mod.ts";
import { WEBHOOK_SERVER_KIND } from "../api/mod.ts";
import { DCO_GROUP } from "../api/resources.ts";
import { createLogger } from "../obs/log.ts";
import type { DepsOptions, ManagerCaches } from "./caches.ts";
import type { ControllerSettings } from "./config_controller.ts";
import {
  type CertificateModeFlag,
  certModeOf,
  type ManagerFlags,
  resolveCertificateMode,
  webhookServerPolicyOf,
} from "./flags.ts";
import type { ServerChildSettings } from "./server/mod.ts";
import {
  configAffectsServers,
  defaultFlagChanged,
  defaultServerNames,
  leaseServer,
  reconcileServer,
  servedReportChanged,
  serverReconcileDeps,
} from "./server/mod.ts";

/** The owner CWS name of a child (its controller owner reference), if any. */
export function ownerServer(obj: KubeObject): string | undefined {
  const refs = obj.metadata?.ownerReferences as
    | Array<{ kind?: string; name?: string; controller?: boolean }>
    | undefined;
  return refs?.find((r) => r.kind === "ConversionWebhookServer" && r.controller)?.name;
}

/**
 * `cert-manager.io/v1` served with `certificates` (discovery). Not served => false; any other
 * failure is retried a few times and then thrown: guessing wrong would make two issuers fight over
 * a Secret.
 */
async function certManagerServed(client: KubeClient, signal: AbortSignal): Promise<boolean> {
  const resources = await discoverGroupVersion(client, "cert-manager.io/v1", { signal });
  return (resources ?? []).some((r) => r.name === "certificates");
}

/** `--certificate-mode`, with `auto` resolved by discovery. */
export async function resolveServerCertificateMode(
  client: KubeClient,
  flag: CertificateModeFlag,
  signal: AbortSignal,
): Promise<Exclude<CertificateModeFlag, "auto">> {
  return resolveCertificateMode(flag, flag === "auto" && await certManagerServed(client, signal));
}

/** The operator-wide settings of every server's children. */
export function serverChildSettings(
  flags: ManagerFlags,
  operatorNamespace: string,
  certificateMode: Exclude<CertificateModeFlag, "auto">,
): ServerChildSettings {
  return {
    operatorNamespace,
    defaultImage: flags.defaultWebhookServerImage,
    enableXrdSupport: flags.enableXrdSupport,
    enableCrdSupport: flags.enableCrdSupport,
    certMode: certModeOf(certificateMode),
    policy: webhookServerPolicyOf(flags),
    caValidityMs: flags.caValidityMs,
    metricsSecure: flags.webhookServerMetricsSecure,
  };
}

/** The server controller (keys buffer in its queue until started), wired to the caches. */
export function setupServerController(
  caches: ManagerCaches,
  deps: DepsOptions,
  children: ServerChildSettings,
  settings: ControllerSettings,
): Controller {
  const serverDeps = serverReconcileDeps(deps, children);
  const controller = new Controller({
    name: "conversionwebhookserver",
    registry: settings.registry,
    workers: settings.workers,
    logger: createLogger("manager.conversionwebhookserver"),
    kind: { group: DCO_GROUP, kind: WEBHOOK_SERVER_KIND },
    reconcile: (key) => reconcileServer(key, serverDeps),
  });
  const allServers = () => caches.servers.list().map((s) => s.metadata?.name ?? "");
  enqueueFor(caches.servers, controller.queue);
  for (const cache of [...caches.deployments, ...caches.services, ...caches.hpas, ...caches.pdbs]) {
    enqueueFor(cache, controller.queue, ownerServer);
  }
  // A replica's report (or its Lease appearing or going) → that instance's status.
  for (const cache of caches.leases) {
    enqueueFor(cache, controller.queue, leaseServer, { predicate: servedReportChanged });
  }
  const registry = settings.registry;
  for (const configCache of caches.configs.values()) {
    enqueueFor(configCache, controller.queue, allServers, {
      predicate: configAffectsServers,
      mapFunc: "conversionwebhookserver.enqueueAllServers",
      registry,
    });
  }
  enqueueFor(caches.servers, controller.queue, () => defaultServerNames(caches.servers.list()), {
    predicate: defaultFlagChanged,
    mapFunc: "conversionwebhookserver.mapDefaultServers",
    registry,
  });
  return controller;
}
