/**
 * The manager's cluster side: its informer caches (runtime.md §2.1 [P14] scoping) and the
 * adapters that back the pure decisions with them — {@link ConfigReconcileDeps} for the config
 * reconcile and {@link AdmissionContext} for admission — plus the `dco_manager_*` metric hooks.
 *
 * Reads come from the caches (a stale read is corrected by the write's optimistic lock or the next
 * event), except the one Secret per server, which is read through (Secrets are never cached).
 * Writes go to the apiserver: SSA of targets (dco's field manager, force), merge patches of
 * `/status`, and a merge patch of `metadata.finalizers` carrying `resourceVersion` (so it fails
 * with a conflict on a stale read, like an update, without writing the decoded spec's defaults).
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import {
  type ConfigKind,
  type ConversionConfig,
  type ConversionWebhookServer,
  ConversionWebhookServerSchema,
  CRD_CONFIG_KIND,
  parseConfig,
  targetNameOf,
  XRD_CONFIG_KIND,
} from "../api/mod.ts";
import { type ServedLeaseLike, servedLeaseSelector } from "../api/served_lease.ts";
import { resolveServer, type ServerInfo } from "../assign/resolve.ts";
import type { JsonObject } from "../engine/mod.ts";
import {
  applyObject,
  getOrUndefined,
  Informer,
  type KubeClient,
  type KubeObject,
  patchStatus,
  type ResourceRef,
  TerminalError,
} from "../kube/mod.ts";
import { createLogger, type Logger } from "../obs/log.ts";
import type { AdmissionContext, ConfigSummary } from "./admission.ts";
import type {
  ConfigKindLabel,
  ConfigReconcileDeps,
  ConfigReconcileMetrics,
} from "./config_reconcile.ts";
import type { TargetKind } from "./conversion_patch.ts";
import type { XrdConfigLookup } from "./xrd_guard.ts";
import { LABEL_MANAGED_BY, MANAGED_BY, tlsSecretName } from "./server_children.ts";

// ---------------------------------------------------------------------------------------------
// Resources

const GROUP = "terasky.com";
const VERSION = "v1alpha1";

export const CONFIG_RESOURCES: Readonly<Record<ConfigKind, ResourceRef>> = {
  [CRD_CONFIG_KIND]: { group: GROUP, version: VERSION, plural: "crdconversionconfigs" },
  [XRD_CONFIG_KIND]: { group: GROUP, version: VERSION, plural: "xrdconversionconfigs" },
};
export const SERVER_RESOURCE: ResourceRef = {
  group: GROUP,
  version: VERSION,
  plural: "conversionwebhookservers",
};
export const CRD_RESOURCE: ResourceRef = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
};
export function xrdResource(version = "v2"): ResourceRef {
  return { group: "apiextensions.crossplane.io", version, plural: "compositeresourcedefinitions" };
}
/** The target resource of a config kind. */
export const TARGET_RESOURCES: Readonly<Record<ConfigKind, ResourceRef>> = {
  [CRD_CONFIG_KIND]: CRD_RESOURCE,
  [XRD_CONFIG_KIND]: xrdResource(),
};
export const DEPLOYMENTS = (namespace?: string): ResourceRef => ({
  group: "apps",
  version: "v1",
  plural: "deployments",
  namespace,
});
export const SERVICES = (namespace?: string): ResourceRef => ({
  group: "",
  version: "v1",
  plural: "services",
  namespace,
});
export const SECRETS = (namespace: string): ResourceRef => ({
  group: "",
  version: "v1",
  plural: "secrets",
  namespace,
});

/** The selector every cached child type carries ([P14]); Secrets are never cached. */
export const OWNED_SELECTOR = `${LABEL_MANAGED_BY}=${MANAGED_BY}`;

/** Name of the config informers' index on the target name. */
export const TARGET_INDEX = "target";

// ---------------------------------------------------------------------------------------------
// Caches

export interface ManagerCaches {
  /** Config informers of the enabled kinds. */
  readonly configs: ReadonlyMap<ConfigKind, Informer>;
  /** Target informers (CRDs for CRD configs, XRDs for XRD configs) of the enabled kinds. */
  readonly targets: ReadonlyMap<ConfigKind, Informer>;
  /**
   * [P11] All CRDs, when XRD configs are enabled (the CRDs Crossplane generates from XRDs,
   * runtime §4.6): the CRD target informer when CRD configs are enabled too, else its own.
   */
  readonly crds?: Informer;
  readonly servers: Informer;
  readonly deployments: Informer;
  readonly services: Informer;
  readonly informers: readonly Informer[];
  /** One line describing the scoping (logged at startup). */
  readonly description: string;
  start(): void;
  /** Resolves when every cache synced; rejects with the cause of a terminal failure. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
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
}): ManagerCaches {
  const { client, logger } = opts;
  const configs = new Map<ConfigKind, Informer>();
  const targets = new Map<ConfigKind, Informer>();
  for (const kind of opts.kinds) {
    const cfg = new Informer({ client, resource: CONFIG_RESOURCES[kind], logger });
    cfg.addIndex(TARGET_INDEX, rawTargetOf);
    configs.set(kind, cfg);
    targets.set(kind, new Informer({ client, resource: TARGET_RESOURCES[kind], logger }));
  }
  const servers = new Informer({ client, resource: SERVER_RESOURCE, logger });
  const deployments = new Informer({
    client,
    resource: DEPLOYMENTS(),
    labelSelector: OWNED_SELECTOR,
    logger,
  });
  const services = new Informer({
    client,
    resource: SERVICES(),
    labelSelector: OWNED_SELECTOR,
    logger,
  });
  // [P11] Generated CRDs are read from a CRD cache: shared with the CRD target informer.
  let crds: Informer | undefined;
  let ownCRDs: Informer[] = [];
  if (configs.has(XRD_CONFIG_KIND)) {
    crds = targets.get(CRD_CONFIG_KIND);
    if (crds === undefined) {
      crds = new Informer({ client, resource: CRD_RESOURCE, logger });
      ownCRDs = [crds];
    }
  }
  const informers = [
    ...configs.values(),
    ...targets.values(),
    ...ownCRDs,
    servers,
    deployments,
    services,
  ];
  const kinds = [...configs.keys()].join(", ") || "none";
  return {
    configs,
    targets,
    crds,
    servers,
    deployments,
    services,
    informers,
    description: `cluster-wide: ConversionWebhookServers, configs (${kinds}) and their targets` +
      (crds === undefined ? "" : " (plus all CRDs for the XRDs' generated CRDs)") + "; " +
      `Deployments and Services only with ${OWNED_SELECTOR}; Secrets never cached`,
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
// Decoding cached objects

/** The strictly decoded config (TerminalError when the stored object does not decode). */
export function decodeConfig(obj: KubeObject): ConversionConfig {
  const r = parseConfig(obj);
  if (!r.ok) {
    throw new TerminalError(
      `stored ${obj.kind} ${JSON.stringify(obj.metadata?.name)} does not decode: ${
        r.errors.join("; ")
      }`,
    );
  }
  return r.config;
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

/**
 * The paced CWS → configs fan-out (runtime §6.5, §5 "Pacing"): on an event of server `server`,
 * the configs it wins now (resolver over the current servers) plus the configs it held (their
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
 * [P11] runtime §2.2 `xrdconversionconfig.mapGeneratedCRDToConfigs`: a CRD → the XRD configs of
 * the XRD that generated it — by each owner reference of kind `CompositeResourceDefinition` in
 * `apiextensions.crossplane.io`, plus by the CRD's own name (the composite CRD is named like its
 * XRD); deduplicated and sorted. Reads the config cache's target index (cannot fail to list).
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

function rawConfigSummary(kind: ConfigKind, obj: KubeObject): ConfigSummary {
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

// ---------------------------------------------------------------------------------------------
// Metrics (operations.md `dco_manager_*`)

export class ManagerMetrics {
  readonly analyzeFailures: Counter<"config_kind" | "target" | "reason">;
  readonly phaseTransitions: Counter<
    "config_kind" | "target" | "from_phase" | "to_phase" | "reason"
  >;
  readonly applyDuration: Histogram<"config_kind" | "target" | "result">;
  readonly conversionReverts: Counter<"config_kind" | "target">;
  readonly conversionPropagated: Gauge<"target">;
  readonly propagationLag: Histogram<"target">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.analyzeFailures = new Counter({
      name: "dco_manager_analyze_failures_total",
      help: "Validation failures during config reconcile.",
      labelNames: ["config_kind", "target", "reason"],
      registers,
    });
    this.phaseTransitions = new Counter({
      name: "dco_manager_phase_transitions_total",
      help: "Recorded config phase transitions.",
      labelNames: ["config_kind", "target", "from_phase", "to_phase", "reason"],
      registers,
    });
    this.applyDuration = new Histogram({
      name: "dco_manager_apply_duration_seconds",
      help: "Server-side apply latency of target conversion patches.",
      labelNames: ["config_kind", "target", "result"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.conversionReverts = new Counter({
      name: "dco_manager_conversion_reverts_total",
      help: "A previously applied config found the live target without its conversion stanza " +
        "(an out-of-band overwrite).",
      labelNames: ["config_kind", "target"],
      registers,
    });
    this.conversionPropagated = new Gauge({
      name: "dco_manager_conversion_propagated",
      help: "1 when every CRD generated from the XRD carries the applied conversion, else 0.",
      labelNames: ["target"],
      registers,
    });
    this.propagationLag = new Histogram({
      name: "dco_manager_propagation_lag_seconds",
      help: "Apply to observed propagation into the generated CRDs, on each transition into " +
        "Propagated.",
      labelNames: ["target"],
      buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
      registers,
    });
  }

  /** The reconcile's hooks, with `config_kind`/`target` of the apply histogram bound. */
  hooksFor(kind: ConfigKindLabel, target: string): ConfigReconcileMetrics {
    return {
      analyzeFailure: (l) =>
        this.analyzeFailures.inc({ config_kind: l.configKind, target: l.target, reason: l.reason }),
      phaseTransition: (l) =>
        this.phaseTransitions.inc({
          config_kind: l.configKind,
          target: l.target,
          from_phase: l.fromPhase,
          to_phase: l.toPhase,
          reason: l.reason,
        }),
      applyDuration: (result, seconds) =>
        this.applyDuration.observe({ config_kind: kind, target, result }, seconds),
      conversionRevert: (l) =>
        this.conversionReverts.inc({ config_kind: l.configKind, target: l.target }),
      conversionPropagated: (t, ok) => this.conversionPropagated.set({ target: t }, ok ? 1 : 0),
      propagationLag: (t, seconds) => this.propagationLag.observe({ target: t }, seconds),
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Adapters

export interface DepsOptions {
  client: KubeClient;
  caches: ManagerCaches;
  operatorNamespace: string;
  metrics?: ManagerMetrics;
  now?: () => number;
}

function configKindOfTarget(kind: TargetKind): ConfigKind {
  return kind === "XRD" ? XRD_CONFIG_KIND : CRD_CONFIG_KIND;
}

/** A target from its cache, else (feature off for that kind) a live GET. */
async function getTarget(
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

function decodeBase64(s: string): string {
  const bin = atob(s);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

/** `ca.crt` if non-empty, else `tls.crt`, of `<server>-webhook-server-tls` (read through). */
export async function readCABundle(
  client: KubeClient,
  serverName: string,
  namespace: string,
): Promise<string | undefined> {
  const secret = await getOrUndefined(client.get(SECRETS(namespace), tlsSecretName(serverName)));
  if (secret === undefined) return undefined;
  const data = (secret as { data?: Record<string, string> }).data ?? {};
  for (const key of ["ca.crt", "tls.crt"]) {
    const v = data[key];
    if (typeof v === "string" && v !== "") return decodeBase64(v);
  }
  return undefined;
}

/** A CRD Crossplane generated, from the CRD cache (else a live GET). */
async function getGeneratedCRD(o: DepsOptions, name: string): Promise<JsonObject | undefined> {
  const cache = o.caches.crds;
  if (cache !== undefined) {
    const obj = cache.get(name);
    return obj === undefined ? undefined : structuredClone(obj) as unknown as JsonObject;
  }
  const live = await getOrUndefined(o.client.get(CRD_RESOURCE, name));
  return live as unknown as JsonObject | undefined;
}

const configLog = createLogger("manager.config");

/** {@link ConfigReconcileDeps} backed by the caches and the client. */
export function configReconcileDeps(
  o: DepsOptions,
  metrics?: ConfigReconcileMetrics,
): ConfigReconcileDeps {
  const { client, caches } = o;
  return {
    // Read through, not from the cache: phase transitions, finalizers and status patches must
    // build on the previous reconcile's own writes, which the cache may not have seen yet (a
    // stale phase would repeat the apply and count the transition twice).
    async getConfig(kind, name) {
      const obj = await getOrUndefined(client.get(CONFIG_RESOURCES[kind], name));
      return obj === undefined ? undefined : decodeConfig(obj);
    },
    getTarget: (kind, name) => getTarget(o, configKindOfTarget(kind), name),
    async getTargetLive(kind, name) {
      const live = await getOrUndefined(
        client.get(TARGET_RESOURCES[configKindOfTarget(kind)], name),
      );
      return live as unknown as JsonObject | undefined;
    },
    getGeneratedCRD: (name) => getGeneratedCRD(o, name),
    // Read through: the gate decides on what the replicas report now, not on a cache's past.
    async listServedLeases(serverName, serverNamespace) {
      const list = await client.list(
        {
          group: "coordination.k8s.io",
          version: "v1",
          plural: "leases",
          namespace: serverNamespace,
        },
        { labelSelector: servedLeaseSelector(serverName) },
      );
      return list.items as unknown as ServedLeaseLike[];
    },
    listServers() {
      const out: ConversionWebhookServer[] = [];
      for (const obj of caches.servers.list()) {
        const s = decodeServer(obj);
        if (s !== undefined) out.push(s);
      }
      return Promise.resolve(out);
    },
    getServer(name) {
      const obj = caches.servers.get(name);
      return Promise.resolve(obj === undefined ? undefined : decodeServer(obj));
    },
    readCABundle: (server, namespace) => readCABundle(client, server, namespace),
    async applyTarget(obj) {
      const apiVersion = typeof obj.apiVersion === "string" ? obj.apiVersion : "";
      const ref = obj.kind === "CustomResourceDefinition"
        ? CRD_RESOURCE
        : xrdResource(apiVersion.split("/")[1] || "v2");
      await applyObject(client, ref, obj as unknown as KubeObject);
    },
    async patchStatus(kind, name, before, after) {
      await patchStatus(client, CONFIG_RESOURCES[kind], name, { status: before }, {
        status: after,
      });
    },
    async updateFinalizers(config, finalizers) {
      const updated = await client.patch(
        CONFIG_RESOURCES[config.kind],
        config.metadata?.name ?? "",
        {
          metadata: { finalizers, resourceVersion: config.metadata?.resourceVersion },
        },
        { type: "merge" },
      );
      return decodeConfig(updated);
    },
    now: o.now ?? Date.now,
    operatorNamespace: o.operatorNamespace,
    metrics,
    log: (msg, fields) => configLog.warn(msg, fields),
  };
}

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
  };
}

/**
 * [P11] The XRD conversion guard's lookup (api.md §4.3 step 2): the stored XRDConversionConfigs
 * whose `spec.targetXRD.name` is the XRD's name, through the config cache's `target` index; none
 * when XRD configs are not cached.
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

/** `targetNameOf` for a stored config object, "" when it does not decode. */
export function targetLabelOf(obj: KubeObject | undefined): string {
  if (obj === undefined) return "";
  const r = parseConfig(obj);
  return r.ok ? targetNameOf(r.config) : rawTargetOf(obj) ?? "";
}

// ---------------------------------------------------------------------------------------------
// ConversionWebhookServer status reads (runtime.md §6.1 step 4, §7)

/** Leases of the served-target reports (runtime.md §7). */
export const LEASES = (namespace?: string): ResourceRef => ({
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  namespace,
});

/**
 * The served-target Leases of instance `serverName` in `serverNamespace`, read through (the same
 * read as {@link ConfigReconcileDeps.listServedLeases}): label
 * `conversion.terasky.com/webhook-server=<cws>`.
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
