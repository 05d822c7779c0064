/**
 * The Events a config's status patch implies (docs/design/config-reconcile.md#events), with the
 * reasons its conditions already use: the readiness outcome when it changes (a phase transition, a
 * revert, an invalid config; again on every new generation that is not Ready), and a held revert,
 * a blocked delete or a handover verdict when that condition changes. Deduplication is the
 * recorder's (series), so an outcome repeated on every requeue stays one Event.
 */
import type { ObjectEvent } from "../../kube/events.ts";
import type { Readiness } from "../../kube/kstatus.ts";
import { findCondition, type StatusCondition } from "../../kube/status.ts";
import type { ConfigStatus } from "./types.ts";

/** One Event on the config. */
export type ConfigEvent = ObjectEvent;

/** The action of a readiness outcome, by the phase written. */
const ACTION_OF_PHASE: Record<string, string> = {
  Applied: "Apply",
  Failed: "Revert",
  Invalid: "Validate",
  Stale: "Validate",
  Pending: "Wait",
};

/** Handover verdicts that are Warnings (went ahead unproven, or cannot tell). */
const WARNING_HANDOVER = new Set(["HandoverUnverified", "HandoverUnknown"]);

function changed(
  before: readonly StatusCondition[] | undefined,
  after: readonly StatusCondition[] | undefined,
  type: string,
): StatusCondition | undefined {
  const a = findCondition(after, type);
  if (a === undefined) return undefined;
  const b = findCondition(before, type);
  return b?.status === a.status && b.reason === a.reason ? undefined : a;
}

/**
 * The Events of one status patch: `before` as read (with its `observedGeneration`), `after` as
 * written for `generation`, `readiness` the summary written with it.
 */
export function configEvents(
  before: ConfigStatus,
  after: ConfigStatus,
  generation: number,
  readiness: Readiness,
): ConfigEvent[] {
  const events: ConfigEvent[] = [];
  const ready = findCondition(before.conditions, "Ready");
  const outcomeChanged = before.phase !== after.phase || ready === undefined ||
    ready.reason !== readiness.reason ||
    (ready.status === "True") !== (readiness.state === "Ready");
  const newGeneration = before.observedGeneration !== generation && readiness.state !== "Ready";
  if (outcomeChanged || newGeneration) {
    events.push({
      type: readiness.state === "Stalled" ? "Warning" : "Normal",
      reason: readiness.reason,
      action: ACTION_OF_PHASE[after.phase ?? ""] ?? "Reconcile",
      note: readiness.message,
    });
  }
  const held = changed(before.conditions, after.conditions, "RevertBlocked");
  if (held?.status === "True") {
    events.push({ type: "Warning", reason: held.reason, action: "Revert", note: held.message });
  }
  const blocked = changed(before.conditions, after.conditions, "DeletionBlocked");
  if (blocked?.status === "True") {
    events.push({
      type: "Warning",
      reason: blocked.reason,
      action: "Delete",
      note: blocked.message,
    });
  }
  const handover = changed(before.conditions, after.conditions, "HandoverReady");
  if (handover !== undefined) {
    events.push({
      type: WARNING_HANDOVER.has(handover.reason) ? "Warning" : "Normal",
      reason: handover.reason,
      action: "Handover",
      note: handover.message,
    });
  }
  return events;
}
