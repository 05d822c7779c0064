/**
 * The ConversionWebhookServer reconcile: ensure the finalizer, apply the children, delete the
 * optional children the spec no longer asks for (./prune.ts), issue the
 * built-in serving certificate in `Builtin` certificate mode, then write the status from what the
 * applies returned plus the TLS Secret read through
 * (docs/design/server-children.md#the-cws-reconcile-and-delete-guard). A server being deleted goes
 * to the delete guard (./delete_guard.ts).
 *
 * Every cluster access goes through {@link ServerReconcileDeps}, so the algorithm is unit-tested
 * with fakes; `serverReconcileDeps` (./reconcile_deps.ts) backs it with the manager's client and
 * caches.
 */
import type { ConversionWebhookServer } from "../../api/mod.ts";
import type { ServedLeaseLike } from "../../api/served_lease.ts";
import type { ServerInfo } from "../../assign/resolve.ts";
import {
  type ConditionInput,
  isNotFound,
  type KubeObject,
  removeCondition,
  type ResourceRef,
  setCondition,
  type StatusCondition,
  TerminalError,
} from "../../kube/mod.ts";
import type { ObjectEvent } from "../../kube/events.ts";
import { withReadiness } from "../../kube/kstatus.ts";
import { serverInfoOf } from "../admission/context.ts";
import type { ServingCertRequest, ServingCertResult } from "../builtin_certs.ts";
import { CERTIFICATES } from "../../api/resources.ts";
import { DEPLOYMENTS, HPAS, PDBS, SERVICES } from "../../kube/resources.ts";
import { type ConfigSummaryWithPhase, decodeServer } from "../caches.ts";
import { aggregateServedTargets } from "../served_targets.ts";
import { MISSING_ISSUER_MESSAGE, servingDnsNames } from "./certificate.ts";
import { serverChildren } from "./children.ts";
import { staleChildren } from "./prune.ts";
import { reconcileDelete, SERVER_FINALIZER } from "./delete_guard.ts";
import { childName, podLabels, tlsSecretName } from "./names.ts";
import {
  CERTIFICATE_READY,
  type Observed,
  readyEvent,
  serverReadiness,
  serverReadySummary,
} from "./readiness.ts";
import { ownerReferenceFor, type ServerChildSettings, ServerSpecError } from "./settings.ts";
import {
  assignedConfigsOf,
  defaultConflictCondition,
  handoverInFlight,
  statusOf,
  withServer,
} from "./status.ts";
import type { ServerChildren } from "./types.ts";

/** The requeue of a settled server, milliseconds: the status is refreshed at least this often. */
export const REQUEUE_SERVER_MS = 5 * 60_000;
/** Requeue while a config is mid-handover to or from the server (fresh `servedTargets`). */
export const REQUEUE_SERVER_HANDOVER_MS = 30_000;
/** Floor of a renewal-driven requeue. */
export const MIN_RENEWAL_REQUEUE_MS = 1_000;

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
  /** The instance's served-target Leases (label `conversion.terasky.com/webhook-server`). */
  listServedLeases(serverName: string, namespace: string): Promise<readonly ServedLeaseLike[]>;
  /** Server-side apply (dco's field manager, force); returns the object as stored. */
  apply(ref: ResourceRef, obj: KubeObject): Promise<KubeObject>;
  /** The stored owned child `name` of kind `ref` (in `ref.namespace`), undefined when absent. */
  getChild(ref: ResourceRef, name: string): Promise<KubeObject | undefined>;
  /** Deletes child `name` of kind `ref` if it still has `uid`; already gone is success. */
  deleteChild(ref: ResourceRef, name: string, uid: string): Promise<void>;
  /** A Secret, undefined when not found (read through). */
  getSecret(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Merge patch of `/status` from `before` to `after`. */
  patchStatus(name: string, before: unknown, after: Record<string, unknown>): Promise<void>;
  /** Required in `Builtin` certificate mode. */
  issuer?: ServingCertIssuer;
  now(): number;
  /** Records an Event on `server` (docs/design/server-children.md#events); silent when absent. */
  event?: (server: KubeObject, event: ObjectEvent) => void;
}

export interface ServerReconcileResult {
  requeueAfter?: number;
}

type Json = Record<string, unknown>;

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The children of `cws`; an unrenderable spec is terminal (retrying cannot fix it). */
function renderChildren(cws: ConversionWebhookServer, settings: ServerChildSettings) {
  try {
    return serverChildren(cws, settings);
  } catch (e) {
    if (e instanceof ServerSpecError) throw new TerminalError(e.message, { cause: e });
    throw e;
  }
}

/** Applies the children in order (Certificate → Service → Deployment → HPA → PDB). */
async function applyChildren(
  name: string,
  children: ServerChildren,
  deps: ServerReconcileDeps,
): Promise<{ service: Observed; deployment: Observed }> {
  const ns = children.namespace;
  try {
    if (children.certificate) await deps.apply(CERTIFICATES(ns), children.certificate);
    const service = await deps.apply(SERVICES(ns), children.service);
    const deployment = await deps.apply(DEPLOYMENTS(ns), children.deployment);
    if (children.hpa) await deps.apply(HPAS(ns), children.hpa);
    if (children.pdb) await deps.apply(PDBS(ns), children.pdb);
    return { service, deployment };
  } catch (e) {
    throw new Error(`applying the children of ConversionWebhookServer ${name}`, { cause: e });
  }
}

/** Deletes the optional children `children` no longer renders and the server controls. */
async function pruneChildren(
  raw: KubeObject,
  children: ServerChildren,
  deps: ServerReconcileDeps,
): Promise<void> {
  const name = raw.metadata.name ?? "";
  const stale = await staleChildren(
    name,
    raw.metadata.uid ?? "",
    children,
    (ref, child) => deps.getChild(ref, child),
  );
  for (const child of stale) {
    try {
      await deps.deleteChild(child.ref, child.name, child.uid);
    } catch (e) {
      throw new Error(
        `deleting the ${child.kind} ${children.namespace}/${child.name} that ` +
          `ConversionWebhookServer ${name} no longer asks for`,
        { cause: e },
      );
    }
    deps.event?.(raw, {
      type: "Normal",
      reason: "ChildDeleted",
      action: "Delete",
      note: `deleted ${child.kind} ${children.namespace}/${child.name}: its spec block was removed`,
    });
  }
}

/** What the certificate step decided: a `CertificateReady` override, an error, a renewal time. */
interface CertificateStep {
  override?: ConditionInput;
  error?: unknown;
  renewAt?: number;
}

/**
 * The certificate step, before the Secret is read for readiness: in `Builtin` mode issue (or
 * renew) the serving certificate; in `CertManager` mode without an issuer, say so.
 */
async function certificateStep(
  name: string,
  cws: ConversionWebhookServer,
  namespace: string,
  deps: ServerReconcileDeps,
): Promise<CertificateStep> {
  const { settings } = deps;
  const certMode = settings.certMode ?? "CertManager";
  if (certMode === "Builtin") {
    try {
      if (deps.issuer === undefined) throw new Error("no built-in issuer is configured");
      const r = await deps.issuer.ensureServingCertificate({
        namespace,
        secretName: tlsSecretName(name),
        dnsNames: servingDnsNames(cws, settings),
        commonName: childName(name),
        owner: ownerReferenceFor(cws),
        labels: podLabels(name),
      });
      return { renewAt: r.renewAt };
    } catch (e) {
      return {
        error: e,
        override: CERTIFICATE_READY.no(`issuing the built-in serving certificate: ${message(e)}`),
      };
    }
  }
  if (certMode === "CertManager" && cws.spec.certificate?.issuerRef === undefined) {
    return { override: CERTIFICATE_READY.no(MISSING_ISSUER_MESSAGE) };
  }
  return {};
}

/** The TLS Secret as observed: not found ⇒ undefined, any other failure ⇒ the error. */
async function observeSecret(
  deps: ServerReconcileDeps,
  namespace: string,
  name: string,
): Promise<Observed> {
  try {
    return await deps.getSecret(namespace, name);
  } catch (e) {
    return isNotFound(e) ? undefined : e instanceof Error ? e : new Error(message(e));
  }
}

/** Reconciles the ConversionWebhookServer `name`. */
export async function reconcileServer(
  name: string,
  deps: ServerReconcileDeps,
): Promise<ServerReconcileResult> {
  // Get; a server being deleted goes to the delete guard; ensure the finalizer.
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

  // DefaultConflict, over the cached servers with this one as read through.
  const [configs, cachedServers] = await Promise.all([deps.listConfigs(), deps.listServers()]);
  const servers = withServer(cachedServers, serverInfoOf(cws));
  const conflict = defaultConflictCondition(servers, name);

  const children = renderChildren(cws, deps.settings);
  const ns = children.namespace;
  const { service, deployment } = await applyChildren(name, children, deps);
  await pruneChildren(raw, children, deps);
  const cert = await certificateStep(name, cws, ns, deps);

  // Status.
  const secret = await observeSecret(deps, ns, tlsSecretName(name));
  const readiness = serverReadiness(deployment, service, secret);
  const generation = cws.metadata?.generation ?? 0;
  const before = statusOf(raw);
  let conditions = (before?.conditions ?? []) as StatusCondition[];
  const now = deps.now();
  const observed = readiness.conditions.map((c) =>
    c.type === "CertificateReady" && cert.override ? cert.override : c
  );
  for (const input of observed) {
    conditions = setCondition(conditions, { ...input, observedGeneration: generation }, now);
  }
  const summary = serverReadySummary(readiness, observed);
  conditions = withReadiness(conditions, summary, generation, now);
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
  // The live Leases: a read failure keeps the previous values and is returned after the rest of
  // the status is written.
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
  // Merge-patch the status; requeue no later than the certificate's renewal, sooner mid-handover.
  await deps.patchStatus(name, before, after);
  const ready = readyEvent(before?.conditions, summary);
  if (ready !== undefined) deps.event?.(raw, ready);
  if (cert.error !== undefined) throw cert.error; // retried with backoff
  if (leaseError !== undefined) throw leaseError;
  let requeueAfter = REQUEUE_SERVER_MS;
  if (handoverInFlight(configs, servers, name)) {
    requeueAfter = Math.min(requeueAfter, REQUEUE_SERVER_HANDOVER_MS);
  }
  if (cert.renewAt !== undefined) {
    requeueAfter = Math.min(requeueAfter, Math.max(MIN_RENEWAL_REQUEUE_MS, cert.renewAt - now));
  }
  return { requeueAfter };
}
