/**
 * A stand-in compile Worker for tests/webhook/initial_sync_test.ts: answers every job of a batch
 * with a failure naming the job's config and the size of the batch it came in.
 */
/// <reference lib="deno.worker" />
import type { CompileRequest, CompileResponse } from "../../src/webhook/compile_worker.ts";

self.onmessage = (event: MessageEvent<CompileRequest>) => {
  const { id, jobs } = event.data;
  const outcomes = jobs.map((j) => ({
    result: {
      ok: false as const,
      target: j.config.metadata.name,
      kind: j.kind,
      config: j.config.metadata.name,
      reason: "InvalidRules" as const,
      message: `batch of ${jobs.length}`,
    },
  }));
  self.postMessage({ id, outcomes } satisfies CompileResponse);
};
self.postMessage({ ready: true } satisfies CompileResponse);
