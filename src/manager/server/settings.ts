/**
 * What every child builder shares: the operator-wide settings, the server's identity and the
 * metadata each child carries (name, namespace, selector labels, controller owner reference).
 */
import {
  CONFIG_API_VERSION,
  type ConversionWebhookServer,
  ConversionWebhookServerSpecSchema,
  WEBHOOK_SERVER_KIND,
} from "../../api/mod.ts";
import type { WebhookServerPolicy } from "../admission/server_policy.ts";
import { podLabels } from "./names.ts";
import type { ChildMeta, OwnerReference } from "./types.ts";

/**
 * Where the serving certificate comes from. `CertManager` (the default) renders a
 * cert-manager Certificate whose Secret the pods mount; `Builtin` renders none and the manager
 * issues the Secret itself from its own CA (src/manager/builtin_certs.ts); `ExistingSecret`
 * renders none and expects the Secret `<cws>-webhook-server-tls` to be provided by someone else.
 * Every mode mounts the same Secret name.
 */
export type CertMode = "CertManager" | "Builtin" | "ExistingSecret";

/** Operator-wide settings the children depend on: manager flags. */
export interface ServerChildSettings {
  /** The operator's namespace: children go here unless `spec.namespace` is set. */
  operatorNamespace: string;
  /** `--default-webhook-server-image` ("" ⇒ {@link DEFAULT_WEBHOOK_SERVER_IMAGE}). */
  defaultImage?: string;
  /** Mirrored into the replicas' flags: a replica watching a missing GVK crashes. */
  enableXrdSupport: boolean;
  enableCrdSupport: boolean;
  /** Default `CertManager`. */
  certMode?: CertMode;
  /**
   * The ConversionWebhookServer policy, re-checked before any child is rendered (admission checks
   * it first). Absent ⇒ the default policy (volume types and managed env only).
   */
  policy?: WebhookServerPolicy;
  /** `--ca-validity` of a built-in CA created while issuing (`Builtin` mode). */
  caValidityMs?: number;
  /** `--webhook-server-metrics-secure`: the default of `spec.metrics.secure`. */
  metricsSecure?: boolean;
}

/** A spec that cannot be rendered safely (e.g. `extraArgs` naming a managed flag). */
export class ServerSpecError extends Error {
  override name = "ServerSpecError";
}

export type Spec = ConversionWebhookServer["spec"];
const SHAPE = ConversionWebhookServerSpecSchema.shape;
/** Defaults of the optional blocks, taken from the schema so they live in one place. */
export const STARTUP_DEFAULTS = SHAPE.startupProbe.unwrap().parse({});
export const ROLLOUT_DEFAULTS = SHAPE.rollout.unwrap().parse({});
export const SERVICE_DEFAULTS = SHAPE.service.unwrap().parse({});

/**
 * Whether the server's Pods serve metrics securely (`--metrics-secure`): `spec.metrics.secure`,
 * else the manager's default.
 */
export function metricsSecureOf(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): boolean {
  return cws.spec.metrics?.secure ?? settings.metricsSecure ?? false;
}

export interface Identity {
  name: string;
  uid: string;
}

export function identityOf(cws: ConversionWebhookServer): Identity {
  const name = cws.metadata?.name;
  const uid = cws.metadata?.uid;
  if (!name) throw new ServerSpecError("ConversionWebhookServer has no metadata.name");
  if (!uid) throw new ServerSpecError(`ConversionWebhookServer ${name} has no metadata.uid`);
  return { name, uid };
}

/**
 * The controller owner reference every child carries: deleting the server garbage-collects them,
 * and their changes wake the server's reconcile.
 */
export function ownerReferenceFor(cws: ConversionWebhookServer): OwnerReference {
  const { name, uid } = identityOf(cws);
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: WEBHOOK_SERVER_KIND,
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** `spec.namespace`, else the operator's namespace. */
export function childNamespace(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): string {
  return cws.spec.namespace || settings.operatorNamespace;
}

/** The metadata of child `name`: namespace, selector labels and the owner reference. */
export function childMeta(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
  name: string,
): ChildMeta {
  return {
    name,
    namespace: childNamespace(cws, settings),
    labels: podLabels(identityOf(cws).name),
    ownerReferences: [ownerReferenceFor(cws)],
  };
}

/**
 * A child object of the given type: `{apiVersion, kind, metadata, spec}` with
 * {@link childMeta}. The builders differ only in the type and the spec.
 */
export function childObject<A extends string, K extends string, S>(
  type: { apiVersion: A; kind: K },
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
  name: string,
  spec: S,
): { apiVersion: A; kind: K; metadata: ChildMeta; spec: S } {
  return { ...type, metadata: childMeta(cws, settings, name), spec };
}

/** A builder of an optional child: undefined ⇒ the server has none. */
export type ChildBuilder<T> = (
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
) => T | undefined;

/**
 * The builder of a child that exists only while its optional spec block is set: it returns
 * `build(...)`, or undefined when the block is absent (none is applied; one applied before stays
 * until the server is deleted). The server's identity is checked only when the block is set.
 */
export function optionalChild<B, T>(
  blockOf: (spec: Spec) => B | undefined,
  build: (
    cws: ConversionWebhookServer,
    settings: ServerChildSettings,
    block: B,
    server: string,
  ) => T,
): ChildBuilder<T> {
  return (cws, settings) => {
    const block = blockOf(cws.spec);
    return block ? build(cws, settings, block, identityOf(cws).name) : undefined;
  };
}
