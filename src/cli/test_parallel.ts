/**
 * Grading samples in parallel for `convctl test --concurrency N`: conversions are synchronous
 * CPU work, so parallelism means Workers (src/cli/test_worker.ts). Samples are dealt out in
 * contiguous chunks and the outcomes collected by index, so the report order is the input order
 * whatever finishes first. A Worker that cannot start (a build without its module) or fails
 * leaves its remaining samples to the main thread, which grades them the same way.
 */
import type { ConversionConfigSpec, SchemaSource } from "../engine/mod.ts";
import type { Sample } from "./load.ts";
import type { SampleOutcome, TestRunOptions } from "./test_run.ts";

export interface GradeRequest {
  source: SchemaSource;
  spec: ConversionConfigSpec;
  served: readonly string[];
  options: TestRunOptions;
  samples: { index: number; sample: Sample }[];
}

export type GradeMessage =
  | { index: number; outcome: SampleOutcome }
  | { done: true }
  | { error: string };

/** `--concurrency`: ≤0 means the number of CPUs; clamped to [1, samples]. */
export function effectiveConcurrency(requested: number, samples: number, cpus: number): number {
  const n = requested <= 0 ? cpus : requested;
  return Math.max(1, Math.min(n, samples));
}

export async function gradeSamples(
  request: Omit<GradeRequest, "samples">,
  samples: readonly Sample[],
  concurrency: number,
  gradeLocally: (sample: Sample) => SampleOutcome,
  onGraded?: (done: number, total: number) => void,
): Promise<SampleOutcome[]> {
  const results: (SampleOutcome | undefined)[] = new Array(samples.length);
  let done = 0;
  const store = (index: number, outcome: SampleOutcome) => {
    results[index] = outcome;
    onGraded?.(++done, samples.length);
  };
  if (concurrency <= 1) {
    samples.forEach((s, i) => store(i, gradeLocally(s)));
    return results as SampleOutcome[];
  }
  const size = Math.ceil(samples.length / concurrency);
  const chunks: number[][] = [];
  for (let start = 0; start < samples.length; start += size) {
    chunks.push(samples.slice(start, start + size).map((_, i) => start + i));
  }
  await Promise.all(chunks.map(async (indices) => {
    await runWorker(request, indices.map((index) => ({ index, sample: samples[index] })), store);
    for (const i of indices) if (results[i] === undefined) store(i, gradeLocally(samples[i]));
  }));
  return results as SampleOutcome[];
}

/** Resolves when the Worker is done or has failed (its missing outcomes are then graded locally). */
function runWorker(
  request: Omit<GradeRequest, "samples">,
  samples: GradeRequest["samples"],
  store: (index: number, outcome: SampleOutcome) => void,
): Promise<void> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(new URL("./test_worker.ts", import.meta.url).href, { type: "module" });
    } catch {
      return resolve();
    }
    const finish = () => {
      worker.terminate();
      resolve();
    };
    worker.onmessage = (event: MessageEvent<GradeMessage>) => {
      const m = event.data;
      if ("outcome" in m) store(m.index, m.outcome);
      else finish();
    };
    worker.onerror = (event) => {
      event.preventDefault();
      finish();
    };
    worker.postMessage({ ...request, samples } satisfies GradeRequest);
  });
}
