/**
 * A config's `Ready` / `Reconciling` / `Stalled` from its phase and conditions
 * (docs/design/config-reconcile.md#ready-reconciling-stalled): Ready once the conversion of the
 * current generation is applied; Reconciling while a gate waits for something that will happen
 * by itself; Stalled while it needs a change (an invalid config, a drifted schema, a revert).
 */
import type { Readiness } from "../../kube/kstatus.ts";
import { findCondition } from "../../kube/status.ts";
import type { ConfigStatus } from "./types.ts";

/** `Stale` reasons that say the config itself needs a change (the others are gate waits). */
const STALE_NEEDS_CHANGE = new Set(["PostApplyInvalid", "SchemaDrift"]);

/**
 * The readiness `status` implies. `waitReason` is the reason of the gate this reconcile waits on
 * (a `Pending` config records it nowhere else); `Pending` without one reads as `Pending`.
 */
export function configReadiness(status: ConfigStatus, waitReason?: string): Readiness {
  const message = status.message ?? "";
  const cond = (type: string) => findCondition(status.conditions, type);
  switch (status.phase) {
    case "Applied":
      return {
        state: "Ready",
        reason: "Applied",
        message: cond("Applied")?.message ?? message,
      };
    case "Invalid":
      return { state: "Stalled", reason: cond("Validated")?.reason ?? "Invalid", message };
    case "Failed":
      return { state: "Stalled", reason: cond("Applied")?.reason ?? "Failed", message };
    case "Stale": {
      const reason = cond("Stale")?.reason ?? "Stale";
      const state = STALE_NEEDS_CHANGE.has(reason) ? "Stalled" : "Reconciling";
      return { state, reason, message };
    }
    case "Pending":
      return { state: "Reconciling", reason: waitReason ?? "Pending", message };
    default:
      return { state: "Reconciling", reason: status.phase ?? "Reconciling", message };
  }
}
