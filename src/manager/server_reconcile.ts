/**
 * ConversionWebhookServer reconcile (runtime.md §6.1, §6.3; api.md §3): ensure the finalizer,
 * apply the children, issue the built-in serving certificate when the manager runs in `Builtin`
 * certificate mode, then write the status from what the applies returned plus the TLS Secret read
 * through. Deleting runs the guard of §6.3 (api.md §3.4): the finalizer stays while any config
 * is ServedBy the server — the same rule as the admission delete guard
 * ({@link servedBy}), so the two cannot disagree — unless the live force annotation is set.
 *
 * Every cluster access goes through {@link ServerReconcileDeps}, so the algorithm is unit-tested
 * with fakes; {@link serverReconcileDeps} backs it with the manager's client and caches.
 *
 * Not yet here: DefaultConflict, `assignedConfigs`/`servedTargets`/`reportingReplicas`, and
 * deleting a removed HPA/PDB (runtime.md §6.1 steps 2–4).
 */
import type { ConversionWebhookServer } from "../api/mod.ts";
import type { ServerInfo } from "../assign/resolve.ts";
import {
  applyObject,
  type ConditionInput,
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  patchStatus,
  type ResourceRef,
  setCondition,
  type StatusCondition,
  TerminalError,
} from "../kube/mod.ts";
import {
  admissionContext,
  decodeServer,
  DEPLOYMENTS,
  type DepsOptions,
  SECRETS,
  SERVER_RESOURCE,
  SERVICES,
} from "./deps.ts";
import { type ConfigSummary, FORCE_DELETE_ANNOTATION, servedBy } from "./admission.ts";
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
  /** Configs of the enabled kinds and the servers, as the admission guard sees them. */
  listConfigs(): Promise<readonly ConfigSummary[]>;
  listServers(): Promise<readonly ServerInfo[]>;
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

  // 1.–3. namespace, children (Certificate → Service → Deployment → HPA → PDB)
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
  const after: Json = {
    ...before,
    observedGeneration: generation,
    replicas: readiness.replicas,
    readyReplicas: readiness.readyReplicas,
    conditions,
  };
  if (readiness.endpoint !== undefined) after.endpoint = readiness.endpoint;
  // 5. merge-patch status; requeue (no later than the certificate's renewal)
  await deps.patchStatus(name, before, after);
  if (issueError !== undefined) throw issueError; // retried with backoff
  let requeueAfter = REQUEUE_SERVER_MS;
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
  const ctx = admissionContext(o, { xrd: true, crd: true });
  const getSecret = async (namespace: string, name: string) => {
    try {
      return await client.get(SECRETS(namespace), name);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  };
  const deps: ServerReconcileDeps = {
    settings,
    // Read through: the finalizer and status writes must build on the previous reconcile's own
    // writes, which the cache may not have seen yet.
    async getServer(name) {
      try {
        return await client.get(SERVER_RESOURCE, name);
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    async updateFinalizers(server, finalizers) {
      return await client.patch(
        SERVER_RESOURCE,
        server.metadata.name ?? "",
        { metadata: { finalizers, resourceVersion: server.metadata.resourceVersion } },
        { type: "merge" },
      );
    },
    listConfigs: () => Promise.resolve(ctx.listConfigs()),
    listServers: () => Promise.resolve(ctx.listServers()),
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
