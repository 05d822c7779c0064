/**
 * The coalescing window in front of a queue: a burst of adds of a key reaches the sink once, at
 * most the window after the burst's first add, however long the burst goes on.
 */
import assert from "node:assert/strict";
import { Coalescer, FakeClock } from "../../src/kube/mod.ts";

function recorder(clock: FakeClock) {
  const t0 = clock.now();
  const got: [string, number][] = [];
  return { got, sink: { add: (k: string) => got.push([k, clock.now() - t0]) } };
}

Deno.test("a burst of one key reaches the sink once, a window after its first add", () => {
  const clock = new FakeClock();
  const { got, sink } = recorder(clock);
  const c = new Coalescer(sink, 2_000, clock);
  // An add every 500 ms for 5 s: a re-arming delay would never fire during it.
  for (let t = 0; t < 5_000; t += 500) {
    c.add("a");
    clock.advance(500);
  }
  // Windows armed at 0, 2 and 4 s (the add right after each firing arms the next).
  assert.deepEqual(got, [["a", 2_000], ["a", 4_000]]);
  assert.equal(c.pending, 1, "the window armed at 4 s is still open");
  clock.advance(2_000);
  assert.deepEqual(got.at(-1), ["a", 6_000]);
  assert.equal(c.pending, 0);
});

Deno.test("keys have windows of their own; stop drops what is armed", () => {
  const clock = new FakeClock();
  const { got, sink } = recorder(clock);
  const c = new Coalescer(sink, 1_000, clock);
  c.add("a");
  clock.advance(400);
  c.add("b");
  c.add("a");
  clock.advance(600);
  assert.deepEqual(got, [["a", 1_000]]);
  c.stop();
  clock.advance(5_000);
  assert.deepEqual(got, [["a", 1_000]], "b was dropped");
  c.add("c");
  clock.advance(5_000);
  assert.equal(got.length, 1, "a stopped coalescer takes nothing");
  assert.throws(() => new Coalescer(sink, 0, clock), /windowMs must be > 0/);
});
