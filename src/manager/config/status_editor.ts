/**
 * The status editor of one reconcile: the config as read, a typed working copy of its status,
 * and the edits the reconcile makes to it — conditions, the phase (counting real transitions),
 * the two "not now" outcomes (`setInvalid`, `waitOn`) and the final `/status` patch (which adds
 * the `Ready` summary, ./readiness.ts).
 * Phases and their rules: docs/design/config-reconcile.md#phases.
 */
import {
  CONFIG_PHASES,
  type ConfigKind,
  type ConversionConfig,
  type ConversionConfigStatus,
  targetNameOf,
  XRD_CONFIG_KIND,
} from "../../api/mod.ts";
import {
  type ConditionInput,
  removeCondition,
  setCondition,
  type StatusCondition,
} from "../../kube/status.ts";
import { withReadiness } from "../../kube/kstatus.ts";
import type { TargetKind } from "../conversion_patch.ts";
import { configEvents } from "./events.ts";
import { configReadiness } from "./readiness.ts";
import type {
  AnalyzeFailureReason,
  ConfigKindLabel,
  ConfigPhase,
  ConfigReconcileDeps,
  ConfigStatus,
} from "./types.ts";

/** The loose, as-read status as the typed working copy (unknown condition shapes dropped). */
export function workingStatus(
  raw: ConversionConfigStatus | ConfigStatus | undefined,
): ConfigStatus {
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

/** One reconcile's config, its working status and the edits made to it. */
export class StatusEditor {
  readonly status: ConfigStatus;
  /** The phase as read ("" when none). */
  readonly origPhase: string;
  /** Applied or Stale as read: a conversion this config applied is serving. */
  readonly wasApplied: boolean;
  readonly targetKind: TargetKind;
  readonly kindLabel: ConfigKindLabel;
  readonly target: string;
  readonly generation: number;
  /** The reason of the gate this reconcile waits on ({@link waitOn}), for `Ready`. */
  private waitReason?: string;
  /** The status as stored: as read, then as last written by {@link patch}. */
  private written: ConversionConfigStatus | ConfigStatus | undefined;

  constructor(
    readonly kind: ConfigKind,
    readonly config: ConversionConfig,
    readonly deps: ConfigReconcileDeps,
  ) {
    this.status = workingStatus(config.status);
    this.written = config.status;
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

  /** `CRD "name"` or `XRD "name"`, for messages. */
  get targetLabel(): string {
    return `${this.targetKind} ${JSON.stringify(this.target)}`;
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

  /** The config cannot be used: `Invalid`, or `Stale/PostApplyInvalid` once it was applied. */
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

  /** A gate waits: `Pending`, or `Stale(reason)` once applied (gate waits: no transition metric). */
  waitOn(reason: string, message: string): void {
    this.waitReason = reason;
    if (this.wasApplied) {
      this.phase("Stale");
      this.cond({ type: "Stale", status: "True", reason, message });
    } else {
      this.phase("Pending");
      this.dropCond("Stale");
    }
    this.status.message = message;
  }

  /**
   * Writes the status, with `Ready`/`Reconciling`/`Stalled` derived from it, then records the
   * Events the change implies.
   */
  async patch(): Promise<void> {
    // A reconcile may write twice (a revert marks the status before it reverts): each patch and
    // its Events are computed from what the previous one stored.
    const before = workingStatus(this.written);
    const readiness = configReadiness(this.status, this.waitReason);
    this.status.observedGeneration = this.generation;
    this.status.conditions = withReadiness(
      this.status.conditions,
      readiness,
      this.generation,
      this.deps.now(),
    );
    await this.deps.patchStatus(this.kind, this.name, this.written, this.status);
    this.written = structuredClone(this.status);
    const record = this.deps.event;
    if (record === undefined) return;
    for (const e of configEvents(before, this.status, this.generation, readiness)) {
      record(this.config, e);
    }
  }

  analyzeFailure(reason: AnalyzeFailureReason): void {
    this.deps.metrics?.analyzeFailure?.({
      configKind: this.kindLabel,
      target: this.target,
      reason,
    });
  }
}
