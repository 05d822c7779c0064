/**
 * The XRD conversion guard (XRD support only): a mutating admission webhook on Crossplane
 * CompositeResourceDefinition CREATE/UPDATE that puts back the conversion stanza (and the
 * `managed-by` / `plan-hash` annotations) an out-of-band full-object write dropped — Crossplane's
 * package establisher rewrites every established XRD from the package contents on each revision
 * sync. Served by the manager at {@link XRD_GUARD_PATH} (src/manager/admission/http.ts).
 *
 * Pure: the AdmissionReview request in, the decision (a JSONPatch, possibly empty) out; the one
 * cluster read, the XRDConversionConfigs targeting the XRD (the config cache's `target` index), is
 * a function the caller provides. The handler fails open everywhere: every branch that does not
 * restore allows the write unchanged with an empty patch (no `patch` in the response), and so
 * does anything it cannot make sense of.
 *
 * Steps:
 * 1. Decode the incoming XRD; failure → allow.
 * 2. The configs targeting `request.name`; zero or more than one → allow.
 * 3. Only what the controller has already applied: `status.lastAppliedPlanHash` set,
 *    `Applied=True`, `assignedWebhookServer` and `webhookPath` set, not being deleted; else allow.
 * 4. Strategy empty or not `Webhook` → restore. `Webhook` but `managed-by` is not this config →
 *    allow (a foreign webhook is never hijacked). Ours and service name, namespace, path, port
 *    and `plan-hash` all match → allow. Otherwise restore.
 *    (Before a restore the caller reads the config again live and decides once more on that:
 *    src/manager/admission/http.ts. A `FailClosed` revert writes `Applied=False` just before it
 *    writes the XRD, and a cache behind that write would put the stanza back.)
 * 5. Restore: service name/namespace from `status.webhookURL` (host `<svc>.<ns>.svc`; unparsable →
 *    allow), path `status.webhookPath`, port `status.webhookPort` (0/absent ⇒ 443),
 *    `conversionReviewVersions` from the config's spec (default `["v1"]`), strategy `Webhook`,
 *    both annotations. The caBundle is never restored: one on the incoming object is kept, none
 *    is added (the controller's next reconcile supplies it). Nothing else is read or changed.
 *
 * The patch is computed against `request.object` as it arrived, at whatever XRD API version the
 * write used (`v1` or `v2`: `spec.conversion` and the annotations sit at the same paths in both).
 * Why the guard exists: docs/design/server-children.md#the-xrd-conversion-guard.
 */
import { textToBase64 } from "../../lib/base64.ts";
import { isRecord } from "../../lib/json.ts";
import { MANAGED_BY_ANNOTATION, PLAN_HASH_ANNOTATION } from "../conversion_patch.ts";

/** The guard's path on the manager's admission listener. */
export const XRD_GUARD_PATH = "/guard-xrd-conversion";
/** The webhook's name in the MutatingWebhookConfiguration. */
export const XRD_GUARD_WEBHOOK_NAME = "gxrdconversion.terasky.com";
/** The API group of Crossplane's CompositeResourceDefinition. */
export const XRD_GROUP = "apiextensions.crossplane.io";

/** One RFC 6902 operation as the guard emits them. */
export type JsonPatchOp =
  | { op: "add"; path: string; value: unknown }
  | { op: "replace"; path: string; value: unknown };

/** What the guard decided: the ops (empty ⇒ allow unchanged) and why (for logs and tests). */
export interface XrdGuardDecision {
  patch: JsonPatchOp[];
  reason: string;
}

/** The parts of an AdmissionReview `request` the guard reads. */
export interface XrdGuardRequest {
  operation: string;
  /** `request.name` (falls back to `object.metadata.name`). */
  name: string;
  /** `request.kind` (group/version/kind), when sent. */
  kind?: { group?: string; version?: string; kind?: string };
  /** `request.object`: the XRD as written, at the version the write arrived at. */
  object: unknown;
}

/**
 * The stored XRDConversionConfig objects whose `spec.targetXRD.name` is `xrdName` (the config
 * cache's `target` index).
 */
export type XrdConfigLookup = (xrdName: string) => readonly unknown[];

type Rec = Record<string, unknown>;

const allow = (reason: string): XrdGuardDecision => ({ patch: [], reason });

/** A JSON Pointer token (RFC 6901). */
function pointerToken(s: string): string {
  return s.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** The decoded incoming XRD: the records the guard reads (undefined when absent). */
interface DecodedXRD {
  name: string;
  annotations: Rec | undefined;
  hasMetadata: boolean;
  spec: Rec | undefined;
  conversion: Rec | undefined;
  webhook: Rec | undefined;
  clientConfig: Rec | undefined;
}

/** Step 1. A string describing the failure, or the decoded object. */
function decodeXRD(req: XrdGuardRequest): DecodedXRD | string {
  const obj = req.object;
  if (!isRecord(obj)) return "request.object is not a JSON object";
  if (obj.kind !== undefined && obj.kind !== "CompositeResourceDefinition") {
    return `request.object is a ${JSON.stringify(obj.kind)}, not a CompositeResourceDefinition`;
  }
  if (
    typeof obj.apiVersion === "string" && !obj.apiVersion.startsWith(`${XRD_GROUP}/`)
  ) {
    return `request.object has apiVersion ${JSON.stringify(obj.apiVersion)}`;
  }
  if (obj.metadata !== undefined && !isRecord(obj.metadata)) return "metadata is not an object";
  const metadata = isRecord(obj.metadata) ? obj.metadata : undefined;
  const annotations = metadata?.annotations;
  if (annotations !== undefined && annotations !== null && !isRecord(annotations)) {
    return "metadata.annotations is not an object";
  }
  const name = req.name !== "" ? req.name : typeof metadata?.name === "string" ? metadata.name : "";
  if (name === "") return "no object name";
  if (obj.spec !== undefined && obj.spec !== null && !isRecord(obj.spec)) {
    return "spec is not an object";
  }
  const spec = isRecord(obj.spec) ? obj.spec : undefined;
  const conversion = spec?.conversion;
  if (conversion !== undefined && conversion !== null && !isRecord(conversion)) {
    return "spec.conversion is not an object";
  }
  const conv = isRecord(conversion) ? conversion : undefined;
  const webhook = conv?.webhook;
  if (webhook !== undefined && webhook !== null && !isRecord(webhook)) {
    return "spec.conversion.webhook is not an object";
  }
  const wh = isRecord(webhook) ? webhook : undefined;
  const clientConfig = wh?.clientConfig;
  if (clientConfig !== undefined && clientConfig !== null && !isRecord(clientConfig)) {
    return "spec.conversion.webhook.clientConfig is not an object";
  }
  return {
    name,
    annotations: isRecord(annotations) ? annotations : undefined,
    hasMetadata: metadata !== undefined,
    spec,
    conversion: conv,
    webhook: wh,
    clientConfig: isRecord(clientConfig) ? clientConfig : undefined,
  };
}

/** What the controller applied, read from the config (steps 3 and 5). */
interface Applied {
  configName: string;
  planHash: string;
  /** Parsed from `status.webhookURL`; undefined when it does not name a Service. */
  service: { name: string; namespace: string } | undefined;
  webhookURL: string;
  path: string;
  port: number;
  conversionReviewVersions: string[];
}

/** `https://<service>.<namespace>.svc/...` → service and namespace; undefined when unparsable. */
export function serviceOfWebhookURL(
  url: string,
): { name: string; namespace: string } | undefined {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  const labels = host.split(".");
  if (labels.length !== 3 || labels[2] !== "svc" || labels[0] === "" || labels[1] === "") {
    return undefined;
  }
  return { name: labels[0], namespace: labels[1] };
}

/** Step 3 (and the inputs of step 5): the applied stanza, or a string saying why there is none. */
function appliedOf(config: unknown): Applied | string {
  if (!isRecord(config)) return "the config is not an object";
  const metadata = isRecord(config.metadata) ? config.metadata : {};
  const configName = typeof metadata.name === "string" ? metadata.name : "";
  if (configName === "") return "the config has no name";
  const status = isRecord(config.status) ? config.status : {};
  const str = (v: unknown) => typeof v === "string" ? v : "";
  const planHash = str(status.lastAppliedPlanHash);
  if (planHash === "") return `config ${configName} has not been applied yet`;
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const applied = conditions.find((c) => isRecord(c) && c.type === "Applied");
  if (!isRecord(applied) || applied.status !== "True") {
    return `config ${configName} is not Applied=True`;
  }
  if (str(status.assignedWebhookServer) === "") {
    return `config ${configName} has no assignedWebhookServer`;
  }
  const path = str(status.webhookPath);
  if (path === "") return `config ${configName} has no webhookPath`;
  if (metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null) {
    return `config ${configName} is being deleted`;
  }
  const webhookURL = str(status.webhookURL);
  const port = typeof status.webhookPort === "number" && Number.isInteger(status.webhookPort) &&
      status.webhookPort > 0
    ? status.webhookPort
    : 443;
  const spec = isRecord(config.spec) ? config.spec : {};
  const versions = Array.isArray(spec.conversionReviewVersions)
    ? spec.conversionReviewVersions.filter((v): v is string => typeof v === "string")
    : [];
  return {
    configName,
    planHash,
    service: serviceOfWebhookURL(webhookURL),
    webhookURL,
    path,
    port,
    conversionReviewVersions: versions.length > 0 ? versions : ["v1"],
  };
}

/** Applied, with the Service parsed. */
type Restorable = Applied & { service: { name: string; namespace: string } };

/** Step 4's "already matches": service name, namespace, path, port (absent ⇒ 443), plan-hash. */
function matches(xrd: DecodedXRD, applied: Restorable): boolean {
  const service = isRecord(xrd.clientConfig?.service) ? xrd.clientConfig.service : undefined;
  if (service === undefined) return false;
  const port = service.port === undefined || service.port === null ? 443 : service.port;
  return service.name === applied.service.name &&
    service.namespace === applied.service.namespace &&
    service.path === applied.path &&
    port === applied.port &&
    xrd.annotations?.[PLAN_HASH_ANNOTATION] === applied.planHash;
}

/** Step 5: the ops that put the applied stanza and both annotations back. */
function restorePatch(xrd: DecodedXRD, applied: Restorable): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  const wanted: Record<string, string> = {
    [MANAGED_BY_ANNOTATION]: applied.configName,
    [PLAN_HASH_ANNOTATION]: applied.planHash,
  };
  if (xrd.annotations === undefined) {
    if (!xrd.hasMetadata) ops.push({ op: "add", path: "/metadata", value: {} });
    ops.push({ op: "add", path: "/metadata/annotations", value: wanted });
  } else {
    for (const [key, value] of Object.entries(wanted)) {
      if (xrd.annotations[key] === value) continue;
      ops.push({ op: "add", path: `/metadata/annotations/${pointerToken(key)}`, value });
    }
  }
  const caBundle = xrd.clientConfig?.caBundle;
  const conversion = {
    strategy: "Webhook",
    webhook: {
      clientConfig: {
        service: {
          name: applied.service.name,
          namespace: applied.service.namespace,
          path: applied.path,
          port: applied.port,
        },
        ...(typeof caBundle === "string" && caBundle !== "" ? { caBundle } : {}),
      },
      conversionReviewVersions: [...applied.conversionReviewVersions],
    },
  };
  if (xrd.spec === undefined) {
    ops.push({ op: "add", path: "/spec", value: { conversion } });
  } else if (xrd.conversion === undefined) {
    ops.push({ op: "add", path: "/spec/conversion", value: conversion });
  } else {
    ops.push({ op: "replace", path: "/spec/conversion", value: conversion });
  }
  return ops;
}

/** The guard's decision for one admission request (steps 1–5 above). Never throws. */
export function decideXrdGuard(req: XrdGuardRequest, lookup: XrdConfigLookup): XrdGuardDecision {
  try {
    if (req.operation !== "CREATE" && req.operation !== "UPDATE") {
      return allow(`operation ${req.operation} is not guarded`);
    }
    if (
      req.kind !== undefined &&
      ((req.kind.group !== undefined && req.kind.group !== XRD_GROUP) ||
        (req.kind.kind !== undefined && req.kind.kind !== "CompositeResourceDefinition"))
    ) {
      return allow(`not an XRD: ${req.kind.group}/${req.kind.kind}`);
    }
    // 1. decode
    const xrd = decodeXRD(req);
    if (typeof xrd === "string") return allow(`cannot decode the XRD: ${xrd}`);
    // 2. the one config targeting it
    const configs = lookup(xrd.name);
    if (configs.length === 0) return allow(`no XRDConversionConfig targets ${xrd.name}`);
    if (configs.length > 1) {
      return allow(`${configs.length} XRDConversionConfigs target ${xrd.name}`);
    }
    // 3. only what was applied
    const applied = appliedOf(configs[0]);
    if (typeof applied === "string") return allow(applied);
    // 4. ours and current, or foreign
    const strategy = xrd.conversion?.strategy;
    if (strategy === "Webhook") {
      const managedBy = xrd.annotations?.[MANAGED_BY_ANNOTATION];
      if (managedBy !== applied.configName) {
        return allow(
          `the XRD's webhook is not managed by config ${applied.configName} (managed-by ${
            JSON.stringify(managedBy ?? null)
          }); never hijacked`,
        );
      }
    }
    if (applied.service === undefined) {
      return allow(
        `config ${applied.configName}: status.webhookURL ${
          JSON.stringify(applied.webhookURL)
        } does not name a Service (<service>.<namespace>.svc)`,
      );
    }
    const restorable = applied as Restorable;
    if (strategy === "Webhook" && matches(xrd, restorable)) {
      return allow(`the XRD already carries config ${applied.configName}'s webhook`);
    }
    // 5. restore
    return {
      patch: restorePatch(xrd, restorable),
      reason: `restored config ${applied.configName}'s conversion webhook (incoming strategy ${
        JSON.stringify(typeof strategy === "string" ? strategy : "")
      })`,
    };
  } catch (e) {
    return allow(`guard error: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The `response` of a mutating AdmissionReview from a decision (no `patch` when empty). */
export function xrdGuardResponse(
  uid: string,
  decision: XrdGuardDecision,
): { uid: string; allowed: true; patchType?: "JSONPatch"; patch?: string } {
  if (decision.patch.length === 0) return { uid, allowed: true };
  return {
    uid,
    allowed: true,
    patchType: "JSONPatch",
    patch: textToBase64(JSON.stringify(decision.patch)),
  };
}
