/**
 * The config controllers, one per enabled config kind (`crdconversionconfig`,
 * `xrdconversionconfig`): the reconcile of src/manager/config/ over the caches, and
 * the watches that wake it (docs/design/manager.md#controllers-and-what-wakes-them).
 */
import { type ConfigKind, CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "../api/mod.ts";
import { DCO_GROUP } from "../api/resources.ts";
import { resolveServer, type ServerInfo } from "../assign/resolve.ts";
import { Controller, enqueueFor, type Informer, type KubeObject, Pacer } from "../kube/mod.ts";
import { createLogger } from "../obs/log.ts";
import type { Registry } from "prom-client";
import {
  type DepsOptions,
  type ManagerCaches,
  rawServerInfo,
  rawTargetOf,
  TARGET_INDEX,
  targetLabelOf,
} from "./caches.ts";
import { configReconcileDeps, reconcileConfig } from "./config/mod.ts";
import type { ManagerMetrics } from "./metrics.ts";

/** Controller names; the `controller` label of the framework's metrics. */
export const CONTROLLER_OF: Readonly<Record<ConfigKind, string>> = {
  [CRD_CONFIG_KIND]: "crdconversionconfig",
  [XRD_CONFIG_KIND]: "xrdconversionconfig",
};

/**
 * The paced CWS → configs fan-out: on an event of server `server`, the configs it wins now
 * (resolver over the current servers) plus the configs it held (their
 * `status.assignedWebhookServer`). So adding a pool member wakes exactly the configs it now wins,
 * and removing one (deleted, or `sharding.enabled: false`) exactly the configs it held. Sorted.
 */
export function configsToWake(
  server: string,
  servers: readonly ServerInfo[],
  configs: readonly KubeObject[],
): string[] {
  const keys: string[] = [];
  for (const cfg of configs) {
    const spec = (cfg as { spec?: { webhookServerRef?: { name?: string } | null } }).spec;
    const assigned = (cfg as { status?: { assignedWebhookServer?: string } }).status
      ?.assignedWebhookServer;
    const r = resolveServer(
      { target: rawTargetOf(cfg) ?? "", webhookServerRef: spec?.webhookServerRef },
      servers,
    );
    if ((r.ok && r.server === server) || assigned === server) keys.push(cfg.metadata?.name ?? "");
  }
  return keys.sort();
}

/**
 * A CRD → the XRD configs of the XRD that generated it — by each owner reference of kind
 * `CompositeResourceDefinition` in `apiextensions.crossplane.io`, plus by the CRD's own name (the
 * composite CRD is named like its XRD); deduplicated and sorted. Reads the config cache's target
 * index (cannot fail to list).
 */
export function mapGeneratedCRDToConfigs(
  configCache: Pick<Informer, "indexKeys">,
): (crd: KubeObject) => string[] {
  return (crd) => {
    const keys = new Set<string>();
    const refs = (crd.metadata?.ownerReferences ?? []) as Array<
      { apiVersion?: string; kind?: string; name?: string }
    >;
    for (const r of refs) {
      if (
        r.kind === "CompositeResourceDefinition" &&
        (r.apiVersion ?? "").startsWith("apiextensions.crossplane.io/") &&
        typeof r.name === "string" && r.name !== ""
      ) {
        for (const k of configCache.indexKeys(TARGET_INDEX, r.name)) keys.add(k);
      }
    }
    for (const k of configCache.indexKeys(TARGET_INDEX, crd.metadata?.name ?? "")) keys.add(k);
    return [...keys].sort();
  };
}

/** What every controller of the manager is built with. */
export interface ControllerSettings {
  registry: Registry;
  /** `--max-concurrent-reconciles`. */
  workers: number;
}

/** The config controllers (keys buffer in their queues until started) and their pacers. */
export interface ConfigControllers {
  controllers: Controller[];
  /** Stop before the controllers: they hold the paced CWS fan-out's pending keys. */
  pacers: Pacer[];
}

/** A controller per enabled config kind, wired to its caches. */
export function setupConfigControllers(
  caches: ManagerCaches,
  deps: DepsOptions & { metrics: ManagerMetrics },
  settings: ControllerSettings,
): ConfigControllers {
  const out: ConfigControllers = { controllers: [], pacers: [] };
  for (const [kind, configCache] of caches.configs) {
    const kindLabel = kind === XRD_CONFIG_KIND ? "xrd" : "crd";
    const controller = new Controller({
      name: CONTROLLER_OF[kind],
      registry: settings.registry,
      workers: settings.workers,
      logger: createLogger(`manager.${CONTROLLER_OF[kind]}`),
      kind: { group: DCO_GROUP, kind },
      reconcile: (key) => {
        const target = targetLabelOf(configCache.get(key));
        const hooks = deps.metrics.hooksFor(kindLabel, target);
        return reconcileConfig(kind, key, configReconcileDeps(deps, hooks));
      },
    });
    // The `map_func` label of dco_watch_map_list_errors_total: `<controller>.<map function>`.
    const mapped = (fn: string) => ({
      mapFunc: `${CONTROLLER_OF[kind]}.${fn}`,
      registry: settings.registry,
    });
    enqueueFor(configCache, controller.queue);
    enqueueFor(
      caches.targets.get(kind)!,
      controller.queue,
      (t) => configCache.indexKeys(TARGET_INDEX, t.metadata?.name ?? ""),
      mapped(kind === XRD_CONFIG_KIND ? "mapXRDToConfigs" : "mapCRDToConfigs"),
    );
    if (kind === XRD_CONFIG_KIND && caches.crds) {
      enqueueFor(
        caches.crds,
        controller.queue,
        mapGeneratedCRDToConfigs(configCache),
        mapped("mapGeneratedCRDToConfigs"),
      );
    }
    const pacer = new Pacer(controller.queue);
    enqueueFor(
      caches.servers,
      pacer,
      (cws) =>
        configsToWake(
          cws.metadata?.name ?? "",
          caches.servers.list().map(rawServerInfo),
          configCache.list(),
        ),
      mapped("mapServerToAssignedConfigs"),
    );
    out.controllers.push(controller);
    out.pacers.push(pacer);
  }
  return out;
}
