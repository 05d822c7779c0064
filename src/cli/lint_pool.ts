/**
 * `convctl lint`'s Worker pool: the jobs run on up to N Workers (one process, each Worker loads
 * the engine once), and the outcomes come back in the order of the jobs, whichever finishes first.
 * With one Worker's worth of concurrency the jobs run inline, without starting a Worker.
 */
import { CliError } from "./args.ts";
import {
  type LintJob,
  type LintJobResult,
  type LintOutcome,
  type LintRequest,
  type LintResponse,
  runJob,
} from "./lint_jobs.ts";
import { siblingWorkerURL } from "../lib/worker_url.ts";

/** The lint Worker's script (src/lib/worker_url.ts). */
export function lintWorkerURL(): URL {
  return siblingWorkerURL("lint_worker", import.meta.url);
}

function unwrap(outcome: LintOutcome): LintJobResult {
  if (outcome.ok) return outcome.value;
  if (outcome.toolError) throw new CliError(outcome.message);
  throw new Error(outcome.message);
}

export class LintPool {
  private readonly workers: Worker[] = [];

  constructor(private readonly size: number) {}

  /** Runs `jobs`; the results are in the order of `jobs`. */
  async run(jobs: readonly LintJob[]): Promise<LintJobResult[]> {
    const size = Math.min(this.size, jobs.length);
    if (size <= 1) {
      const out: LintJobResult[] = [];
      for (const job of jobs) out.push(unwrap(await runJob(job)));
      return out;
    }
    while (this.workers.length < size) {
      this.workers.push(new Worker(lintWorkerURL().href, { type: "module" }));
    }
    const outcomes: LintOutcome[] = new Array(jobs.length);
    let next = 0;
    await Promise.all(
      this.workers.slice(0, size).map((worker) =>
        new Promise<void>((resolve, reject) => {
          const send = () => {
            if (next >= jobs.length) return resolve();
            const id = next++;
            worker.postMessage({ id, job: jobs[id] } satisfies LintRequest);
          };
          worker.onmessage = (event: MessageEvent<LintResponse>) => {
            outcomes[event.data.id] = event.data.outcome;
            send();
          };
          worker.onerror = (event) => {
            event.preventDefault();
            reject(new Error(`lint worker failed: ${event.message}`));
          };
          send();
        })
      ),
    );
    return outcomes.map(unwrap);
  }

  close(): void {
    for (const w of this.workers) w.terminate();
    this.workers.length = 0;
  }
}
