/**
 * Config reconcile for `XRDConversionConfig` and `CRDConversionConfig` (runtime.md §4.1–§4.5,
 * api.md §1.2–§1.5): validate a config against the live target, and only then point the target's
 * `spec.conversion` at the assigned ConversionWebhookServer.
 *
 * The gate order is a safety guarantee (G1): the target is patched only after the config
 * validated against the *current* live schema, the target is Established and the server is ready.
 * A config that fails a gate after it was applied goes `Stale` and leaves the working conversion
 * alone; only `FailClosed` drift reverts (G2). Deleting a config reverts the target before the
 * finalizer goes, and is held while more than one version is served (G3).
 *
 * [P11, XRD kind only] `PackageManaged` and out-of-band revert detection (§4.7) from the target
 * in hand before any gate; after an apply, propagation verification (§4.6): every CRD Crossplane
 * generates from the XRD is read and its `spec.conversion` compared with what was applied
 * (`ConversionPropagated`, `status.generatedCRDs`). The operator reports; it never repairs.
 *
 * Every cluster access goes through {@link ConfigReconcileDeps}, so the algorithm is unit-tested
 * without a cluster.
 *
 * [P15] A move (see {@link isMove}) passes the handover gate (§5, src/manager/handover.ts) before
 * the target is repointed: the destination's live served-target Leases must show that every
 * ready replica serves the target (or, after 30 s of silence, the unverified fallback applies).
 */
import {
  type AnalysisResult,
  analyze,
  type Diagnostic,
  generatedCRDNames,
  type JsonObject,
  schemaSourceFromCRD,
  schemaSourceFromXRD,
  structuralError,
} from "../engine/mod.ts";
import {
  CONFIG_PHASES,
  type ConfigKind,
  type ConversionConfig,
  type ConversionConfigStatus,
  type ConversionWebhookServer,
  type SpokeStatusSchema,
  targetNameOf,
  XRD_CONFIG_KIND,
} from "../api/mod.ts";
import { resolveServer, type ServerInfo } from "../assign/resolve.ts";
import {
  type ConditionInput,
  removeCondition,
  setCondition,
  type StatusCondition,
} from "../kube/status.ts";
import {
  buildConversionPatch,
  buildRevertPatch,
  MANAGED_BY_ANNOTATION,
  type TargetKind,
  webhookPath,
  webhookServiceName,
  webhookURL,
} from "./conversion_patch.ts";
import type { ServedLeaseLike } from "../api/served_lease.ts";
import { HANDOVER_REQUEUE_MS, handoverVerdict } from "./handover.ts";
import { aggregateServedTargets } from "./served_targets.ts";
import type { z } from "zod";

// ---------------------------------------------------------------------------------------------
// Vocabulary

/** Finalizer of an XRDConversionConfig (api.md §1.5). */
export const XRD_CONFIG_FINALIZER = "conversion.terasky.com/safe-revert";
/** Finalizer of a CRDConversionConfig (api.md §2). */
export const CRD_CONFIG_FINALIZER = "conversion.terasky.com/safe-revert-crd";
/** Break-glass: delete (with revert) although the target serves > 1 version. Live, `"true"` only. */
export const ALLOW_UNSAFE_DELETE_ANNOTATION = "conversion.terasky.com/allow-unsafe-delete";

/** Timed requeues (runtime.md §2.3), milliseconds. */
export const REQUEUE_APPLIED_MS = 5 * 60_000;
export const REQUEUE_WAITING_MS = 15_000;
export const REQUEUE_DELETE_BLOCKED_MS = 30_000;

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
  /** [P11] XRD kind only: one entry per generated CRD, rewritten on every verification pass. */
  generatedCRDs?: GeneratedCRDStatus[];
  message?: string;
  [other: string]: unknown;
}

/** One `status.generatedCRDs` entry (api.md §1.2). */
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

/** Metric hooks (operations.md `dco_manager_*`); all optional. */
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
  /** [P11] `dco_manager_conversion_reverts_total{config_kind="xrd",target}` (runtime §4.7). */
  conversionRevert?(labels: { configKind: ConfigKindLabel; target: string }): void;
  /** [P11] `dco_manager_conversion_propagated{target}`: 1/0 after every verification pass. */
  conversionPropagated?(target: string, propagated: boolean): void;
  /** [P11] `dco_manager_propagation_lag_seconds{target}`: on each transition into Propagated. */
  propagationLag?(target: string, seconds: number): void;
}

/** Everything the reconcile reads or writes; NotFound is `undefined`, other failures throw. */
export interface ConfigReconcileDeps {
  /** The config (strictly decoded), or undefined when it does not exist. */
  getConfig(kind: ConfigKind, name: string): Promise<ConversionConfig | undefined>;
  /** The target CRD (`apiextensions.k8s.io/v1`) or XRD, or undefined when NotFound. */
  getTarget(kind: TargetKind, name: string): Promise<JsonObject | undefined>;
  /**
   * [P11] The target read through to the apiserver (not the cache). Optional: when present, an
   * out-of-band revert seen in the cached target is confirmed against the live object before it
   * is counted (the cache may not have seen this controller's own last apply yet).
   */
  getTargetLive?(kind: TargetKind, name: string): Promise<JsonObject | undefined>;
  /**
   * [P11] A CRD (`apiextensions.k8s.io/v1`) Crossplane generated from the target XRD, cached;
   * undefined when NotFound. Required for XRD configs (a missing implementation reports
   * `ConversionPropagated=False/NotPropagated`).
   */
  getGeneratedCRD?(name: string): Promise<JsonObject | undefined>;
  listServers(): Promise<ConversionWebhookServer[]>;
  /**
   * [P15] The served-target Leases of one server instance (label
   * `conversion.terasky.com/webhook-server=<server>` in its namespace), read for the handover
   * gate. A failure throws (backoff retry), it is never turned into a verdict.
   */
  listServedLeases(serverName: string, serverNamespace: string): Promise<ServedLeaseLike[]>;
  /** One server; undefined (NotFound) is treated as an error by the reconcile. */
  getServer(name: string): Promise<ConversionWebhookServer | undefined>;
  /**
   * The CA bundle PEM of `<server>-webhook-server-tls` (`ca.crt` if non-empty else `tls.crt`),
   * read through to the apiserver ([P14]); undefined when neither exists.
   */
  readCABundle(serverName: string, serverNamespace: string): Promise<string | undefined>;
  /** Server-side apply (dco's field manager, force) of a target object. */
  applyTarget(obj: JsonObject): Promise<void>;
  /** Merge patch of `/status`, computed from the status as read (`before`) to `after`. */
  patchStatus(
    kind: ConfigKind,
    name: string,
    before: ConversionConfigStatus | undefined,
    after: ConfigStatus,
  ): Promise<void>;
  /** Full-object update with `finalizers` (optimistic concurrency); returns the updated config. */
  updateFinalizers(config: ConversionConfig, finalizers: string[]): Promise<ConversionConfig>;
  /** Epoch milliseconds. */
  now(): number;
  /** Namespace of servers without `spec.namespace` (the operator's own). */
  operatorNamespace: string;
  metrics?: ConfigReconcileMetrics;
  /** [P11] Where the out-of-band revert line goes (runtime §4.7); silent when absent. */
  log?: (msg: string, fields: Record<string, unknown>) => void;
}

export interface ReconcileResult {
  requeueAfter?: number;
}

// ---------------------------------------------------------------------------------------------
// Pure helpers

/**
 * `status.schemaHash` (api.md §1.2):
 * `"sha256:" + base64url-no-padding(SHA-256("gen=<targetGen>;hub=<hub>;cfgGen=<cfgGen>"))`.
 */
export async function schemaHash(
  targetGeneration: number,
  hubVersion: string,
  configGeneration: number,
): Promise<string> {
  const input = `gen=${targetGeneration};hub=${hubVersion};cfgGen=${configGeneration}`;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(input)),
  );
  let bin = "";
  for (const b of digest) bin += String.fromCharCode(b);
  return "sha256:" + btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** api.md §1.4: `readyReplicas > 0` and `Available`, `CertificateReady`, `ServiceReady` True. */
export function isServerReady(server: ConversionWebhookServer): boolean {
  const st = server.status;
  if ((st?.readyReplicas ?? 0) <= 0) return false;
  const isTrue = (type: string) =>
    st?.conditions?.some((c) => c.type === type && c.status === "True") ?? false;
  return isTrue("Available") && isTrue("CertificateReady") && isTrue("ServiceReady");
}

/** Namespace the server's children live in. */
export function serverNamespace(server: ConversionWebhookServer, fallback: string): string {
  const ns = server.spec.namespace;
  return ns !== undefined && ns !== "" ? ns : fallback;
}

/**
 * [P15 seam, runtime.md §5] A move: the config was applied, its last applied `webhookURL` is set
 * and does not name the resolved server's Service. Computed before `assignedWebhookServer` is
 * updated. The handover gate is not implemented yet, so a move is applied like any other apply.
 */
export function isMove(
  wasApplied: boolean,
  lastURL: string | undefined,
  server: string,
  namespace: string,
): boolean {
  if (!wasApplied || lastURL === undefined || lastURL === "") return false;
  return !lastURL.startsWith(`https://${webhookServiceName(server)}.${namespace}.svc/`);
}

/** Reasons of `ConversionPropagated` (api.md §1.4), in the order they win. */
export type PropagationReason =
  | "GeneratedCRDNotFound"
  | "NotPropagated"
  | "CABundleStale"
  | "Propagated";

/**
 * [P11] `PackageManaged` (api.md §1.4): the owner reference of a Crossplane package revision
 * (API group `pkg.crossplane.io`, kind ending in `Revision`) if the XRD has one.
 */
export function packageRevisionOwner(
  xrd: JsonObject,
): { kind: string; name: string } | undefined {
  const refs = isObject(xrd.metadata) ? xrd.metadata.ownerReferences : undefined;
  if (!Array.isArray(refs)) return undefined;
  for (const r of refs) {
    if (!isObject(r)) continue;
    const apiVersion = typeof r.apiVersion === "string" ? r.apiVersion : "";
    const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
    const kind = typeof r.kind === "string" ? r.kind : "";
    if (group === "pkg.crossplane.io" && kind.endsWith("Revision")) {
      return { kind, name: typeof r.name === "string" ? r.name : "" };
    }
  }
  return undefined;
}

/**
 * [P11] runtime.md §4.7: the live XRD's conversion is *ours* iff `spec.conversion.strategy` is
 * `Webhook` **and** the `managed-by` annotation names this config (both halves: a foreign webhook,
 * or an annotation that outlived a replaced block, are not ours).
 */
export function isOurConversion(target: JsonObject, configName: string): boolean {
  const spec = isObject(target.spec) ? target.spec : {};
  const conversion = isObject(spec.conversion) ? spec.conversion : {};
  const annotations = isObject(target.metadata) && isObject(target.metadata.annotations)
    ? target.metadata.annotations
    : {};
  return conversion.strategy === "Webhook" &&
    annotations[MANAGED_BY_ANNOTATION] === configName;
}

/** `"sha256:" + hex(SHA-256(bytes))` (api.md §1.2 `observedCABundleHash`). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
  );
  return "sha256:" + [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function base64Bytes(b64: string): Uint8Array | undefined {
  try {
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return undefined;
  }
}

/** What was applied to the XRD, as the generated CRDs must carry it (runtime §4.6). */
export interface AppliedConversion {
  serviceName: string;
  serviceNamespace: string;
  path: string;
  port: number;
  conversionReviewVersions: readonly string[];
  /** `"sha256:" + hex` of the raw CA bundle bytes applied. */
  caBundleHash: string;
}

/** The verdict on one generated CRD (runtime §4.6). */
export interface GeneratedCRDVerdict {
  state: "propagated" | "notFound" | "mismatch" | "stale";
  observedCABundleHash: string;
  message: string;
}

/**
 * [P11] Compares a generated CRD's `spec.conversion` with what was applied (runtime §4.6):
 * strategy `Webhook` (anything else, `None` included, is a mismatch), a service client config,
 * service name/namespace, path, port (absent ⇒ 443) and the review versions as sets; then the
 * caBundle by SHA-256 of the raw bytes — a caBundle-only difference is *stale*.
 * `crd` undefined ⇒ not found; an `Error` ⇒ a mismatch carrying the error.
 */
export async function verifyGeneratedCRD(
  crd: JsonObject | Error | undefined,
  expected: AppliedConversion,
): Promise<GeneratedCRDVerdict> {
  if (crd === undefined) {
    return { state: "notFound", observedCABundleHash: "", message: "not found" };
  }
  if (crd instanceof Error) {
    return { state: "mismatch", observedCABundleHash: "", message: `read failed: ${crd.message}` };
  }
  const spec = isObject(crd.spec) ? crd.spec : {};
  const conversion = isObject(spec.conversion) ? spec.conversion : {};
  const webhook = isObject(conversion.webhook) ? conversion.webhook : {};
  const clientConfig = isObject(webhook.clientConfig) ? webhook.clientConfig : {};
  const rawCA = typeof clientConfig.caBundle === "string" ? clientConfig.caBundle : "";
  const caBytes = rawCA === "" ? undefined : base64Bytes(rawCA);
  const observedCABundleHash = caBytes === undefined ? "" : await sha256Hex(caBytes);
  const mismatch = (message: string): GeneratedCRDVerdict => ({
    state: "mismatch",
    observedCABundleHash,
    message,
  });
  const strategy = typeof conversion.strategy === "string" ? conversion.strategy : "None";
  if (strategy !== "Webhook") {
    return mismatch(`conversion strategy is ${JSON.stringify(strategy)}, not "Webhook"`);
  }
  if (!isObject(clientConfig.service)) return mismatch("no service client config");
  const svc = clientConfig.service;
  const field = (what: string, got: unknown, want: unknown) =>
    got === want
      ? undefined
      : `${what} is ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
  const diff = field("service name", svc.name, expected.serviceName) ??
    field("service namespace", svc.namespace, expected.serviceNamespace) ??
    field("service path", svc.path, expected.path) ??
    field("service port", svc.port ?? 443, expected.port);
  if (diff !== undefined) return mismatch(diff);
  const got = new Set(
    Array.isArray(webhook.conversionReviewVersions)
      ? webhook.conversionReviewVersions.filter((v) => typeof v === "string")
      : [],
  );
  const want = new Set(expected.conversionReviewVersions);
  if (got.size !== want.size || [...want].some((v) => !got.has(v))) {
    return mismatch(
      `conversionReviewVersions are ${JSON.stringify([...got])}, expected ${
        JSON.stringify([...want])
      }`,
    );
  }
  if (observedCABundleHash !== expected.caBundleHash) {
    return {
      state: "stale",
      observedCABundleHash,
      message: `caBundle ${
        observedCABundleHash || "(none)"
      } differs from the applied ${expected.caBundleHash}`,
    };
  }
  return { state: "propagated", observedCABundleHash, message: "" };
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function targetGeneration(target: JsonObject): number {
  const g = isObject(target.metadata) ? target.metadata.generation : undefined;
  return typeof g === "number" ? g : 0;
}

function isEstablished(target: JsonObject): boolean {
  const conds = isObject(target.status) ? target.status.conditions : undefined;
  return Array.isArray(conds) &&
    conds.some((c) => isObject(c) && c.type === "Established" && c.status === "True");
}

function servedVersionCount(target: JsonObject): number {
  const versions = isObject(target.spec) ? target.spec.versions : undefined;
  return Array.isArray(versions)
    ? versions.filter((v) => isObject(v) && v.served === true).length
    : 0;
}

function diagText(d: Diagnostic): string {
  return `[${d.class}] ${d.message}`;
}

/** `status.spokeStatuses` from an analysis: always the last attempt, even a failed one. */
export function spokeStatusesOf(result: AnalysisResult): SpokeStatus[] {
  return result.spokes.map((s) => ({
    version: s.version,
    lossless: { ...s.lossless },
    fieldsUncoveredHub: [...s.uncoveredHub],
    fieldsUncoveredSpoke: [...s.uncoveredSpoke],
    ruleResults: s.ruleResults.map((r) => ({
      index: r.index,
      strategy: r.strategy,
      hubPaths: [...r.hubPaths],
      spokePaths: [...r.spokePaths],
      lossless: { ...r.lossless },
      errors: r.errors.map(diagText),
      warnings: r.warnings.map(diagText),
    })),
    errors: s.errors.map(diagText),
    warnings: s.warnings.map(diagText),
  }));
}

/** The loose, as-read status as the typed working copy (unknown condition shapes dropped). */
function workingStatus(raw: ConversionConfigStatus | undefined): ConfigStatus {
  const copy = structuredClone(raw ?? {}) as Record<string, unknown>;
  const conditions: StatusCondition[] = [];
  for (const c of raw?.conditions ?? []) {
    if (c.status !== "True" && c.status !== "False" && c.status !== "Unknown") continue;
    const cond: StatusCondition = {
      type: c.type,
      status: c.status,
      reason: c.reason ?? "",
      message: c.message ?? "",
      lastTransitionTime: c.lastTransitionTime ?? "",
    };
    if (c.observedGeneration !== undefined) cond.observedGeneration = c.observedGeneration;
    conditions.push(cond);
  }
  const phase = (CONFIG_PHASES as readonly string[]).includes(raw?.phase ?? "")
    ? raw?.phase as ConfigPhase
    : undefined;
  return { ...copy, phase, conditions } as ConfigStatus;
}

// ---------------------------------------------------------------------------------------------
// The reconcile

/** One reconcile's state: the config, its working status and the helpers that edit it. */
class Run {
  readonly status: ConfigStatus;
  readonly origPhase: string;
  readonly wasApplied: boolean;
  readonly targetKind: TargetKind;
  readonly kindLabel: ConfigKindLabel;
  readonly target: string;
  readonly generation: number;

  constructor(
    readonly kind: ConfigKind,
    readonly config: ConversionConfig,
    readonly deps: ConfigReconcileDeps,
  ) {
    this.status = workingStatus(config.status);
    this.origPhase = config.status?.phase ?? "";
    this.wasApplied = this.origPhase === "Applied" || this.origPhase === "Stale";
    this.targetKind = kind === XRD_CONFIG_KIND ? "XRD" : "CRD";
    this.kindLabel = kind === XRD_CONFIG_KIND ? "xrd" : "crd";
    this.target = targetNameOf(config);
    this.generation = config.metadata?.generation ?? 0;
  }

  get name(): string {
    return this.config.metadata?.name ?? "";
  }

  cond(input: Omit<ConditionInput, "observedGeneration">): void {
    this.status.conditions = setCondition(
      this.status.conditions,
      { ...input, observedGeneration: this.generation },
      this.deps.now(),
    );
  }

  dropCond(type: string): void {
    this.status.conditions = removeCondition(this.status.conditions, type);
  }

  /** Sets the phase; counts a transition when asked and the phase really changes. */
  phase(phase: ConfigPhase, transitionReason?: string): void {
    this.status.phase = phase;
    if (transitionReason !== undefined && phase !== this.origPhase) {
      this.deps.metrics?.phaseTransition?.({
        configKind: this.kindLabel,
        target: this.target,
        fromPhase: this.origPhase === "" ? "None" : this.origPhase,
        toPhase: phase,
        reason: transitionReason,
      });
    }
  }

  /** `setInvalid(msg)` of runtime.md §4.1. */
  setInvalid(message: string, transitionReason?: string): void {
    if (this.wasApplied) {
      this.phase("Stale", transitionReason);
      this.cond({ type: "Stale", status: "True", reason: "PostApplyInvalid", message });
    } else {
      this.phase("Invalid", transitionReason);
      this.dropCond("Stale");
    }
    this.cond({ type: "Validated", status: "False", reason: "Invalid", message });
    this.status.message = message;
  }

  /** `Pending|Stale(reason)` of runtime.md §4.1 (gate waits: no transition metric). */
  waitOn(reason: string, message: string): void {
    if (this.wasApplied) {
      this.phase("Stale");
      this.cond({ type: "Stale", status: "True", reason, message });
    } else {
      this.phase("Pending");
      this.dropCond("Stale");
    }
    this.status.message = message;
  }

  async patch(): Promise<void> {
    this.status.observedGeneration = this.generation;
    await this.deps.patchStatus(this.kind, this.name, this.config.status, this.status);
  }

  analyzeFailure(reason: AnalyzeFailureReason): void {
    this.deps.metrics?.analyzeFailure?.({
      configKind: this.kindLabel,
      target: this.target,
      reason,
    });
  }
}

/**
 * Reconciles one config of `kind` named `name` (runtime.md §4.1, §4.3, §4.5). Returns the timed
 * requeue, if any; throws for transient failures (the caller retries with backoff).
 */
export async function reconcileConfig(
  kind: ConfigKind,
  name: string,
  deps: ConfigReconcileDeps,
): Promise<ReconcileResult> {
  // 0. get config; deleting → §4.5; ensure finalizer
  let config = await deps.getConfig(kind, name);
  if (config === undefined) return {};
  const finalizer = kind === XRD_CONFIG_KIND ? XRD_CONFIG_FINALIZER : CRD_CONFIG_FINALIZER;
  if (config.metadata?.deletionTimestamp) return await reconcileDelete(kind, config, deps);
  const finalizers = config.metadata?.finalizers ?? [];
  if (!finalizers.includes(finalizer)) {
    config = await deps.updateFinalizers(config, [...finalizers, finalizer]);
  }
  const run = new Run(kind, config, deps);
  const { status } = run;
  const targetLabel = `${run.targetKind} ${JSON.stringify(run.target)}`;

  // 1. target
  let target = await deps.getTarget(run.targetKind, run.target);
  if (target === undefined) {
    run.setInvalid(`target ${targetLabel} not found`);
    await run.patch();
    return {};
  }
  // [P11] PackageManaged and out-of-band revert detection (§4.7), before any gate (XRD only).
  if (run.targetKind === "XRD") target = await xrdPreGate(run, target);
  const targetGen = targetGeneration(target);
  if (run.targetKind === "XRD") status.observedXRDGeneration = targetGen;
  else status.observedCRDGeneration = targetGen;

  // 2. translate (structural checks and rule translation)
  const structural = structuralError(config.spec);
  if (structural !== undefined) {
    return await invalidConfig(run, `invalid config: [structural] ${structural}`);
  }
  // 3. analyze against the live target
  let result: AnalysisResult;
  try {
    const source = run.targetKind === "XRD"
      ? schemaSourceFromXRD(target)
      : schemaSourceFromCRD(target);
    result = analyze(source, config.spec);
  } catch (e) {
    run.analyzeFailure("AnalyzeFailed");
    run.setInvalid(
      `analysis failed: ${e instanceof Error ? e.message : String(e)}`,
      "AnalyzeFailed",
    );
    await run.patch();
    return {};
  }
  const translation = result.hardErrors.filter((d) => d.class === "rule-translation");
  if (translation.length > 0) {
    return await invalidConfig(run, `invalid config: ${translation.map(diagText).join("; ")}`);
  }
  if (result.hardErrors.length > 0) {
    run.analyzeFailure("AnalyzeFailed");
    run.setInvalid(
      `analysis failed: ${result.hardErrors.map(diagText).join("; ")}`,
      "AnalyzeFailed",
    );
    await run.patch();
    return {};
  }
  status.spokeStatuses = spokeStatusesOf(result);
  status.overallLossless = result.overallLossless;
  status.schemaHash = await schemaHash(targetGen, config.spec.hubVersion, run.generation);

  // 4. validation errors → drift policy (§4.3)
  if (result.hasErrors) {
    const lines = result.spokes.flatMap((s) =>
      s.errors.map((d) => `[spoke ${s.version}] ${diagText(d)}`)
    );
    const message = `validation failed against the live ${targetLabel}: ${lines.join("; ")}`;
    run.analyzeFailure("ValidationErrors");
    run.cond({ type: "Validated", status: "False", reason: "ValidationFailed", message });
    return await driftPolicy(run, target, message);
  }
  run.cond({
    type: "Validated",
    status: "True",
    reason: "Validated",
    message: `validated against the live ${targetLabel}`,
  });

  // 5. resolve the server
  const servers = await deps.listServers();
  const infos: ServerInfo[] = servers.map((s) => ({
    name: s.metadata?.name ?? "",
    default: s.spec.default,
    sharding: s.spec.sharding,
  }));
  const resolution = resolveServer(
    { target: run.target, webhookServerRef: config.spec.webhookServerRef },
    infos,
  );
  if (!resolution.ok) {
    run.setInvalid(`could not resolve a ConversionWebhookServer: ${resolution.error}`);
    await run.patch();
    return {};
  }
  const serverName = resolution.server;
  const listed = servers.find((s) => s.metadata?.name === serverName);
  // [P15] Computed before assignedWebhookServer moves (never from it: a second reconcile would
  // think the move already happened).
  const move = listed !== undefined &&
    isMove(
      run.wasApplied,
      config.status?.webhookURL,
      serverName,
      serverNamespace(listed, deps.operatorNamespace),
    );
  status.assignedWebhookServer = serverName;

  // 6. target Established?
  const healthType = run.targetKind === "XRD" ? "XRDHealthy" : "CRDHealthy";
  if (!isEstablished(target)) {
    const message = `${targetLabel} is not Established`;
    run.cond({ type: healthType, status: "False", reason: "NotEstablished", message });
    run.waitOn("NotEstablished", message);
    await run.patch();
    return { requeueAfter: REQUEUE_WAITING_MS };
  }
  run.cond({
    type: healthType,
    status: "True",
    reason: "Established",
    message: `${targetLabel} is Established`,
  });

  // 7. server ready?
  const server = await deps.getServer(serverName);
  if (server === undefined) {
    throw new Error(`ConversionWebhookServer ${JSON.stringify(serverName)} not found`);
  }
  if (!isServerReady(server)) {
    const message = `ConversionWebhookServer ${
      JSON.stringify(serverName)
    } is not ready (needs readyReplicas > 0 and Available, CertificateReady, ServiceReady)`;
    run.cond({ type: "WebhookServerReady", status: "False", reason: "ServerNotReady", message });
    run.waitOn("ServerNotReady", message);
    await run.patch();
    return { requeueAfter: REQUEUE_WAITING_MS };
  }
  run.cond({
    type: "WebhookServerReady",
    status: "True",
    reason: "ServerReady",
    message: `ConversionWebhookServer ${JSON.stringify(serverName)} is ready`,
  });

  // 8. [P15] handover gate (§5)
  if (move) {
    const leases = await deps.listServedLeases(
      serverName,
      serverNamespace(server, deps.operatorNamespace),
    );
    const now = deps.now();
    const verdict = handoverVerdict({
      target: run.target,
      server: serverName,
      readyReplicas: server.status?.readyReplicas ?? 0,
      leases: aggregateServedTargets(leases, now),
      // As read at reconcile start: its transition time measures how long the gate is closed.
      condition: config.status?.conditions?.find((c) => c.type === "HandoverReady"),
      now,
    });
    run.cond({
      type: "HandoverReady",
      status: verdict.status,
      reason: verdict.reason,
      message: verdict.message,
    });
    if (!verdict.proceed) {
      run.waitOn(verdict.reason, verdict.message);
      await run.patch();
      return { requeueAfter: HANDOVER_REQUEUE_MS };
    }
    deps.log?.("handover approved", {
      target: run.target,
      server: serverName,
      verdict: verdict.reason,
    });
  }

  // 9. CA bundle
  const namespace = serverNamespace(server, deps.operatorNamespace);
  const pem = await deps.readCABundle(serverName, namespace);
  if (pem === undefined || pem === "") {
    throw new Error(
      `no CA bundle in Secret ${namespace}/${serverName}-webhook-server-tls (ca.crt or tls.crt)`,
    );
  }
  const caBundle = btoa(String.fromCharCode(...new TextEncoder().encode(pem)));

  // 10. apply
  const port = server.spec.service?.port ?? 443;
  const patch = buildConversionPatch({
    targetKind: run.targetKind,
    targetName: run.target,
    liveTarget: target,
    configName: run.name,
    planHash: status.schemaHash,
    serverName,
    serverNamespace: namespace,
    servicePort: port,
    caBundle,
    conversionReviewVersions: config.spec.conversionReviewVersions,
  });
  const started = deps.now();
  try {
    await deps.applyTarget(patch);
  } catch (e) {
    deps.metrics?.applyDuration?.("error", (deps.now() - started) / 1000);
    throw e;
  }
  deps.metrics?.applyDuration?.("success", (deps.now() - started) / 1000);

  // 11. Applied
  run.phase("Applied", "Applied");
  status.webhookPath = webhookPath(run.target);
  status.webhookURL = webhookURL(serverName, namespace, run.target);
  if (run.targetKind === "XRD") status.webhookPort = port;
  status.lastAppliedPlanHash = status.schemaHash;
  const appliedMessage = `conversion of ${targetLabel} served by ${status.webhookURL}`;
  run.cond({ type: "Applied", status: "True", reason: "Applied", message: appliedMessage });
  run.dropCond("Stale");
  status.message = appliedMessage;

  // 12. [P11] XRD: re-read the XRD (the copy in hand on error) and verify propagation (§4.6).
  if (run.targetKind === "XRD") {
    let xrd = target;
    try {
      xrd = await deps.getTarget("XRD", run.target) ?? target;
    } catch {
      // fall back to the copy in hand
    }
    const propagated = await verifyPropagation(run, xrd, {
      serviceName: webhookServiceName(serverName),
      serviceNamespace: namespace,
      path: webhookPath(run.target),
      port,
      conversionReviewVersions: reviewVersionsOf(config.spec.conversionReviewVersions),
      caBundleHash: await sha256Hex(new TextEncoder().encode(pem)),
    });
    await run.patch();
    return { requeueAfter: propagated ? REQUEUE_APPLIED_MS : REQUEUE_WAITING_MS };
  }
  await run.patch();
  return { requeueAfter: REQUEUE_APPLIED_MS };
}

/** `spec.conversionReviewVersions` as applied (absent or empty ⇒ `["v1"]`, runtime §4.4). */
function reviewVersionsOf(v: readonly string[] | undefined): string[] {
  return v !== undefined && v.length > 0 ? [...v] : ["v1"];
}

/**
 * [P11] Step 1 for XRD configs: `PackageManaged` from the XRD in hand, then the out-of-band
 * revert check (runtime §4.7). Returns the target to continue with: the live copy when the
 * revert was confirmed against the apiserver, else the one given.
 */
async function xrdPreGate(run: Run, target: JsonObject): Promise<JsonObject> {
  const label = `XRD ${JSON.stringify(run.target)}`;
  const owner = packageRevisionOwner(target);
  if (owner !== undefined) {
    run.cond({
      type: "PackageManaged",
      status: "True",
      reason: "OwnedByPackageRevision",
      message: `${label} is owned by the Crossplane package revision ${owner.kind} ${
        JSON.stringify(owner.name)
      }; its revision syncs may drop spec.conversion (dco re-applies it)`,
    });
  } else {
    run.cond({
      type: "PackageManaged",
      status: "False",
      reason: "NotPackageManaged",
      message: `${label} has no Crossplane package revision owner`,
    });
  }
  const orig = run.config.status;
  const applied = orig?.conditions?.find((c) => c.type === "Applied");
  if ((orig?.lastAppliedPlanHash ?? "") === "" || applied?.status !== "True") return target;
  if (isOurConversion(target, run.name)) return target;
  // The cache may not have seen this controller's own last apply yet: confirm against the
  // apiserver before counting (a read error keeps the cached verdict).
  let live = target;
  if (run.deps.getTargetLive !== undefined) {
    try {
      const got = await run.deps.getTargetLive("XRD", run.target);
      if (got === undefined) return target; // gone: step 1 of the next reconcile reports it
      live = got;
    } catch {
      // keep the cached verdict
    }
    if (isOurConversion(live, run.name)) return live;
  }
  run.deps.metrics?.conversionRevert?.({ configKind: run.kindLabel, target: run.target });
  const spec = isObject(live.spec) ? live.spec : {};
  const conversion = isObject(spec.conversion) ? spec.conversion : {};
  run.deps.log?.(
    "the conversion stanza this config applied is gone from the XRD (out-of-band revert); " +
      "it will be re-applied",
    {
      config: run.name,
      xrd: run.target,
      strategy: typeof conversion.strategy === "string" ? conversion.strategy : "",
      packageManaged: owner !== undefined,
    },
  );
  return live;
}

/**
 * [P11] runtime.md §4.6: reads every CRD Crossplane generates from the XRD, compares it with what
 * was applied, rewrites `status.generatedCRDs` and `ConversionPropagated`, and records the
 * metrics. Returns whether the condition is True. Never gates the phase.
 */
async function verifyPropagation(
  run: Run,
  xrd: JsonObject,
  expected: AppliedConversion,
): Promise<boolean> {
  const { deps, status } = run;
  const label = `XRD ${JSON.stringify(run.target)}`;
  const wasPropagated =
    run.config.status?.conditions?.some((c) =>
      c.type === "ConversionPropagated" && c.status === "True"
    ) ?? false;
  const finish = (reason: PropagationReason, message: string): boolean => {
    const ok = reason === "Propagated";
    run.cond({ type: "ConversionPropagated", status: ok ? "True" : "False", reason, message });
    if (ok && !wasPropagated) {
      const appliedCond = status.conditions?.find((c) => c.type === "Applied");
      const since = Date.parse(appliedCond?.lastTransitionTime ?? "");
      const lag = (deps.now() - since) / 1000;
      if (appliedCond?.status === "True" && Number.isFinite(lag) && lag >= 0) {
        deps.metrics?.propagationLag?.(run.target, lag);
      }
    }
    deps.metrics?.conversionPropagated?.(run.target, ok);
    return ok;
  };
  let generated;
  try {
    generated = generatedCRDNames(xrd);
  } catch (e) {
    status.generatedCRDs = [];
    return finish(
      "NotPropagated",
      `cannot determine the CRDs generated from ${label}: ${
        e instanceof Error ? e.message : String(e)
      }`,
    );
  }
  const observedAt = new Date(deps.now()).toISOString().replace(/\.\d+Z$/, "Z");
  const entries: GeneratedCRDStatus[] = [];
  const by: Record<GeneratedCRDVerdict["state"], { name: string; message: string }[]> = {
    propagated: [],
    notFound: [],
    mismatch: [],
    stale: [],
  };
  for (const g of generated) {
    let crd: JsonObject | Error | undefined;
    try {
      if (deps.getGeneratedCRD === undefined) throw new Error("no generated-CRD reader");
      crd = await deps.getGeneratedCRD(g.name);
    } catch (e) {
      crd = e instanceof Error ? e : new Error(String(e));
    }
    const v = await verifyGeneratedCRD(crd, expected);
    by[v.state].push({ name: g.name, message: v.message });
    entries.push({
      name: g.name,
      role: g.role,
      propagated: v.state === "propagated",
      observedCABundleHash: v.observedCABundleHash,
      observedAt,
      message: v.message,
    });
  }
  status.generatedCRDs = entries;
  const names = (xs: { name: string }[]) => xs.map((x) => x.name).join(", ");
  if (by.notFound.length > 0) {
    return finish(
      "GeneratedCRDNotFound",
      `generated CRD ${
        names(by.notFound)
      } of ${label} not found (Crossplane has not rendered it yet)`,
    );
  }
  if (by.mismatch.length > 0) {
    return finish(
      "NotPropagated",
      `generated CRD ${names(by.mismatch)} of ${label} does not carry the applied conversion: ${
        by.mismatch[0].name
      }: ${by.mismatch[0].message}`,
    );
  }
  if (by.stale.length > 0) {
    return finish(
      "CABundleStale",
      `generated CRD ${names(by.stale)} of ${label} carries a stale caBundle: ${
        by.stale[0].name
      }: ${by.stale[0].message}`,
    );
  }
  return finish(
    "Propagated",
    `the conversion of ${label} reached its generated CRD ${names(by.propagated)}`,
  );
}

async function invalidConfig(run: Run, message: string): Promise<ReconcileResult> {
  run.analyzeFailure("InvalidConfig");
  run.setInvalid(message, "InvalidConfig");
  await run.patch();
  return {};
}

/** runtime.md §4.3: a validation failure under the config's drift policy. */
async function driftPolicy(
  run: Run,
  target: JsonObject,
  message: string,
): Promise<ReconcileResult> {
  const { config, status } = run;
  const applied = status.conditions?.find((c) => c.type === "Applied");
  const revertNeeded = config.spec.driftPolicy === "FailClosed" &&
    (run.origPhase === "Applied" ||
      (run.origPhase === "Failed" && applied?.status === "False" &&
        applied.reason === "RevertFailed"));
  if (revertNeeded) {
    try {
      await run.deps.applyTarget(buildRevertPatch(run.targetKind, run.target, target));
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      const failed = `${message}; FailClosed revert of ${run.targetKind} ${
        JSON.stringify(run.target)
      } failed (will retry): ${why}`;
      run.phase("Failed", "RevertFailed");
      run.cond({ type: "Applied", status: "False", reason: "RevertFailed", message: failed });
      status.message = failed;
      await run.patch();
      throw e;
    }
    const reverted = `${message}; FailClosed: conversion of ${run.targetKind} ${
      JSON.stringify(run.target)
    } reverted to strategy None`;
    run.phase("Failed", "Reverted");
    run.dropCond("Stale");
    run.cond({ type: "Applied", status: "False", reason: "Reverted", message: reverted });
    status.message = reverted;
  } else if (run.wasApplied) {
    run.phase("Stale", "SchemaDrift");
    run.cond({ type: "Stale", status: "True", reason: "SchemaDrift", message });
    status.message = `${message}; the previously applied conversion keeps serving`;
  } else {
    run.phase("Invalid", "ValidationFailed");
    run.dropCond("Stale");
    status.message = message;
  }
  await run.patch();
  return {};
}

/** runtime.md §4.5: revert the target before the finalizer goes; held while > 1 version served. */
async function reconcileDelete(
  kind: ConfigKind,
  config: ConversionConfig,
  deps: ConfigReconcileDeps,
): Promise<ReconcileResult> {
  const finalizer = kind === XRD_CONFIG_KIND ? XRD_CONFIG_FINALIZER : CRD_CONFIG_FINALIZER;
  const finalizers = config.metadata?.finalizers ?? [];
  if (!finalizers.includes(finalizer)) return {};
  const release = async () => {
    await deps.updateFinalizers(config, finalizers.filter((f) => f !== finalizer));
    return {};
  };
  const run = new Run(kind, config, deps);
  if (!run.wasApplied) return await release();
  const target = await deps.getTarget(run.targetKind, run.target);
  if (target === undefined) return await release();
  const served = servedVersionCount(target);
  const breakGlass = config.metadata?.annotations?.[ALLOW_UNSAFE_DELETE_ANNOTATION] === "true";
  if (served > 1 && !breakGlass) {
    const message =
      `delete held: ${run.targetKind} ${
        JSON.stringify(run.target)
      } serves ${served} versions; reverting its conversion would break reads of stored objects. ` +
      `Remove the extra served versions, or set the annotation ` +
      `${ALLOW_UNSAFE_DELETE_ANNOTATION}: "true" on this config to revert anyway`;
    run.cond({
      type: "DeletionBlocked",
      status: "True",
      reason: "MultipleServedVersions",
      message,
    });
    run.status.message = message;
    await run.patch();
    return { requeueAfter: REQUEUE_DELETE_BLOCKED_MS };
  }
  await deps.applyTarget(buildRevertPatch(run.targetKind, run.target, target));
  return await release();
}
