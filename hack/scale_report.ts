/**
 * The nightly scale comparison: the current run's result JSON against the previous successful
 * run's (see docs/operations.md, "Scale runs and the nightly report").
 *
 *   deno run --allow-read hack/scale_report.ts --current CUR.json [--previous PREV.json] [--threshold 1.5]
 *
 * Prints the Markdown summary on stdout and each `FAIL: …` line on stderr. A missing or unusable
 * previous file, another schemaVersion or another envelope skips the comparison (not a failure).
 * Exit 0: no regression and no absolute failure; 1: a regression or an absolute failure (a
 * Get/List error, zero requests); 2: bad flags or an unreadable current result.
 */
import { parseArgs } from "node:util";
import { parseScaleResult, type ScaleResult } from "./scale/result.ts";
import {
  type Baseline,
  baselineOf,
  compareScaleResults,
  DEFAULT_THRESHOLD,
  renderMarkdown,
} from "./scale/report.ts";

async function readJSON(path: string): Promise<unknown> {
  return JSON.parse(await Deno.readTextFile(path));
}

async function main(args: string[]): Promise<number> {
  let current: ScaleResult;
  let baseline: Baseline | undefined;
  let threshold: number;
  try {
    const { values } = parseArgs({
      args,
      options: {
        current: { type: "string" },
        previous: { type: "string" },
        threshold: { type: "string", default: String(DEFAULT_THRESHOLD) },
      },
    });
    if (!values.current) throw new Error("--current <result.json> is required");
    threshold = Number(values.threshold);
    if (!(threshold > 1)) throw new Error(`--threshold ${values.threshold} must be > 1.0`);
    current = parseScaleResult(await readJSON(values.current), values.current);
    if (values.previous) {
      try {
        baseline = baselineOf(await readJSON(values.previous), values.previous);
      } catch (e) {
        baseline = { unusable: `${values.previous}: ${(e as Error).message}` };
      }
    }
  } catch (e) {
    console.error(`error: ${(e as Error).message}`);
    return 2;
  }
  const report = compareScaleResults(current, baseline, threshold);
  console.log(renderMarkdown(report, current));
  for (const line of report.failures) console.error(line);
  return report.failures.length ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
