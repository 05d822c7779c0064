/** The handover gate's verdict table, row by row, with a fixed clock. */
import assert from "node:assert/strict";
import {
  blockedForMs,
  type HandoverInput,
  handoverVerdict,
  UNREPORTED_GRACE_PERIOD_MS,
} from "../../src/manager/handover.ts";

const NOW = Date.parse("2026-11-29T12:00:00Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();

function input(over: Partial<HandoverInput> = {}): HandoverInput {
  return {
    target: "widgets.example.com",
    server: "blue",
    readyReplicas: 2,
    leases: { servedTargets: ["widgets.example.com"], reportingReplicas: 2, unreadable: false },
    now: NOW,
    ...over,
  };
}

const silent = { servedTargets: [], reportingReplicas: 0, unreadable: false };

Deno.test("row 1: no ready replica never approves, however long it waited", () => {
  for (const waited of [0, UNREPORTED_GRACE_PERIOD_MS * 10]) {
    const v = handoverVerdict(input({
      readyReplicas: 0,
      leases: silent,
      condition: { status: "False", lastTransitionTime: ago(waited) },
    }));
    assert.deepEqual([v.proceed, v.status, v.reason], [false, "False", "HandoverPending"]);
  }
});

Deno.test("row 2: silence blocks for less than the grace period", () => {
  for (
    const condition of [
      undefined,
      { status: "True", lastTransitionTime: ago(60_000) }, // True ⇒ blocked for 0
      { status: "False", lastTransitionTime: ago(UNREPORTED_GRACE_PERIOD_MS - 1) },
    ]
  ) {
    const v = handoverVerdict(input({ leases: silent, condition }));
    assert.deepEqual([v.proceed, v.reason], [false, "HandoverAwaitingReports"], String(condition));
  }
});

Deno.test("row 3: silence for the grace period proceeds, unverified", () => {
  const v = handoverVerdict(input({
    leases: silent,
    condition: { status: "False", lastTransitionTime: ago(UNREPORTED_GRACE_PERIOD_MS) },
  }));
  assert.deepEqual([v.proceed, v.status, v.reason], [true, "True", "HandoverUnverified"]);
  assert.match(v.message, /without verification/);
});

Deno.test("row 4: an unreadable report blocks however long it waited", () => {
  const v = handoverVerdict(input({
    leases: { servedTargets: [], reportingReplicas: 2, unreadable: true },
    condition: { status: "False", lastTransitionTime: ago(3_600_000) },
  }));
  assert.deepEqual([v.proceed, v.reason], [false, "HandoverUnknown"]);
});

Deno.test("row 5: a ready replica that has not reported blocks", () => {
  const v = handoverVerdict(input({
    readyReplicas: 3,
    condition: { status: "False", lastTransitionTime: ago(3_600_000) },
  }));
  assert.deepEqual([v.proceed, v.reason], [false, "HandoverPending"]);
  assert.match(v.message, /2 of 3 ready replicas/);
});

Deno.test("row 6: a report lacking the target blocks however long it waited", () => {
  const v = handoverVerdict(input({
    leases: { servedTargets: ["other.example.com"], reportingReplicas: 2, unreadable: false },
    condition: { status: "False", lastTransitionTime: ago(3_600_000) },
  }));
  assert.deepEqual([v.proceed, v.reason], [false, "HandoverPending"]);
});

Deno.test("row 7: every reporting replica serves the target: proceed, verified", () => {
  const v = handoverVerdict(input());
  assert.deepEqual([v.proceed, v.status, v.reason], [true, "True", "HandoverReady"]);
  // More reports than ready replicas (a replica just went unready) is still verified.
  assert.equal(handoverVerdict(input({ readyReplicas: 1 })).reason, "HandoverReady");
});

Deno.test("order: silence is judged on the Lease count before any payload", () => {
  // No live Lease but "unreadable" cannot happen from the aggregate; the count decides first.
  const v = handoverVerdict(input({
    leases: { servedTargets: [], reportingReplicas: 0, unreadable: true },
  }));
  assert.equal(v.reason, "HandoverAwaitingReports");
});

Deno.test("blocked-for is measured from the False condition's transition time only", () => {
  assert.equal(blockedForMs(undefined, NOW), 0);
  assert.equal(blockedForMs({ status: "True", lastTransitionTime: ago(5000) }, NOW), 0);
  assert.equal(blockedForMs({ status: "False", lastTransitionTime: ago(5000) }, NOW), 5000);
  assert.equal(blockedForMs({ status: "False", lastTransitionTime: "garbage" }, NOW), 0);
  assert.equal(blockedForMs({ status: "False", lastTransitionTime: ago(-5000) }, NOW), 0);
});
