/** A Worker of `convctl lint`'s pool: runs each job it is sent and answers with its outcome. */
import { type LintRequest, type LintResponse, runJob } from "./lint_jobs.ts";

interface WorkerScope {
  onmessage: ((event: MessageEvent<LintRequest>) => void) | null;
  postMessage(message: LintResponse): void;
}

const scope = self as unknown as WorkerScope;
scope.onmessage = async (event) => {
  const { id, job } = event.data;
  scope.postMessage({ id, outcome: await runJob(job) });
};
