/**
 * Aggregation of served-target Leases with a fixed clock: the
 * intersection over live reports, the 90 s liveness bound and the 5-minute future-skew bound
 * (both inclusive at the edge), and truncated/undecodable reports making the aggregate
 * unreadable while still counting as reporting replicas.
 */
import assert from "node:assert/strict";
import {
  encodeServedTargets,
  SERVED_TARGETS_ANNOTATION,
  SERVED_TARGETS_TRUNCATED_ANNOTATION,
  type ServedLeaseLike,
} from "../../src/api/served_lease.ts";
import { aggregateServedTargets, isLeaseLive } from "../../src/manager/served_targets.ts";

const NOW = Date.parse("2026-01-02T03:04:05.000Z");
const micro = (ms: number) => new Date(ms).toISOString().replace(/Z$/, "000Z");

function lease(
  targets: string[] | { raw: string } | "truncated",
  renewedAgoMs = 0,
): ServedLeaseLike {
  const annotations: Record<string, string> = targets === "truncated"
    ? { [SERVED_TARGETS_TRUNCATED_ANNOTATION]: "true" }
    : {
      [SERVED_TARGETS_ANNOTATION]: Array.isArray(targets)
        ? encodeServedTargets(targets)
        : targets.raw,
    };
  return { metadata: { annotations }, spec: { renewTime: micro(NOW - renewedAgoMs) } };
}

Deno.test("intersection over live reports, sorted", () => {
  const r = aggregateServedTargets([
    lease(["c", "a", "b"]),
    lease(["b", "c", "d"], 10_000),
    lease(["c", "b"], 89_000),
  ], NOW);
  assert.deepEqual(r, { servedTargets: ["b", "c"], reportingReplicas: 3, unreadable: false });
  // One replica lacking everything empties the intersection.
  assert.deepEqual(aggregateServedTargets([lease(["a"]), lease([])], NOW), {
    servedTargets: [],
    reportingReplicas: 2,
    unreadable: false,
  });
  // Accepts a Date for now.
  assert.deepEqual(aggregateServedTargets([lease(["a"])], new Date(NOW)).servedTargets, ["a"]);
});

Deno.test("no live Lease: empty, zero replicas, not unreadable", () => {
  assert.deepEqual(aggregateServedTargets([], NOW), {
    servedTargets: [],
    reportingReplicas: 0,
    unreadable: false,
  });
  assert.deepEqual(aggregateServedTargets([lease(["a"], 91_000)], NOW), {
    servedTargets: [],
    reportingReplicas: 0,
    unreadable: false,
  });
});

Deno.test("liveness: renewed 90 s ago is live, 90 s + 1 ms is stale", () => {
  assert.equal(isLeaseLive(lease(["a"], 90_000), NOW), true);
  assert.equal(isLeaseLive(lease(["a"], 90_001), NOW), false);
  // A stale replica's report does not narrow the intersection.
  const r = aggregateServedTargets([lease(["a", "b"]), lease(["a"], 90_001)], NOW);
  assert.deepEqual(r, { servedTargets: ["a", "b"], reportingReplicas: 1, unreadable: false });
});

Deno.test("future skew: up to 5 min ahead is live, beyond is not", () => {
  assert.equal(isLeaseLive(lease(["a"], -300_000), NOW), true);
  assert.equal(isLeaseLive(lease(["a"], -300_001), NOW), false);
  const r = aggregateServedTargets([lease(["a", "b"]), lease(["b"], -3_600_000)], NOW);
  assert.deepEqual(r, { servedTargets: ["a", "b"], reportingReplicas: 1, unreadable: false });
});

Deno.test("no or unparseable renewTime is not live", () => {
  assert.equal(isLeaseLive({ metadata: {} }, NOW), false);
  assert.equal(isLeaseLive({ metadata: {}, spec: { renewTime: null } }, NOW), false);
  assert.equal(isLeaseLive({ metadata: {}, spec: { renewTime: "yesterday" } }, NOW), false);
});

Deno.test("truncated or undecodable live report ⇒ unreadable, empty, still counted", () => {
  for (const bad of [lease("truncated"), lease({ raw: "!!garbage!!" })]) {
    assert.deepEqual(aggregateServedTargets([lease(["a"]), bad, lease(["a"])], NOW), {
      servedTargets: [],
      reportingReplicas: 3,
      unreadable: true,
    });
  }
  // A stale bad report is ignored entirely.
  assert.deepEqual(aggregateServedTargets([lease(["a"]), lease("truncated", 100_000)], NOW), {
    servedTargets: ["a"],
    reportingReplicas: 1,
    unreadable: false,
  });
});
