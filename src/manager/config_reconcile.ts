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
 * Every cluster access goes through {@link ConfigReconcileDeps}, so the algorithm is unit-tested
 * without a cluster. Not yet here: [P11] XRD propagation verification / PackageManaged /
 * out-of-band revert detection (§4.6, §4.7) and the [P15] handover gate (§5): a move is applied
 * like any other apply for now (see {@link isMove}).
 */
import {
  type AnalysisResult,
  analyze,
  type Diagnostic,
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
  type TargetKind,
  webhookPath,
  webhookServiceName,
  webhookURL,
} from "./conversion_patch.ts";
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
  message?: string;
  [other: string]: unknown;
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
}

/** Everything the reconcile reads or writes; NotFound is `undefined`, other failures throw. */
export interface ConfigReconcileDeps {
  /** The config (strictly decoded), or undefined when it does not exist. */
  getConfig(kind: ConfigKind, name: string): Promise<ConversionConfig | undefined>;
  /** The target CRD (`apiextensions.k8s.io/v1`) or XRD, or undefined when NotFound. */
  getTarget(kind: TargetKind, name: string): Promise<JsonObject | undefined>;
  listServers(): Promise<ConversionWebhookServer[]>;
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
  const target = await deps.getTarget(run.targetKind, run.target);
  if (target === undefined) {
    run.setInvalid(`target ${targetLabel} not found`);
    await run.patch();
    return {};
  }
  const targetGen = targetGeneration(target);
  if (run.targetKind === "XRD") status.observedXRDGeneration = targetGen;
  else status.observedCRDGeneration = targetGen;
  // [P11] PackageManaged and out-of-band revert detection (§4.7) belong here (XRD kind only).

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
  // [P15] Computed before assignedWebhookServer moves; the handover gate (§5, step 8) is not
  // implemented yet, so a move proceeds as a plain apply.
  const _move = listed !== undefined &&
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

  // 8. [P15] handover gate (§5): not implemented; see isMove above.

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

  // 12. [P11] XRD propagation verification (§4.6) is not implemented yet.
  await run.patch();
  return { requeueAfter: REQUEUE_APPLIED_MS };
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
