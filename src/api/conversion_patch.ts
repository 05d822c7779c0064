/**
 * The target's conversion patch: exactly what the manager server-side applies
 * into a CRD's or XRD's `spec.conversion`, and the revert that hands the stanza back.
 *
 * Pure functions with no client, so the reconcile tests can pin the exact content and convctl can
 * render the same objects offline. The apply carries the `managed-by` and `plan-hash` annotations;
 * the revert names at most `strategy: None`, so server-side apply releases the webhook fields and
 * both annotations that dco's field manager owned.
 */
import type { JsonObject } from "../engine/mod.ts";

export const MANAGED_BY_ANNOTATION = "conversion.terasky.com/managed-by";
export const PLAN_HASH_ANNOTATION = "conversion.terasky.com/plan-hash";

export const CRD_API_VERSION = "apiextensions.k8s.io/v1";
export const CRD_KIND = "CustomResourceDefinition";
export const XRD_API_VERSION_V1 = "apiextensions.crossplane.io/v1";
export const XRD_API_VERSION_V2 = "apiextensions.crossplane.io/v2";
export const XRD_KIND = "CompositeResourceDefinition";

/** Which kind of object the patch addresses. */
export type TargetKind = "CRD" | "XRD";

/** The Service a ConversionWebhookServer's replicas sit behind. */
export function webhookServiceName(server: string): string {
  return `${server}-webhook-server`;
}

/** `/convert/<target>`: the per-target conversion path. */
export function webhookPath(target: string): string {
  return `/convert/${target}`;
}

/** `https://<server>-webhook-server.<ns>.svc/convert/<target>`: never a port component. */
export function webhookURL(server: string, namespace: string, target: string): string {
  return `https://${webhookServiceName(server)}.${namespace}.svc${webhookPath(target)}`;
}

/**
 * The version an XRD is written at (XRD targets only): a legacy XRD offering claims (`spec.claimNames` set)
 * is rejected by Crossplane at `v2`, so it is addressed at `v1`; every other XRD (and an XRD that
 * could not be read) at `v2`.
 */
export function xrdWriteApiVersion(xrd: JsonObject | undefined): string {
  const spec = xrd?.spec;
  const legacy = typeof spec === "object" && spec !== null && !Array.isArray(spec) &&
    spec.claimNames !== undefined && spec.claimNames !== null;
  return legacy ? XRD_API_VERSION_V1 : XRD_API_VERSION_V2;
}

/** apiVersion/kind for writing a target of `kind` (the live object decides an XRD's version). */
export function targetTypeMeta(
  kind: TargetKind,
  live: JsonObject | undefined,
): { apiVersion: string; kind: string } {
  return kind === "CRD"
    ? { apiVersion: CRD_API_VERSION, kind: CRD_KIND }
    : { apiVersion: xrdWriteApiVersion(live), kind: XRD_KIND };
}

/** The Service the apiserver sends a target's ConversionReviews to. */
export interface WebhookService {
  name: string;
  namespace: string;
  path: string;
  port: number;
}

/** Everything the apply patch is made of, with the Service spelled out. */
export interface WebhookPatchInput {
  targetKind: TargetKind;
  targetName: string;
  /** The live target (decides an XRD's write version); absent ⇒ `v2`. */
  liveTarget?: JsonObject;
  /** The config's `metadata.name` (the `managed-by` annotation). */
  configName: string;
  /** The config's `status.schemaHash` (the `plan-hash` annotation). */
  planHash: string;
  service: WebhookService;
  /** Base64 of the CA bundle PEM (`caBundle` is bytes in both CRD and XRD). */
  caBundle: string;
  /** `spec.conversionReviewVersions`; absent or empty ⇒ `["v1"]`. */
  conversionReviewVersions?: readonly string[];
}

/** What the manager knows when it applies: the server, whose Service and path follow from names. */
export interface ConversionPatchInput extends Omit<WebhookPatchInput, "service"> {
  serverName: string;
  serverNamespace: string;
  /** `spec.service.port` of the server; absent ⇒ 443. */
  servicePort?: number;
}

/** The server-side apply object that points the target's conversion at `input.service`. */
export function buildWebhookPatch(input: WebhookPatchInput): JsonObject {
  const reviewVersions = input.conversionReviewVersions !== undefined &&
      input.conversionReviewVersions.length > 0
    ? [...input.conversionReviewVersions]
    : ["v1"];
  const { name, namespace, path, port } = input.service;
  return {
    ...targetTypeMeta(input.targetKind, input.liveTarget),
    metadata: {
      name: input.targetName,
      annotations: {
        [MANAGED_BY_ANNOTATION]: input.configName,
        [PLAN_HASH_ANNOTATION]: input.planHash,
      },
    },
    spec: {
      conversion: {
        strategy: "Webhook",
        webhook: {
          clientConfig: {
            service: { name, namespace, path, port },
            caBundle: input.caBundle,
          },
          conversionReviewVersions: reviewVersions,
        },
      },
    },
  };
}

/** The server-side apply object that points the target's conversion at the server. */
export function buildConversionPatch(input: ConversionPatchInput): JsonObject {
  const { serverName, serverNamespace, servicePort, ...rest } = input;
  return buildWebhookPatch({
    ...rest,
    service: {
      name: webhookServiceName(serverName),
      namespace: serverNamespace,
      path: webhookPath(input.targetName),
      port: servicePort ?? 443,
    },
  });
}

/**
 * The revert: same identity. A CRD keeps only `spec.conversion.strategy: None`. An XRD keeps no
 * `spec.conversion` at all, which is how it was before dco: Crossplane's v1 XRD schema admits a
 * stanza only with `strategy: Webhook` and a webhook (so `None` there is refused), and Crossplane
 * renders an XRD without one into generated CRDs whose conversion the apiserver defaults to `None`.
 */
export function buildRevertPatch(
  targetKind: TargetKind,
  targetName: string,
  liveTarget?: JsonObject,
): JsonObject {
  const identity = { ...targetTypeMeta(targetKind, liveTarget), metadata: { name: targetName } };
  return targetKind === "CRD"
    ? { ...identity, spec: { conversion: { strategy: "None" } } }
    : identity;
}
