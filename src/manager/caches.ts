/**
 * The manager's informer caches and the reads the controllers and admission make from them.
 * What is cached, and why Secrets are not: docs/design/manager.md#caches.
 *
 * Reads come from the caches (a stale read is corrected by the write's optimistic lock or the next
 * event); the reads that must not be stale (the served-target Leases, a Secret) go to the
 * apiserver. The served-target Leases are watched all the same (only to wake the server
 * controller), so a replica's report reaches its server's status within seconds.
 */
import type { EventRecorder } from "../kube/events.ts";
import {
  type ConfigKind,
  type ConversionWebhookServer,
  ConversionWebhookServerSchema,
  CRD_CONFIG_KIND,
  parseConfig,
  targetNameOf,
  XRD_CONFIG_KIND,
} from "../api/mod.ts";
import { CONFIG_RESOURCES, SERVER_RESOURCE, XRD_RESOURCE } from "../api/resources.ts";
import {
  type ServedLeaseLike,
  servedLeaseSelector,
  WEBHOOK_SERVER_LABEL,
} from "../api/served_lease.ts";
import type { ServerInfo } from "../assign/resolve.ts";
import type { JsonObject } from "../engine/mod.ts";
import {
  getOrUndefined,
  Informer,
  type KubeClient,
  type KubeObject,
  type ResourceRef,
} from "../kube/mod.ts";
import { CRD_RESOURCE, DEPLOYMENTS, HPAS, LEASES, PDBS, SERVICES } from "../kube/resources.ts";
import type { Logger } from "../obs/log.ts";
import type { Registry } from "prom-client";
import type { ConfigSummary } from "./admission/context.ts";
import type { WebhookServerPolicy } from "./admission/server_policy.ts";
import type { ManagerMetrics } from "./metrics.ts";
import { LABEL_MANAGED_BY, MANAGED_BY } from "./server/names.ts";

/** The target resource of a config kind. */
export const TARGET_RESOURCES: Readonly<Record<ConfigKind, ResourceRef>> = {
  [CRD_CONFIG_KIND]: CRD_RESOURCE,
  [XRD_CONFIG_KIND]: XRD_RESOURCE,
};

/** The selector every cached child type carries; Secrets are never cached. */
export const OWNED_SELECTOR = `${LABEL_MANAGED_BY}=${MANAGED_BY}`;

/**
 * The selector of the served-target Lease cache: owned (managed-by) and naming an instance, so no
 * other Lease (a node's, a leader election's) is ever cached.
 */
export const SERVED_LEASE_CACHE_SELECTOR = `${OWNED_SELECTOR},${WEBHOOK_SERVER_LABEL}`;

/** Name of the config informers' index on the target name. */
export const TARGET_INDEX = "target";

export interface ManagerCaches {
  /** Config informers of the enabled kinds. */
  readonly configs: ReadonlyMap<ConfigKind, Informer>;
  /** Target informers (CRDs for CRD configs, XRDs for XRD configs) of the enabled kinds. */
  readonly targets: ReadonlyMap<ConfigKind, Informer>;
  /**
   * All CRDs, when XRD configs are enabled (the CRDs Crossplane generates from XRDs): the CRD
   * target informer when CRD configs are enabled too, else its own.
   */
  readonly crds?: Informer;
  readonly servers: Informer;
  /**
   * The owned Deployments and Services: one informer per namespace webhook servers may use
   * (`--webhook-server-namespaces`), or one cluster-wide when any namespace is allowed.
   */
  readonly deployments: readonly Informer[];
  readonly services: readonly Informer[];
  /** The owned HorizontalPodAutoscalers and PodDisruptionBudgets, scoped like the Deployments. */
  readonly hpas: readonly Informer[];
  readonly pdbs: readonly Informer[];
  /**
   * The served-target Leases ({@link SERVED_LEASE_CACHE_SELECTOR}), scoped like the Deployments:
   * watched to wake the server controller; reads still go to the apiserver.
   */
  readonly leases: readonly Informer[];
  readonly informers: readonly Informer[];
  /** One line describing the scoping (logged at startup). */
  readonly description: string;
  start(): void;
  /** Resolves when every cache synced; rejects with the cause of a terminal failure. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

/** The cached object `namespace/name` from whichever of the per-namespace informers holds it. */
export function getCached(informers: readonly Informer[], key: string): KubeObject | undefined {
  for (const informer of informers) {
    const obj = informer.get(key);
    if (obj !== undefined) return obj;
  }
  return undefined;
}

/** What the adapters behind the controllers and admission read and write through. */
export interface DepsOptions {
  client: KubeClient;
  caches: ManagerCaches;
  operatorNamespace: string;
  /** The ConversionWebhookServer policy admission enforces; absent ⇒ the default policy. */
  serverPolicy?: WebhookServerPolicy;
  metrics?: ManagerMetrics;
  now?: () => number;
  /** Where the controllers' Events go; none recorded when absent. */
  events?: EventRecorder;
}

/** The bare target name of a config object as stored (no decoding). */
export function rawTargetOf(obj: KubeObject): string | undefined {
  const spec = (obj as { spec?: Record<string, { name?: unknown } | undefined> }).spec;
  const name = spec?.targetCRD?.name ?? spec?.targetXRD?.name;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/** Caches of the manager: config kinds and their targets per feature flag, CWS, owned children. */
export function createManagerCaches(opts: {
  client: KubeClient;
  kinds: readonly ConfigKind[];
  logger: Logger;
  /** Where the informers' watch-error and last-sync families go. */
  registry?: Registry;
  /**
   * The namespaces webhook servers' children may live in: the Deployment and Service caches watch
   * only these (the chart's Roles grant list/watch only there). Absent ⇒ cluster-wide.
   */
  namespaces?: readonly string[];
}): ManagerCaches {
  const { client, logger, registry } = opts;
  // A namespaced informer is named `<plural>[.<group>]/<namespace>`: its metrics name the scope.
  const informer = (resource: ResourceRef, labelSelector?: string) => {
    const kind = resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
    return new Informer({
      client,
      resource,
      logger,
      registry,
      ...(resource.namespace === undefined ? {} : { name: `${kind}/${resource.namespace}` }),
      ...(labelSelector ? { labelSelector } : {}),
    });
  };
  const scopes: ReadonlyArray<string | undefined> = opts.namespaces ?? [undefined];
  const configs = new Map<ConfigKind, Informer>();
  const targets = new Map<ConfigKind, Informer>();
  for (const kind of opts.kinds) {
    const cfg = informer(CONFIG_RESOURCES[kind]);
    cfg.addIndex(TARGET_INDEX, rawTargetOf);
    configs.set(kind, cfg);
    targets.set(kind, informer(TARGET_RESOURCES[kind]));
  }
  const servers = informer(SERVER_RESOURCE);
  const deployments = scopes.map((ns) => informer(DEPLOYMENTS(ns), OWNED_SELECTOR));
  const services = scopes.map((ns) => informer(SERVICES(ns), OWNED_SELECTOR));
  const hpas = scopes.map((ns) => informer(HPAS(ns), OWNED_SELECTOR));
  const pdbs = scopes.map((ns) => informer(PDBS(ns), OWNED_SELECTOR));
  const leases = scopes.map((ns) => informer(LEASES(ns), SERVED_LEASE_CACHE_SELECTOR));
  // Generated CRDs are read from a CRD cache: shared with the CRD target informer.
  let crds: Informer | undefined;
  let ownCRDs: Informer[] = [];
  if (configs.has(XRD_CONFIG_KIND)) {
    crds = targets.get(CRD_CONFIG_KIND);
    if (crds === undefined) {
      crds = informer(CRD_RESOURCE);
      ownCRDs = [crds];
    }
  }
  const informers = [
    ...configs.values(),
    ...targets.values(),
    ...ownCRDs,
    servers,
    ...deployments,
    ...services,
    ...hpas,
    ...pdbs,
    ...leases,
  ];
  const kinds = [...configs.keys()].join(", ") || "none";
  return {
    configs,
    targets,
    crds,
    servers,
    deployments,
    services,
    hpas,
    pdbs,
    leases,
    informers,
    description: `cluster-wide: ConversionWebhookServers, configs (${kinds}) and their targets` +
      (crds === undefined ? "" : " (plus all CRDs for the XRDs' generated CRDs)") + "; " +
      `Deployments, Services, HorizontalPodAutoscalers and PodDisruptionBudgets only with ${OWNED_SELECTOR}, served-target Leases only with ${SERVED_LEASE_CACHE_SELECTOR}, ${
        opts.namespaces === undefined
          ? "cluster-wide"
          : `in namespace(s) ${opts.namespaces.join(", ")}`
      }; Secrets never cached`,
    start() {
      for (const i of informers) i.start();
    },
    async waitForSync(signal) {
      await Promise.all(informers.map((i) => i.waitForSync(signal)));
    },
    async stop() {
      await Promise.all(informers.map((i) => i.stop()));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Reads

/** A target from its cache, else (feature off for that kind) a live GET. */
export async function getTarget(
  o: DepsOptions,
  configKind: ConfigKind,
  name: string,
): Promise<JsonObject | undefined> {
  const cache = o.caches.targets.get(configKind);
  if (cache !== undefined) {
    const obj = cache.get(name);
    return obj === undefined ? undefined : structuredClone(obj) as unknown as JsonObject;
  }
  const live = await getOrUndefined(o.client.get(TARGET_RESOURCES[configKind], name));
  return live as unknown as JsonObject | undefined;
}

/** The decoded server, or undefined when it does not decode. */
export function decodeServer(obj: KubeObject): ConversionWebhookServer | undefined {
  const r = ConversionWebhookServerSchema.safeParse(obj);
  return r.success ? r.data : undefined;
}

/** The resolver's view of a stored server (loose: a server that fails to decode still counts). */
export function rawServerInfo(obj: KubeObject): ServerInfo {
  const spec = (obj as { spec?: { default?: boolean; sharding?: ServerInfo["sharding"] } }).spec;
  return {
    name: obj.metadata?.name ?? "",
    default: spec?.default === true,
    ...(spec?.sharding === undefined ? {} : { sharding: spec.sharding }),
  };
}

/** `targetNameOf` for a stored config object, "" when it does not decode. */
export function targetLabelOf(obj: KubeObject | undefined): string {
  if (obj === undefined) return "";
  const r = parseConfig(obj);
  return r.ok ? targetNameOf(r.config) : rawTargetOf(obj) ?? "";
}

/** Admission's view of a stored config (no decoding). */
export function rawConfigSummary(kind: ConfigKind, obj: KubeObject): ConfigSummary {
  const o = obj as {
    spec?: { webhookServerRef?: { name?: string } | null };
    status?: { webhookURL?: unknown };
  };
  const url = o.status?.webhookURL;
  return {
    kind,
    name: obj.metadata?.name ?? "",
    target: rawTargetOf(obj) ?? "",
    ...(o.spec?.webhookServerRef === undefined
      ? {}
      : { webhookServerRef: o.spec.webhookServerRef }),
    ...(typeof url === "string" ? { webhookURL: url } : {}),
  };
}

/** A config summary (admission's view) plus the config's `status.phase`. */
export type ConfigSummaryWithPhase = ConfigSummary & { phase?: string };

/** Every cached config of the enabled kinds with its phase (CWS `status.assignedConfigs`). */
export function listConfigsWithPhase(o: DepsOptions): ConfigSummaryWithPhase[] {
  const out: ConfigSummaryWithPhase[] = [];
  for (const [kind, informer] of o.caches.configs) {
    for (const obj of informer.list()) {
      const phase = (obj as { status?: { phase?: unknown } }).status?.phase;
      out.push({
        ...rawConfigSummary(kind, obj),
        ...(typeof phase === "string" && phase !== "" ? { phase } : {}),
      });
    }
  }
  return out;
}

/**
 * The served-target Leases of instance `serverName` in `serverNamespace` (label
 * `conversion.terasky.com/webhook-server=<cws>`), read through: they change with every replica's
 * registry, and no Lease is cached.
 */
export async function listServedLeases(
  client: KubeClient,
  serverName: string,
  serverNamespace: string,
): Promise<ServedLeaseLike[]> {
  const list = await client.list(LEASES(serverNamespace), {
    labelSelector: servedLeaseSelector(serverName),
  });
  return list.items as unknown as ServedLeaseLike[];
}
