/**
 * The jobs `convctl lint` hands to its Workers, what comes back, and how one job runs — the same
 * function in a Worker and inline, so `--concurrency` changes only where the work happens.
 */
import { CliError } from "./args.ts";
import {
  checkPair,
  type LintFinding,
  scanFile,
  type ScannedDoc,
  type ScanResult,
} from "./lint_check.ts";

export type LintJob =
  | { type: "scan"; file: string }
  | { type: "check"; config: ScannedDoc; schema: ScannedDoc };

export type LintJobResult = ScanResult | LintFinding[];

/** A job's outcome as it crosses the Worker boundary: a value, or a tool error's message. */
export type LintOutcome =
  | { ok: true; value: LintJobResult }
  | { ok: false; message: string; toolError: boolean };

export interface LintRequest {
  id: number;
  job: LintJob;
}

export interface LintResponse {
  id: number;
  outcome: LintOutcome;
}

export async function runJob(job: LintJob): Promise<LintOutcome> {
  try {
    const value = job.type === "scan"
      ? await scanFile(job.file)
      : checkPair(job.config, job.schema);
    return { ok: true, value };
  } catch (e) {
    return { ok: false, message: (e as Error).message, toolError: e instanceof CliError };
  }
}
