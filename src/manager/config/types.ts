/**
 * The vocabulary of a config's reconcile: finalizers and annotations, requeue intervals, the
 * status this controller writes, the metric hooks, and {@link ConfigReconcileDeps} — every cluster
 * read and write the reconcile makes, so the algorithm is unit-tested without a cluster.
 * The rules behind them: docs/design/config-reconcile.md.
 */
import type { z } from "zod";
import type {
  CONFIG_PHASES,
  ConfigKind,
  ConversionConfig,
  ConversionConfigStatus,
  ConversionWebhookServer,
  SpokeStatusSchema,
} from "../../api/mod.ts";
import type { ServedLeaseLike } from "../../api/served_lease.ts";
import type { StatusCondition } from "../../kube/status.ts";
import type { JsonObject } from "../../lib/json.ts";
import type { TargetKind } from "../conversion_patch.ts";
import type { ConfigEvent } from "./events.ts";

/** Finalizer of an XRDConversionConfig. */
export const XRD_CONFIG_FINALIZER = "conversion.terasky.com/safe-revert";
/** Finalizer of a CRDConversionConfig. */
export const CRD_CONFIG_FINALIZER = "conversion.terasky.com/safe-revert-crd";
/**
 * Break-glass: delete (with revert) although the storage guard holds it (the target serves > 1
 * version, or objects may still be stored at another version). Live, `"true"` only.
 */
export const ALLOW_UNSAFE_DELETE_ANNOTATION = "conversion.terasky.com/allow-unsafe-delete";

/**
 * Timed requeues, milliseconds (docs/design/config-reconcile.md#requeue-intervals): an applied
 * config is re-checked every 5 minutes, a config waiting on a gate every 15 s, a held delete
 * or a held `FailClosed` revert every 30 s.
 */
export const REQUEUE_APPLIED_MS = 5 * 60_000;
export const REQUEUE_WAITING_MS = 15_000;
export const REQUEUE_DELETE_BLOCKED_MS = 30_000;
/** How long a deleted XRD config waits for its generated CRDs to drop the webhook, at most. */
export const REVERT_PROPAGATION_WAIT_MS = 60_000;
export const REQUEUE_REVERT_PROPAGATION_MS = 1_000;
export const REQUEUE_REVERT_BLOCKED_MS = 30_000;

export type ConfigPhase = typeof CONFIG_PHASES[number];

/** `status` as this controller writes it (the union of both kinds' typed status). */
export interface ConfigStatus {
  observedGeneration?: number;
  observedXRDGeneration?: number;
  observedCRDGeneration?: number;
  schemaHash?: string;
  phase?: ConfigPhase;
  conditions?: StatusCondition[];
  assignedWebhookServer?: string;
  webhookPath?: string;
  webhookURL?: string;
  webhookPort?: number;
  overallLossless?: boolean;
  spokeStatuses?: SpokeStatus[];
  lastAppliedPlanHash?: string;
  /** XRD kind only: one entry per generated CRD, rewritten on every verification pass. */
  generatedCRDs?: GeneratedCRDStatus[];
  message?: string;
  [other: string]: unknown;
}

/** One `status.generatedCRDs` entry. */
export interface GeneratedCRDStatus {
  name: string;
  role: "composite" | "claim";
  propagated: boolean;
  /** `"sha256:" + hex` of the raw caBundle bytes; "" when the CRD carries none. */
  observedCABundleHash: string;
  /** RFC 3339 time of the read. */
  observedAt: string;
  /** Why not propagated ("" when propagated). */
  message: string;
}

export type SpokeStatus = z.infer<typeof SpokeStatusSchema>;

/** Label value of `config_kind`. */
export type ConfigKindLabel = "xrd" | "crd";

export type AnalyzeFailureReason = "InvalidConfig" | "AnalyzeFailed" | "ValidationErrors";

/** Metric hooks (the `dco_manager_*` metrics); all optional. */
export interface ConfigReconcileMetrics {
  /** `dco_manager_analyze_failures_total`. */
  analyzeFailure?(labels: {
    configKind: ConfigKindLabel;
    target: string;
    reason: AnalyzeFailureReason;
  }): void;
  /** `dco_manager_phase_transitions_total` (`fromPhase` `None` when empty; never a no-op). */
  phaseTransition?(labels: {
    configKind: ConfigKindLabel;
    target: string;
    fromPhase: string;
    toPhase: string;
    reason: string;
  }): void;
  /** `dco_manager_apply_duration_seconds{result}`. */
  applyDuration?(result: "success" | "error", seconds: number): void;
  /** XRD only: `dco_manager_conversion_reverts_total{config_kind="xrd",target}`. */
  conversionRevert?(labels: { configKind: ConfigKindLabel; target: string }): void;
  /** XRD only: `dco_manager_conversion_propagated{target}`, 1/0 after every verification pass. */
  conversionPropagated?(target: string, propagated: boolean): void;
  /** XRD only: `dco_manager_propagation_lag_seconds{target}`, on each transition into Propagated. */
  propagationLag?(target: string, seconds: number): void;
}

/** Everything the reconcile reads or writes; NotFound is `undefined`, other failures throw. */
export interface ConfigReconcileDeps {
  /** The config (strictly decoded), or undefined when it does not exist. */
  getConfig(kind: ConfigKind, name: string): Promise<ConversionConfig | undefined>;
  /** The target CRD (`apiextensions.k8s.io/v1`) or XRD, or undefined when NotFound. */
  getTarget(kind: TargetKind, name: string): Promise<JsonObject | undefined>;
  /**
   * XRD only. The target read through to the apiserver (not the cache). Optional: when present,
   * an out-of-band revert seen in the cached target is confirmed against the live object before
   * it is counted (the cache may not have seen this controller's own last apply yet).
   */
  getTargetLive?(kind: TargetKind, name: string): Promise<JsonObject | undefined>;
  /**
   * XRD only. A CRD (`apiextensions.k8s.io/v1`) Crossplane generated from the target XRD,
   * cached; undefined when NotFound. Required for XRD configs (a missing implementation reports
   * `ConversionPropagated=False/NotPropagated`).
   */
  getGeneratedCRD?(name: string): Promise<JsonObject | undefined>;
  /**
   * A CRD (`apiextensions.k8s.io/v1`) read through to the apiserver, never from a cache: the
   * storage guard decides on its served versions and `status.storedVersions` as they are now.
   * Undefined when NotFound.
   */
  getCRDLive(name: string): Promise<JsonObject | undefined>;
  listServers(): Promise<ConversionWebhookServer[]>;
  /**
   * The served-target Leases of one server instance (label
   * `conversion.terasky.com/webhook-server=<server>` in its namespace), read for the handover
   * gate. A failure throws (backoff retry), it is never turned into a verdict.
   */
  listServedLeases(serverName: string, serverNamespace: string): Promise<ServedLeaseLike[]>;
  /** One server; undefined (NotFound) is treated as an error by the reconcile. */
  getServer(name: string): Promise<ConversionWebhookServer | undefined>;
  /**
   * The CA bundle PEM of `<server>-webhook-server-tls` (its `ca.crt`; a `tls.crt` leaf is never
   * used), read through to the apiserver (Secrets are never cached); undefined when it is missing.
   */
  readCABundle(serverName: string, serverNamespace: string): Promise<string | undefined>;
  /** Server-side apply (dco's field manager, force) of a target object. */
  applyTarget(obj: JsonObject): Promise<void>;
  /** Merge patch of `/status`, computed from the status as stored (`before`) to `after`. */
  patchStatus(
    kind: ConfigKind,
    name: string,
    before: ConversionConfigStatus | ConfigStatus | undefined,
    after: ConfigStatus,
  ): Promise<void>;
  /** Full-object update with `finalizers` (optimistic concurrency); returns the updated config. */
  updateFinalizers(config: ConversionConfig, finalizers: string[]): Promise<ConversionConfig>;
  /** Epoch milliseconds. */
  now(): number;
  /** Namespace of servers without `spec.namespace` (the operator's own). */
  operatorNamespace: string;
  metrics?: ConfigReconcileMetrics;
  /**
   * Warnings: an out-of-band revert (XRD only), an approved handover, a storage guard overridden
   * by the break-glass annotation. Silent when absent.
   */
  log?: (msg: string, fields: Record<string, unknown>) => void;
  /** Records an Event on `config` (./events.ts); silent when absent. */
  event?: (config: ConversionConfig, event: ConfigEvent) => void;
}

export interface ReconcileResult {
  requeueAfter?: number;
}
