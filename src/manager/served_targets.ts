/**
 * Aggregation of the served-target Leases of one ConversionWebhookServer instance, for its
 * `status.servedTargets`/`status.reportingReplicas` and the handover gate. Pure: the caller lists the
 * instance's Leases (label `conversion.terasky.com/webhook-server=<cws>`) and passes its clock.
 *
 * A Lease is *live* when `spec.renewTime` is set and parseable, `now − renewTime ≤ 90 s`, and
 * `renewTime ≤ now + 5 min` (a wedged replica with a future timestamp must not stay live until
 * the clock catches up). Every live Lease counts in `reportingReplicas`. A live Lease whose
 * report is truncated or undecodable makes the aggregate `unreadable` and `servedTargets` empty:
 * a partial intersection must never read as a complete one. Otherwise `servedTargets` is the
 * sorted intersection of every live report (a target two of three replicas serve fails one
 * request in three, so it is not served). No live Lease ⇒ empty, not unreadable.
 */
import {
  MAX_FUTURE_SKEW_MS,
  readServedReport,
  type ServedLeaseLike,
  type ServedTargetLimits,
  STALE_AFTER_MS,
} from "../api/served_lease.ts";

/** What the CWS status gets from the Leases. */
export interface ServedTargetsAggregate {
  /** Sorted intersection over live reports; empty when unreadable or no live report. */
  readonly servedTargets: string[];
  /** Live Leases, unreadable ones included. */
  readonly reportingReplicas: number;
  /** Some live report was truncated or could not be decoded. */
  readonly unreadable: boolean;
}

/** Whether a Lease was renewed within the staleness bound and not beyond the future bound. */
export function isLeaseLive(lease: ServedLeaseLike, now: number | Date): boolean {
  const renew = lease.spec?.renewTime;
  if (!renew) return false;
  const at = Date.parse(renew);
  if (Number.isNaN(at)) return false;
  const t = typeof now === "number" ? now : now.getTime();
  return t - at <= STALE_AFTER_MS && at <= t + MAX_FUTURE_SKEW_MS;
}

/** Aggregates an instance's Leases at time `now` (see the module documentation). */
export function aggregateServedTargets(
  leases: readonly ServedLeaseLike[],
  now: number | Date,
  limits: ServedTargetLimits = {},
): ServedTargetsAggregate {
  let reportingReplicas = 0;
  let unreadable = false;
  let common: Set<string> | undefined;
  for (const lease of leases) {
    if (!isLeaseLive(lease, now)) continue;
    reportingReplicas++;
    if (unreadable) continue;
    const report = readServedReport(lease, limits);
    if (!report.ok) {
      unreadable = true;
      continue;
    }
    if (common === undefined) {
      common = new Set(report.targets);
    } else {
      const mine = new Set(report.targets);
      for (const t of common) if (!mine.has(t)) common.delete(t);
    }
  }
  const servedTargets = unreadable || common === undefined
    ? []
    : [...common].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { servedTargets, reportingReplicas, unreadable };
}
