/**
 * A server's readiness, from its observed children: the replica counts, the endpoint and the
 * `Available`, `ServiceReady` and `CertificateReady` conditions
 * (docs/design/server-children.md#readiness).
 */
import type { ObjectEvent } from "../../kube/events.ts";
import type { Readiness } from "../../kube/kstatus.ts";
import type { ConditionInput, KubeObject } from "../../kube/mod.ts";
import { isRecord } from "../../lib/json.ts";
import { SERVICE_DEFAULTS } from "./settings.ts";

/** What {@link serverReadiness} computes; the reconciler stamps `observedGeneration`. */
export interface ServerReadiness {
  replicas: number;
  readyReplicas: number;
  /** `https://<svc>.<ns>.svc:<conversion port>` once the Service exists. */
  endpoint?: string;
  /** `Available`, `ServiceReady`, `CertificateReady`, in that order. */
  conditions: ConditionInput[];
}

/** A child as observed: the object, undefined when not found, or the lookup error. */
export type Observed = KubeObject | undefined | Error;

type Json = Record<string, unknown>;

function asRecord(v: unknown): Json | undefined {
  return isRecord(v) ? v : undefined;
}

function intField(obj: Json | undefined, key: string): number {
  const v = obj?.[key];
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function conditionStatus(obj: KubeObject, type: string): Json | undefined {
  const conditions = asRecord(obj.status)?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  return conditions.map(asRecord).find((c) => c?.type === type);
}

function objName(obj: KubeObject): string {
  return `${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`;
}

/** The two answers of one condition type: `yes(message)` and `no(message)`. */
function twoWay(type: string, yesReason: string, noReason: string) {
  return {
    yes: (message: string): ConditionInput => ({
      type,
      status: "True",
      reason: yesReason,
      message,
    }),
    no: (message: string): ConditionInput => ({ type, status: "False", reason: noReason, message }),
  };
}

const AVAILABLE = twoWay("Available", "DeploymentAvailable", "DeploymentNotAvailable");
const SERVICE_READY = twoWay("ServiceReady", "ServiceReady", "ServiceMissing");
/** `CertificateReady`, also set by the reconcile's certificate step. */
export const CERTIFICATE_READY = twoWay(
  "CertificateReady",
  "CertificateReady",
  "CertificateNotReady",
);

/** `: <message>` of an observed condition, or nothing when it has none. */
function because(c: Json | undefined): string {
  return typeof c?.message === "string" && c.message !== "" ? `: ${c.message}` : "";
}

function availableCondition(deployment: Observed): ConditionInput {
  const { yes, no } = AVAILABLE;
  if (deployment instanceof Error) return no(`looking up the Deployment: ${deployment.message}`);
  if (deployment === undefined) return no("the Deployment does not exist yet");
  const c = conditionStatus(deployment, "Available");
  if (c?.status === "True") return yes(`Deployment ${objName(deployment)} is available`);
  return no(`Deployment ${objName(deployment)} is not available${because(c)}`);
}

/** The Service's `conversion` port (else its first port, else 443). */
function conversionPort(service: KubeObject): number {
  const ports = asRecord(service.spec)?.ports;
  const list = Array.isArray(ports) ? ports.map(asRecord) : [];
  const port = list.find((p) => p?.name === "conversion") ?? list[0];
  const n = port?.port;
  return typeof n === "number" ? n : SERVICE_DEFAULTS.port;
}

function serviceCondition(service: Observed): ConditionInput {
  const { yes, no } = SERVICE_READY;
  if (service instanceof Error) return no(`looking up the Service: ${service.message}`);
  if (service === undefined) return no("the Service does not exist yet");
  return yes(`Service ${objName(service)} exists`);
}

function certificateCondition(source: Observed): ConditionInput {
  const { yes, no } = CERTIFICATE_READY;
  if (source instanceof Error) return no(`looking up the TLS certificate: ${source.message}`);
  if (source === undefined) return no("the TLS Secret does not exist yet");
  if (source.kind === "Certificate") {
    const c = conditionStatus(source, "Ready");
    if (c?.status === "True") return yes(`Certificate ${objName(source)} is Ready`);
    return no(`Certificate ${objName(source)} is not Ready${because(c)}`);
  }
  const data = asRecord(source.data);
  const crt = data?.["tls.crt"];
  if (typeof crt !== "string" || crt === "") {
    return no(`Secret ${objName(source)} has no tls.crt yet`);
  }
  const ca = data?.["ca.crt"];
  if (typeof ca !== "string" || ca === "") {
    return no(
      `Secret ${objName(source)} has no ca.crt: the caBundle must be the CA that signed tls.crt ` +
        "(the leaf itself is never trusted, it would break on renewal)",
    );
  }
  return yes(`Secret ${objName(source)} holds a certificate and its CA`);
}

/**
 * Status from the observed children:
 * - `replicas`/`readyReplicas` copied from the Deployment's status (0 when absent);
 * - `Available` ⇔ the Deployment's own `Available` condition is "True" (lookup error ⇒ False
 *   with the error in the message);
 * - `ServiceReady` ⇔ the Service **exists** (not "has ready endpoints": pod readiness is what
 *   `Available` and `readyReplicas` already report, so no Endpoints read is added);
 * - `CertificateReady`: given the TLS **Secret** (read through), a non-empty `tls.crt` and
 *   `ca.crt` (the caBundle is the CA, never the leaf); given a
 *   cert-manager **Certificate**, its `Ready` condition is "True".
 */
export function serverReadiness(
  deployment: Observed,
  service: Observed,
  certificateOrSecret: Observed,
): ServerReadiness {
  const depStatus = deployment instanceof Error || deployment === undefined
    ? undefined
    : asRecord(deployment.status);
  const out: ServerReadiness = {
    replicas: intField(depStatus, "replicas"),
    readyReplicas: intField(depStatus, "readyReplicas"),
    conditions: [
      availableCondition(deployment),
      serviceCondition(service),
      certificateCondition(certificateOrSecret),
    ],
  };
  if (service !== undefined && !(service instanceof Error)) {
    const { name, namespace } = service.metadata;
    out.endpoint = `https://${name}.${namespace}.svc:${conversionPort(service)}`;
  }
  return out;
}

/**
 * The server's `Ready` summary (docs/design/server-children.md#ready): Ready exactly when the
 * configs' `serverReady` gate would let a config through — `readyReplicas > 0` and `Available`,
 * `ServiceReady`, `CertificateReady` True; otherwise Reconciling with the first failing
 * condition's reason (or `NoReadyReplicas`).
 */
export function serverReadySummary(
  readiness: Pick<ServerReadiness, "replicas" | "readyReplicas" | "endpoint">,
  conditions: readonly ConditionInput[],
): Readiness {
  const failing = conditions.find((c) => c.status !== "True");
  if (failing !== undefined) {
    return { state: "Reconciling", reason: failing.reason, message: failing.message };
  }
  if (readiness.readyReplicas <= 0) {
    return {
      state: "Reconciling",
      reason: "NoReadyReplicas",
      message: `no webhook-server Pod is ready (${readiness.replicas} replicas)`,
    };
  }
  return {
    state: "Ready",
    reason: "ServerReady",
    message: `${readiness.readyReplicas} of ${readiness.replicas} replicas ready` +
      (readiness.endpoint === undefined ? "" : ` at ${readiness.endpoint}`),
  };
}

/**
 * The Event of a `Ready` change (docs/design/server-children.md#events): when the summary's state
 * or reason differs from the `Ready` condition as read; Normal either way (a server is never
 * Stalled).
 */
export function readyEvent(before: unknown, summary: Readiness): ObjectEvent | undefined {
  const list = Array.isArray(before) ? before.map((c) => isRecord(c) ? c : {}) : [];
  const ready = list.find((c) => c.type === "Ready");
  const wasReady = ready?.status === "True";
  if (
    ready !== undefined && wasReady === (summary.state === "Ready") &&
    ready.reason === summary.reason
  ) return undefined;
  return { type: "Normal", reason: summary.reason, action: "Reconcile", note: summary.message };
}
