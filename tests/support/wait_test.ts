import assert from "node:assert/strict";
import { assertStays, WaitAbort, waitFor } from "./wait.ts";

Deno.test("assertStays: passes when the condition holds throughout, looking repeatedly", async () => {
  let looks = 0;
  const started = Date.now();
  await assertStays(() => {
    looks++;
  }, { forMs: 300, everyMs: 20 });
  assert.ok(Date.now() - started >= 300, "it waits the whole period");
  assert.ok(looks >= 3, `looked ${looks} times`);
});

Deno.test("assertStays: fails as soon as the condition is violated, with its message", async () => {
  let looks = 0;
  const started = Date.now();
  await assert.rejects(
    assertStays(() => {
      looks++;
      assert.ok(looks < 3, "still three");
    }, { forMs: 10_000, everyMs: 10, what: "the count" }),
    /the count stopped holding \(look 3\): still three/,
  );
  assert.ok(Date.now() - started < 5_000, "did not wait out the period");
  await assert.rejects(
    assertStays(() => false, { forMs: 1_000 }),
    /the condition stopped holding \(look 1\)/,
  );
});

Deno.test("waitFor: retries until a value, stops at WaitAbort, times out with the last error", async () => {
  let n = 0;
  assert.equal(await waitFor("three", () => ++n >= 3 && n, { intervalMs: 1 }), 3);
  await assert.rejects(
    waitFor("never", () => {
      throw new WaitAbort("cannot hold");
    }),
    /cannot hold/,
  );
  await assert.rejects(
    waitFor("x", () => {
      throw new Error("not yet");
    }, { timeoutMs: 30, intervalMs: 5 }),
    /timed out after 30 ms waiting for x: last error: not yet/,
  );
});
