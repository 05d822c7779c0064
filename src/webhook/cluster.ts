/**
 * The replica's informer caches (docs/design/webhook.md#replica-caches) and the `ClusterView` the
 * registry controller
 * reads: the config kinds (per enabled feature, label-scoped), ConversionWebhookServers, and the
 * schema kinds (CRDs / XRDs, label-scoped, with the managedFields/last-applied strip transform).
 * Also maps cache events to registry-controller keys (`<kind>/<config name>`).
 */
import { CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "../api/config.ts";
import {
  CONFIG_RESOURCES as CONFIG_RESOURCES_OF_KIND,
  SERVER_RESOURCE,
  XRD_RESOURCE,
} from "../api/resources.ts";
import type { ServerInfo } from "../assign/resolve.ts";
import type { JsonObject } from "../engine/mod.ts";
import type { KubeClient } from "../kube/client.ts";
import { enqueueFor, type KeySink, Pacer } from "../kube/enqueue.ts";
import type { KubeObject, ResourceRef } from "../kube/objects.ts";
import { Informer } from "../kube/informer.ts";
import { CRD_RESOURCE } from "../kube/resources.ts";
import type { Logger } from "../obs/log.ts";
import type { Registry } from "prom-client";
import { targetOf } from "./compile.ts";
import type { ConfigKind } from "./compiled.ts";
import type { CachedConfig, ClusterView } from "./registry_controller.ts";

export const CONFIG_RESOURCES: Record<ConfigKind, ResourceRef> = {
  crd: CONFIG_RESOURCES_OF_KIND[CRD_CONFIG_KIND],
  xrd: CONFIG_RESOURCES_OF_KIND[XRD_CONFIG_KIND],
};
export const TARGET_RESOURCES: Record<ConfigKind, ResourceRef> = {
  crd: CRD_RESOURCE,
  xrd: XRD_RESOURCE,
};

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * Drops what a replica never reads from a CRD/XRD: in place, idempotent, allocation-free.
 * Schemas of versions no config targets are kept on purpose (informers cannot be re-scoped).
 */
export function stripSchemaObject(obj: KubeObject): void {
  const meta = obj.metadata as { managedFields?: unknown; annotations?: Record<string, string> };
  if (meta === undefined || meta === null) return;
  if (meta.managedFields !== undefined) delete meta.managedFields;
  if (meta.annotations !== undefined && LAST_APPLIED in meta.annotations) {
    delete meta.annotations[LAST_APPLIED];
  }
}

const TARGET_INDEX = "target";

/** The `map_func` names of the target → configs maps (`webhookserver.<name>`). */
const MAP_TARGET_TO_CONFIGS: Record<ConfigKind, string> = {
  crd: "mapCRDToConfigs",
  xrd: "mapXRDToConfigs",
};

export interface ReplicaCaches extends ClusterView, AsyncDisposable {
  readonly kinds: readonly ConfigKind[];
  readonly informers: readonly Informer[];
  start(): void;
  /** Resolves when every cache synced; rejects at once with the cause of a terminal failure. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  /** Wires cache events to registry-controller keys; CWS changes fan out paced (50/s). */
  connect(sink: KeySink): void;
  stop(): Promise<void>;
}

export interface ReplicaCacheOptions {
  client: KubeClient;
  kinds: readonly ConfigKind[];
  labelSelector: string;
  logger: Logger;
  /** Where the informer families and `dco_watch_map_list_errors_total` go. */
  registry?: Registry;
}

function toServerInfo(obj: KubeObject): ServerInfo {
  const spec = (obj as { spec?: { default?: boolean; sharding?: ServerInfo["sharding"] } }).spec;
  return {
    name: obj.metadata?.name ?? "",
    default: spec?.default === true,
    sharding: spec?.sharding,
  };
}

export function createReplicaCaches(opts: ReplicaCacheOptions): ReplicaCaches {
  const selector = opts.labelSelector === "" ? undefined : opts.labelSelector;
  const registry = opts.registry;
  const configs = new Map<ConfigKind, Informer>();
  const targets = new Map<ConfigKind, Informer>();
  for (const kind of opts.kinds) {
    const cfg = new Informer({
      client: opts.client,
      resource: CONFIG_RESOURCES[kind],
      labelSelector: selector,
      logger: opts.logger,
      registry,
    });
    cfg.addIndex(TARGET_INDEX, (o) => targetOf(kind, o as unknown as CachedConfig) || undefined);
    configs.set(kind, cfg);
    targets.set(
      kind,
      new Informer({
        client: opts.client,
        resource: TARGET_RESOURCES[kind],
        labelSelector: selector,
        transform: stripSchemaObject,
        logger: opts.logger,
        registry,
      }),
    );
  }
  const servers = new Informer({
    client: opts.client,
    resource: SERVER_RESOURCE,
    logger: opts.logger,
    registry,
  });
  const informers = [...configs.values(), ...targets.values(), servers];
  let pacer: Pacer | undefined;

  const view: ReplicaCaches = {
    kinds: opts.kinds,
    informers,
    getConfig: (kind, name) => configs.get(kind)?.get(name) as CachedConfig | undefined,
    listConfigs: (kind) => (configs.get(kind)?.list() ?? []) as unknown as CachedConfig[],
    listServers: () => servers.list().map(toServerInfo),
    getTarget: (kind, name) => targets.get(kind)?.get(name) as JsonObject | undefined,
    start() {
      for (const i of informers) i.start();
    },
    async waitForSync(signal) {
      await Promise.all(informers.map((i) => i.waitForSync(signal)));
    },
    connect(sink) {
      for (const [kind, informer] of configs) {
        enqueueFor(informer, sink, (o) => `${kind}/${o.metadata?.name}`);
        enqueueFor(
          targets.get(kind)!,
          sink,
          (o) =>
            informer.byIndex(TARGET_INDEX, o.metadata?.name ?? "").map((c) =>
              `${kind}/${c.metadata?.name}`
            ),
          {
            mapFunc: `webhookserver.${MAP_TARGET_TO_CONFIGS[kind]}`,
            registry,
            logger: opts.logger,
          },
        );
      }
      // Any server change can move unpinned targets (the resolver takes the whole list).
      pacer = new Pacer(sink);
      enqueueFor(servers, pacer, () => {
        const keys: string[] = [];
        for (const [kind, informer] of configs) {
          for (const c of informer.list()) keys.push(`${kind}/${c.metadata?.name}`);
        }
        return keys;
      }, { mapFunc: "webhookserver.mapServerToConfigs", registry, logger: opts.logger });
    },
    async stop() {
      pacer?.stop();
      await Promise.all(informers.map((i) => i.stop()));
    },
    [Symbol.asyncDispose]() {
      return view.stop();
    },
  };
  return view;
}
