/**
 * The listener Worker, except that a plan-set install that adds the target `crash` throws out of
 * the message handler — an uncaught error, as a bug in the Worker would be — and one that adds
 * `hang` never returns, as a Worker stuck in a loop would (the watchdog's case). A Worker started
 * from a set that already holds them (its reset) serves normally.
 */
/// <reference lib="deno.worker" />
import "../../../src/webhook/convert/listener_worker.ts";
import type { ToListener } from "../../../src/webhook/convert/listener_protocol.ts";

const HANG = new Int32Array(new SharedArrayBuffer(4));

// The real handler is an arrow function: it needs no `this`.
const serve = self.onmessage as unknown as (event: MessageEvent<ToListener>) => void;
self.onmessage = (event: MessageEvent<ToListener>) => {
  const m = event.data;
  if (m.t === "install") {
    const adds = (target: string) => m.delta.changes.some((c) => c.target === target);
    if (adds("crash")) throw new Error("deliberate crash for the test");
    if (adds("hang")) { for (;;) Atomics.wait(HANG, 0, 0, 1000); }
  }
  serve(event);
};
