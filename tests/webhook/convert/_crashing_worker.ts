/**
 * The conversion Worker, except that a request for the target `crash` throws out of the message
 * handler — an uncaught error, as a bug in the Worker would be (the pool tests' dying Worker) — and
 * one for the target `hang` never returns, as a Worker stuck outside every budget check would (the
 * watchdog's case; a real conversion stops at its request budget).
 */
/// <reference lib="deno.worker" />
import "../../../src/webhook/convert/convert_worker.ts";
import type { ToWorker } from "../../../src/webhook/convert/worker_protocol.ts";

const HANG = new Int32Array(new SharedArrayBuffer(4));

// The real handler is an arrow function: it needs no `this`.
const serve = self.onmessage as unknown as (event: MessageEvent<ToWorker>) => void;
self.onmessage = (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  if (m.t === "convert" && m.target === "crash") throw new Error("deliberate crash for the test");
  if (m.t === "convert" && m.target === "hang") { for (;;) Atomics.wait(HANG, 0, 0, 1000); }
  serve(event);
};
