/**
 * A Worker of `convctl test --concurrency N`: analyses the config again (compiled plans do not
 * cross isolates; the inputs are plain data), grades the samples it is given and posts each
 * outcome with its index, then `done`.
 */
/// <reference lib="deno.worker" />
import { analyze } from "../engine/mod.ts";
import { createSampleTester } from "./test_run.ts";
import type { GradeMessage, GradeRequest } from "./test_parallel.ts";

self.onmessage = (event: MessageEvent<GradeRequest>) => {
  const { source, spec, served, options, samples } = event.data;
  const post = (m: GradeMessage) => self.postMessage(m);
  try {
    const grade = createSampleTester(analyze(source, spec), source, served, options);
    for (const { index, sample } of samples) post({ index, outcome: grade(sample) });
    post({ done: true });
  } catch (e) {
    post({ error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
  }
};
