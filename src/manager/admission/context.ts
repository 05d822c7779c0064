/**
 * What the admission rules decide and what they read (docs/design/server-children.md#admission):
 * the decision type, the summaries of stored configs and servers, and the injected
 * {@link AdmissionContext} the manager backs with its caches and tests with in-memory fakes.
 */
import {
  CONFIG_KINDS,
  type ConfigKind,
  type ConversionConfig,
  type ConversionWebhookServer,
  targetNameOf,
} from "../../api/mod.ts";
import type { ServerInfo } from "../../assign/resolve.ts";
import type { JsonObject } from "../../lib/json.ts";
import type { WebhookServerPolicy } from "./server_policy.ts";

export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

export type AdmissionDecision =
  | { allowed: true; warnings?: string[] }
  | { allowed: false; message: string };

/** What the rules read about a stored config (either kind). */
export interface ConfigSummary {
  kind: ConfigKind;
  name: string;
  /** The bare target name (`spec.targetXRD.name` / `spec.targetCRD.name`): the registry key. */
  target: string;
  webhookServerRef?: { name?: string } | null;
  /** `status.webhookURL`: the last endpoint applied to the target (see `servedBy`). */
  webhookURL?: string;
}

type MaybePromise<T> = T | Promise<T>;

/**
 * The cluster reads of the rules, injected. The manager backs them with its informer caches (or
 * live GETs); tests use in-memory fakes. A thrown error fails the review (HTTP layer: a 500
 * denial), never a silent allow.
 */
export interface AdmissionContext {
  /** The manager's `--enable-xrd-support` / `--enable-crd-support`. */
  features: { xrd: boolean; crd: boolean };
  /** The live target: the Crossplane XRD (XRD configs) or the CRD (CRD configs); undefined = absent. */
  getTarget(kind: ConfigKind, name: string): MaybePromise<JsonObject | undefined>;
  /** Every stored XRDConversionConfig and CRDConversionConfig. */
  listConfigs(): MaybePromise<readonly ConfigSummary[]>;
  /** Every stored ConversionWebhookServer. */
  listServers(): MaybePromise<readonly ServerInfo[]>;
  /**
   * The ConversionWebhookServer policy (./server_policy.ts) and the namespace children go to
   * without `spec.namespace`. Absent ⇒ the default policy: only the volume-type and managed-env
   * rules.
   */
  serverPolicy?: ServerPolicyContext;
}

/** The policy a server write is checked against, and the operator namespace it assumes. */
export interface ServerPolicyContext {
  policy: WebhookServerPolicy;
  operatorNamespace: string;
}

export type ServerAdmissionContext = Pick<
  AdmissionContext,
  "listConfigs" | "listServers" | "serverPolicy"
>;

/** The summary of a parsed config. */
export function configSummaryOf(config: ConversionConfig): ConfigSummary {
  const ref = config.spec.webhookServerRef;
  return {
    kind: config.kind,
    name: config.metadata?.name ?? "",
    target: targetNameOf(config),
    ...(ref === undefined ? {} : { webhookServerRef: ref }),
    ...(config.status?.webhookURL === undefined ? {} : { webhookURL: config.status.webhookURL }),
  };
}

/** The resolver's view of a parsed ConversionWebhookServer. */
export function serverInfoOf(server: ConversionWebhookServer): ServerInfo {
  return {
    name: server.metadata?.name ?? "",
    default: server.spec.default,
    ...(server.spec.sharding === undefined ? {} : { sharding: server.spec.sharding }),
  };
}

/** True when `kind` is one of the two config kinds. */
export function isConfigKind(kind: string): kind is ConfigKind {
  return (CONFIG_KINDS as readonly string[]).includes(kind);
}
