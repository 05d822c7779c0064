/**
 * ConversionWebhookServer reconcile (runtime.md §6.1, §6.3; api.md §3): ensure the finalizer,
 * apply the children, issue the built-in serving certificate when the manager runs in `Builtin`
 * certificate mode, then write the status from what the applies returned plus the TLS Secret read
 * through. Deleting runs the guard of §6.3 (api.md §3.4): the finalizer stays while any config
 * is ServedBy the server — the same rule as the admission delete guard
 * ({@link servedBy}), so the two cannot disagree — unless the live force annotation is set.
 *
 * Status (step 4) also carries `DefaultConflict` (step 2, api.md §3.3), `assignedConfigs` (the
 * shared resolver over the cached configs of both kinds) and, [P15], `servedTargets` +
 * `reportingReplicas` aggregated from the instance's live served-target Leases (runtime.md §7;
 * read through on every reconcile). There is no Lease watch: the CWS is requeued after at most
 * {@link REQUEUE_SERVER_HANDOVER_MS} while a config is mid-handover to or from it (the handover
 * gate reads the Leases itself; the status is for humans and dashboards), else after 5 minutes.
 *
 * Every cluster access goes through {@link ServerReconcileDeps}, so the algorithm is unit-tested
 * with fakes; {@link serverReconcileDeps} backs it with the manager's client and caches.
 *
 * Not yet here: deleting a removed HPA/PDB (runtime.md §6.1 step 3).
 */
import type { ConversionWebhookServer } from "../api/mod.ts";
import type { ServedLeaseLike } from "../api/served_lease.ts";
import { resolveServer, type ServerInfo } from "../assign/resolve.ts";
import {
  applyObject,
  type ConditionInput,
  getOrUndefined,
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  patchStatus,
  removeCondition,
  type ResourceRef,
  setCondition,
  type StatusCondition,
  TerminalError,
} from "../kube/mod.ts";
import {
  admissionContext,
  type ConfigSummaryWithPhase,
  decodeServer,
  DEPLOYMENTS,
  type DepsOptions,
  listConfigsWithPhase,
  listServedLeases,
  SECRETS,
  SERVER_RESOURCE,
  SERVICES,
} from "./deps.ts";
import { FORCE_DELETE_ANNOTATION, servedBy, serverInfoOf } from "./admission.ts";
import { aggregateServedTargets } from "./served_targets.ts";
import { BuiltinIssuer, type ServingCertRequest, type ServingCertResult } from "./builtin_certs.ts";
import {
  childName,
  MISSING_ISSUER_MESSAGE,
  type Observed,
  ownerReferenceFor,
  podLabels,
  serverChildren,
  type ServerChildSettings,
  serverReadiness,
  ServerSpecError,
  servingDnsNames,
  tlsSecretName,
} from "./server_children.ts";

// ---------------------------------------------------------------------------------------------
// Vocabulary

/** The CWS finalizer (api.md §3.4). */
export const SERVER_FINALIZER = "conversion.terasky.com/protect-in-use";
/** Timed requeues (runtime.md §2.3), milliseconds. */
export const REQUEUE_SERVER_MS = 5 * 60_000;
export const REQUEUE_SERVER_DELETE_BLOCKED_MS = 30_000;
/** [P15] Requeue while a config is mid-handover to or from the server (fresh `servedTargets`). */
export const REQUEUE_SERVER_HANDOVER_MS = 30_000;
/** Floor of a renewal-driven requeue. */
export const MIN_RENEWAL_REQUEUE_MS = 1_000;
/** Most dependents named in the DeletionBlocked message. */
const MAX_LISTED = 20;

export const CERTIFICATES = (namespace: string): ResourceRef => ({
  group: "cert-manager.io",
  version: "v1",
  plural: "certificates",
  namespace,
});
export const HPAS = (namespace: string): ResourceRef => ({
  group: "autoscaling",
  version: "v2",
  plural: "horizontalpodautoscalers",
  namespace,
});
export const PDBS = (namespace: string): ResourceRef => ({
  group: "policy",
  version: "v1",
  plural: "poddisruptionbudgets",
  namespace,
});

/** The built-in issuer as the reconcile sees it. */
export interface ServingCertIssuer {
  ensureServingCertificate(req: ServingCertRequest): Promise<ServingCertResult>;
}

/** Everything the CWS reconcile reads and writes. */
export interface ServerReconcileDeps {
  /** Operator-wide child settings, including the certificate mode. */
  settings: ServerChildSettings;
  /** The stored server (read through), undefined when not found. */
  getServer(name: string): Promise<KubeObject | undefined>;
  /** Writes `metadata.finalizers` (optimistic concurrency); returns the updated server. */
  updateFinalizers(server: KubeObject, finalizers: string[]): Promise<KubeObject>;
  /**
   * Configs of the enabled kinds and the servers, as the admission guard sees them; a config's
   * `phase` (optional) is copied to `status.assignedConfigs`.
   */
  listConfigs(): Promise<readonly ConfigSummaryWithPhase[]>;
  listServers(): Promise<readonly ServerInfo[]>;
  /** [P15] The instance's served-target Leases (label `conversion.terasky.com/webhook-server`). */
  listServedLeases(serverName: string, namespace: string): Promise<readonly ServedLeaseLike[]>;
  /** Server-side apply (dco's field manager, force); returns the object as stored. */
  apply(ref: ResourceRef, obj: KubeObject): Promise<KubeObject>;
  /** A Secret, undefined when not found (read through). */
  getSecret(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Merge patch of `/status` from `before` to `after`. */
  patchStatus(name: string, before: unknown, after: Record<string, unknown>): Promise<void>;
  /** Required in `Builtin` certificate mode. */
  issuer?: ServingCertIssuer;
  now(): number;
}

export interface ServerReconcileResult {
  requeueAfter?: number;
}

// ---------------------------------------------------------------------------------------------
// Helpers

type Json = Record<string, unknown>;

function statusOf(obj: KubeObject): Json | undefined {
  const s = (obj as { status?: unknown }).status;
  return typeof s === "object" && s !== null ? s as Json : undefined;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The DeletionBlocked message (runtime.md §6.3): the count, the default-instance suffix, the
 * sorted names, the annotation hint.
 */
export function deletionBlockedMessage(
  dependents: readonly string[],
  isDefault: boolean,
): string {
  const sorted = [...dependents].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const shown = sorted.slice(0, MAX_LISTED).join(", ") +
    (sorted.length > MAX_LISTED ? `, … and ${sorted.length - MAX_LISTED} more` : "");
  return `deletion blocked: ${sorted.length} config(s) still depend on this server${
    isDefault
      ? " (it is the default instance, so unpinned configs without webhookServerRef depend on it too)"
      : ""
  }: ${shown}; move or delete them, or set the annotation ${FORCE_DELETE_ANNOTATION}: "true" to force the deletion`;
}

// ---------------------------------------------------------------------------------------------
// Status pieces (runtime.md §6.1 steps 2 and 4; api.md §3.2, §3.3)

/** One `status.assignedConfigs` entry: `xrdName` holds the target name for both kinds. */
export interface AssignedConfig {
  name: string;
  xrdName: string;
  phase?: string;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `servers` with the entry of `self.name` replaced by (or extended with) `self`. */
export function withServer(servers: readonly ServerInfo[], self: ServerInfo): ServerInfo[] {
  return [...servers.filter((s) => s.name !== self.name), self];
}

/**
 * The `DefaultConflict` condition of server `name` (api.md §3.3): when it is marked default and
 * so is at least one other server — True/`MultipleDefaults`, the defaults listed sorted. Never
 * auto-fixed. `undefined` ⇒ the condition is removed (resolved, or this server is not default).
 */
export function defaultConflictCondition(
  servers: readonly ServerInfo[],
  name: string,
): ConditionInput | undefined {
  if (servers.find((s) => s.name === name)?.default !== true) return undefined;
  const defaults = servers.filter((s) => s.default === true).map((s) => s.name).sort(compare);
  if (defaults.length < 2) return undefined;
  return {
    type: "DefaultConflict",
    status: "True",
    reason: "MultipleDefaults",
    message: `multiple ConversionWebhookServers are marked default: ${defaults.join(", ")}; ` +
      "unpinned configs outside a shard pool cannot be resolved until all but one set " +
      "spec.default: false",
  };
}

/**
 * `status.assignedConfigs` (api.md §3.2): the configs of both kinds the shared resolver assigns
 * to `name` (explicit ref, shard pool or default), sorted by config name. Desired assignment, not
 * proof of loading; a config that does not resolve is assigned to nobody.
 */
export function assignedConfigsOf(
  configs: readonly ConfigSummaryWithPhase[],
  servers: readonly ServerInfo[],
  name: string,
): AssignedConfig[] {
  const out: AssignedConfig[] = [];
  for (const c of configs) {
    const r = resolveServer(c, servers);
    if (!r.ok || r.server !== name) continue;
    out.push({
      name: c.name,
      xrdName: c.target,
      ...(c.phase === undefined || c.phase === "" ? {} : { phase: c.phase }),
    });
  }
  return out.sort((a, b) => compare(a.name, b.name) || compare(a.xrdName, b.xrdName));
}

/**
 * [P15] Whether a previously applied config (phase `Applied`/`Stale`) is mid-handover to or from
 * server `name`: it resolves here while its last applied endpoint names another server, or its
 * last applied endpoint names this server while it resolves elsewhere (runtime.md §5).
 */
export function handoverInFlight(
  configs: readonly ConfigSummaryWithPhase[],
  servers: readonly ServerInfo[],
  name: string,
): boolean {
  const prefix = `https://${childName(name)}.`;
  return configs.some((c) => {
    const url = c.webhookURL ?? "";
    if (url === "" || (c.phase !== "Applied" && c.phase !== "Stale")) return false;
    const r = resolveServer(c, servers);
    return r.ok && (r.server === name) !== url.startsWith(prefix);
  });
}

// ---------------------------------------------------------------------------------------------
// Watch predicates (runtime.md §2.2), wired in src/main/manager.ts

type WatchEvent = "add" | "update" | "delete";

function assignmentView(obj: KubeObject | undefined): unknown {
  const o = obj as {
    spec?: {
      webhookServerRef?: unknown;
      targetXRD?: { name?: unknown };
      targetCRD?: { name?: unknown };
    };
    status?: { phase?: unknown; webhookURL?: unknown };
  } | undefined;
  return [
    o?.spec?.webhookServerRef ?? null,
    o?.spec?.targetXRD?.name ?? null,
    o?.spec?.targetCRD?.name ?? null,
    o?.status?.phase ?? null,
    o?.status?.webhookURL ?? null,
  ];
}

/**
 * Config → every server: creates and deletes pass; an update passes only when what the servers'
 * status reads changed (`webhookServerRef`, the target name, `status.phase`, `status.webhookURL`),
 * so the config controller's own status writes do not wake every server.
 */
export function configAffectsServers(
  event: WatchEvent,
  obj: KubeObject,
  old?: KubeObject,
): boolean {
  if (event !== "update") return true;
  return JSON.stringify(assignmentView(obj)) !== JSON.stringify(assignmentView(old));
}

function isDefaultServer(obj: KubeObject | undefined): boolean {
  return (obj as { spec?: { default?: unknown } } | undefined)?.spec?.default === true;
}

/**
 * Server → every default server (DefaultConflict, api.md §3.3): a default server created or
 * deleted, or `spec.default` flipped.
 */
export function defaultFlagChanged(event: WatchEvent, obj: KubeObject, old?: KubeObject): boolean {
  return event === "update" ? isDefaultServer(obj) !== isDefaultServer(old) : isDefaultServer(obj);
}

/** The names of the servers marked default in `servers` (the DefaultConflict fan-out). */
export function defaultServerNames(servers: readonly KubeObject[]): string[] {
  return servers.filter(isDefaultServer).map((s) => s.metadata?.name ?? "").sort(compare);
}

// ---------------------------------------------------------------------------------------------
// Delete (runtime.md §6.3)

async function reconcileDelete(
  raw: KubeObject,
  deps: ServerReconcileDeps,
): Promise<ServerReconcileResult> {
  const finalizers = raw.metadata.finalizers ?? [];
  if (!finalizers.includes(SERVER_FINALIZER)) return {};
  const without = finalizers.filter((f) => f !== SERVER_FINALIZER);
  if (raw.metadata.annotations?.[FORCE_DELETE_ANNOTATION] === "true") {
    await deps.updateFinalizers(raw, without);
    return {};
  }
  const name = raw.metadata.name ?? "";
  const [configs, servers] = await Promise.all([deps.listConfigs(), deps.listServers()]);
  const dependents = configs.filter((c) => servedBy(c, servers, name))
    .map((c) => `${c.name} (${c.kind})`);
  if (dependents.length === 0) {
    await deps.updateFinalizers(raw, without); // children go through their owner references
    return {};
  }
  const spec = (raw as { spec?: { default?: unknown } }).spec;
  const isDefault = spec?.default === true ||
    servers.some((s) => s.name === name && s.default === true);
  const before = statusOf(raw);
  const conditions = setCondition(
    (before?.conditions ?? []) as StatusCondition[],
    {
      type: "DeletionBlocked",
      status: "True",
      reason: "ConfigsStillAssigned",
      message: deletionBlockedMessage(dependents, isDefault),
      observedGeneration: raw.metadata.generation ?? 0,
    },
    deps.now(),
  );
  await deps.patchStatus(name, before, { ...before, conditions });
  return { requeueAfter: REQUEUE_SERVER_DELETE_BLOCKED_MS };
}

// ---------------------------------------------------------------------------------------------
// Reconcile (runtime.md §6.1)

function certificateCondition(status: "True" | "False", msg: string): ConditionInput {
  return {
    type: "CertificateReady",
    status,
    reason: status === "True" ? "CertificateReady" : "CertificateNotReady",
    message: msg,
  };
}

/** Reconciles the ConversionWebhookServer `name`. */
export async function reconcileServer(
  name: string,
  deps: ServerReconcileDeps,
): Promise<ServerReconcileResult> {
  // 0. get; deleting → §6.3; ensure finalizer
  let raw = await deps.getServer(name);
  if (raw === undefined) return {};
  if (raw.metadata.deletionTimestamp) return await reconcileDelete(raw, deps);
  const finalizers = raw.metadata.finalizers ?? [];
  if (!finalizers.includes(SERVER_FINALIZER)) {
    raw = await deps.updateFinalizers(raw, [...finalizers, SERVER_FINALIZER]);
  }
  const cws: ConversionWebhookServer | undefined = decodeServer(raw);
  if (cws === undefined) {
    throw new TerminalError(`ConversionWebhookServer ${JSON.stringify(name)} does not decode`);
  }
  const { settings } = deps;
  const certMode = settings.certMode ?? "CertManager";

  // 2. DefaultConflict (api.md §3.3), over the cached servers with this one as read through.
  const [configs, cachedServers] = await Promise.all([deps.listConfigs(), deps.listServers()]);
  const servers = withServer(cachedServers, serverInfoOf(cws));
  const conflict = defaultConflictCondition(servers, name);

  // 1., 3. namespace, children (Certificate → Service → Deployment → HPA → PDB)
  let children;
  try {
    children = serverChildren(cws, settings);
  } catch (e) {
    if (e instanceof ServerSpecError) throw new TerminalError(e.message, { cause: e });
    throw e;
  }
  const ns = children.namespace;
  let service: Observed;
  let deployment: Observed;
  try {
    if (children.certificate) await deps.apply(CERTIFICATES(ns), children.certificate);
    service = await deps.apply(SERVICES(ns), children.service);
    deployment = await deps.apply(DEPLOYMENTS(ns), children.deployment);
    if (children.hpa) await deps.apply(HPAS(ns), children.hpa);
    if (children.pdb) await deps.apply(PDBS(ns), children.pdb);
  } catch (e) {
    throw new Error(`applying the children of ConversionWebhookServer ${name}`, { cause: e });
  }

  // The built-in certificate, before the Secret is read for readiness.
  let certOverride: ConditionInput | undefined;
  let issueError: unknown;
  let renewAt: number | undefined;
  if (certMode === "Builtin") {
    try {
      if (deps.issuer === undefined) throw new Error("no built-in issuer is configured");
      const r = await deps.issuer.ensureServingCertificate({
        namespace: ns,
        secretName: tlsSecretName(name),
        dnsNames: servingDnsNames(cws, settings),
        commonName: childName(name),
        owner: ownerReferenceFor(cws),
        labels: podLabels(name),
      });
      renewAt = r.renewAt;
    } catch (e) {
      issueError = e;
      certOverride = certificateCondition(
        "False",
        `issuing the built-in serving certificate: ${message(e)}`,
      );
    }
  } else if (certMode === "CertManager" && cws.spec.certificate?.issuerRef === undefined) {
    certOverride = certificateCondition("False", MISSING_ISSUER_MESSAGE);
  }

  // 4. status
  let secret: Observed;
  try {
    secret = await deps.getSecret(ns, tlsSecretName(name));
  } catch (e) {
    secret = isNotFound(e) ? undefined : e instanceof Error ? e : new Error(message(e));
  }
  const readiness = serverReadiness(deployment, service, secret);
  const generation = cws.metadata?.generation ?? 0;
  const before = statusOf(raw);
  let conditions = (before?.conditions ?? []) as StatusCondition[];
  const now = deps.now();
  for (const c of readiness.conditions) {
    const input = c.type === "CertificateReady" && certOverride ? certOverride : c;
    conditions = setCondition(conditions, { ...input, observedGeneration: generation }, now);
  }
  conditions = conflict === undefined
    ? removeCondition(conditions, "DefaultConflict")
    : setCondition(conditions, { ...conflict, observedGeneration: generation }, now);
  const after: Json = {
    ...before,
    observedGeneration: generation,
    replicas: readiness.replicas,
    readyReplicas: readiness.readyReplicas,
    conditions,
    assignedConfigs: assignedConfigsOf(configs, servers, name),
  };
  if (readiness.endpoint !== undefined) after.endpoint = readiness.endpoint;
  // [P15] The live Leases (runtime.md §7): a read failure keeps the previous values and is
  // returned after the rest of the status is written.
  let leaseError: unknown;
  try {
    const aggregate = aggregateServedTargets(await deps.listServedLeases(name, ns), now);
    after.servedTargets = aggregate.servedTargets; // empty when unreadable (unknown)
    after.reportingReplicas = aggregate.reportingReplicas; // unreadable reports included
  } catch (e) {
    leaseError = new Error(
      `listing the served-target Leases of ConversionWebhookServer ${name}: ${message(e)}`,
      { cause: e },
    );
  }
  // 5. merge-patch status; requeue (no later than the certificate's renewal, sooner mid-handover)
  await deps.patchStatus(name, before, after);
  if (issueError !== undefined) throw issueError; // retried with backoff
  if (leaseError !== undefined) throw leaseError;
  let requeueAfter = REQUEUE_SERVER_MS;
  if (handoverInFlight(configs, servers, name)) {
    requeueAfter = Math.min(requeueAfter, REQUEUE_SERVER_HANDOVER_MS);
  }
  if (renewAt !== undefined) {
    requeueAfter = Math.min(requeueAfter, Math.max(MIN_RENEWAL_REQUEUE_MS, renewAt - now));
  }
  return { requeueAfter };
}

// ---------------------------------------------------------------------------------------------
// Adapter: the manager's client and caches

/** {@link ServerReconcileDeps} backed by the client (reads through) and the caches (lists). */
export function serverReconcileDeps(
  o: DepsOptions,
  settings: ServerChildSettings,
): ServerReconcileDeps {
  const { client } = o;
  const ctx = admissionContext(o, { xrd: true, crd: true }); // servers only
  const getSecret = async (namespace: string, name: string) => {
    return await getOrUndefined(client.get(SECRETS(namespace), name));
  };
  const deps: ServerReconcileDeps = {
    settings,
    // Read through: the finalizer and status writes must build on the previous reconcile's own
    // writes, which the cache may not have seen yet.
    async getServer(name) {
      return await getOrUndefined(client.get(SERVER_RESOURCE, name));
    },
    async updateFinalizers(server, finalizers) {
      return await client.patch(
        SERVER_RESOURCE,
        server.metadata.name ?? "",
        { metadata: { finalizers, resourceVersion: server.metadata.resourceVersion } },
        { type: "merge" },
      );
    },
    listConfigs: () => Promise.resolve(listConfigsWithPhase(o)),
    listServers: () => Promise.resolve(ctx.listServers()),
    // Read through, like the handover gate's read.
    listServedLeases: (server, namespace) => listServedLeases(client, server, namespace),
    apply: (ref, obj) => applyObject(client, ref, obj),
    getSecret,
    async patchStatus(name, before, after) {
      await patchStatus(client, SERVER_RESOURCE, name, { status: before }, { status: after });
    },
    now: o.now ?? Date.now,
  };
  if (settings.certMode === "Builtin") {
    deps.issuer = new BuiltinIssuer({
      namespace: o.operatorNamespace,
      now: o.now ?? Date.now,
      isAlreadyExists,
      store: {
        get: getSecret,
        create: (namespace, secret) => client.create(SECRETS(namespace), secret),
        update: (namespace, secret) => client.update(SECRETS(namespace), secret),
      },
    });
  }
  return deps;
}
