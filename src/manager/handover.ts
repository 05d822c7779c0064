/**
 * The handover gate's verdict: may a config whose target moves to another
 * ConversionWebhookServer be repointed now? Pure: the caller passes the destination's ready
 * replica count, the aggregate of its live served-target Leases and the clock. The table is
 * evaluated in order, first match wins; the grace period only ever turns "nobody has spoken"
 * into "proceed, unverified" — it never overrides an explicit "no".
 */
import type { ServedTargetsAggregate } from "./served_targets.ts";

/** `UnreportedGracePeriod`: silence becomes "proceed, unverified" after this long. */
export const UNREPORTED_GRACE_PERIOD_MS = 30_000;

/** Requeue while blocked. */
export const HANDOVER_REQUEUE_MS = 5_000;

export type HandoverReason =
  | "HandoverReady"
  | "HandoverUnverified"
  | "HandoverPending"
  | "HandoverAwaitingReports"
  | "HandoverUnknown";

export interface HandoverVerdict {
  proceed: boolean;
  /** The `HandoverReady` condition's status. */
  status: "True" | "False";
  reason: HandoverReason;
  message: string;
}

export interface HandoverInput {
  target: string;
  /** The destination ConversionWebhookServer. */
  server: string;
  readyReplicas: number;
  leases: ServedTargetsAggregate;
  /**
   * The `HandoverReady` condition as read at reconcile start: *blocked for* is measured from
   * its `lastTransitionTime` while it is False (0 when absent or True).
   */
  condition?: { status: string; lastTransitionTime?: string };
  now: number;
}

/** How long the gate has been closed (the "Blocked for" of its message). */
export function blockedForMs(
  condition: HandoverInput["condition"],
  now: number,
): number {
  if (condition === undefined || condition.status !== "False") return 0;
  const since = Date.parse(condition.lastTransitionTime ?? "");
  return Number.isNaN(since) ? 0 : Math.max(0, now - since);
}

export function handoverVerdict(input: HandoverInput): HandoverVerdict {
  const { target, server, readyReplicas, leases } = input;
  const block = (reason: HandoverReason, message: string): HandoverVerdict => ({
    proceed: false,
    status: "False",
    reason,
    message,
  });
  const dest = `ConversionWebhookServer ${JSON.stringify(server)}`;
  if (readyReplicas <= 0) {
    return block("HandoverPending", `waiting for ${dest} to have a ready replica`);
  }
  if (leases.reportingReplicas === 0) {
    const waited = blockedForMs(input.condition, input.now);
    if (waited < UNREPORTED_GRACE_PERIOD_MS) {
      return block(
        "HandoverAwaitingReports",
        `waiting for the replicas of ${dest} to report the targets they serve ` +
          `(${Math.floor(waited / 1000)}s of ${UNREPORTED_GRACE_PERIOD_MS / 1000}s)`,
      );
    }
    return {
      proceed: true,
      status: "True",
      reason: "HandoverUnverified",
      message: `no replica of ${dest} reported its served targets within ` +
        `${UNREPORTED_GRACE_PERIOD_MS / 1000}s; repointed without verification ` +
        "(pre-sharding behaviour): check that the replicas can publish their Leases",
    };
  }
  if (leases.unreadable) {
    return block(
      "HandoverUnknown",
      `a served-target report of ${dest} is truncated or unreadable; cannot tell whether ` +
        `it serves ${target}`,
    );
  }
  if (leases.reportingReplicas < readyReplicas) {
    return block(
      "HandoverPending",
      `${leases.reportingReplicas} of ${readyReplicas} ready replicas of ${dest} have reported`,
    );
  }
  if (!leases.servedTargets.includes(target)) {
    return block(
      "HandoverPending",
      `not every ready replica of ${dest} serves ${target} yet`,
    );
  }
  return {
    proceed: true,
    status: "True",
    reason: "HandoverReady",
    message: `all ${leases.reportingReplicas} reporting replicas of ${dest} serve ${target}`,
  };
}
