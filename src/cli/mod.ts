/**
 * convctl's command table and top-level help. Each command lives in its own file and exposes a
 * `CommandSpec` (flags, help) and a runner returning the exit code; tool errors are thrown as
 * `CliError` and turned into `error: <message>` / exit 2 by the entry point.
 */
import { type CommandSpec, type ParsedFlags } from "./args.ts";
import { analyzeCommand, runAnalyze } from "./analyze.ts";
import { convertCommand, runConvert } from "./convert.ts";
import { fuzzCommand, runFuzzCommand } from "./fuzz.ts";
import type { Io } from "./output.ts";
import { runSuggest, suggestCommand } from "./suggest.ts";
import { runTest, testCommand } from "./test.ts";
import { runValidate, validateCommand } from "./validate.ts";
import { runVersion, versionCommand } from "./version.ts";

export { CliError, commandHelp, parseFlags } from "./args.ts";
export { bufferIo, type Io, processIo } from "./output.ts";

export interface Command {
  spec: CommandSpec;
  run(flags: ParsedFlags, io: Io): Promise<number>;
}

export const COMMANDS: ReadonlyMap<string, Command> = new Map([
  ["validate", { spec: validateCommand, run: runValidate }],
  ["analyze", { spec: analyzeCommand, run: runAnalyze }],
  ["test", { spec: testCommand, run: runTest }],
  ["convert", { spec: convertCommand, run: runConvert }],
  ["suggest", { spec: suggestCommand, run: runSuggest }],
  ["fuzz", { spec: fuzzCommand, run: runFuzzCommand }],
  ["version", { spec: versionCommand, run: runVersion }],
]);

/** Commands of the reference CLI that this build does not have yet (cli.md §1.1). */
export const PLANNED_COMMANDS: ReadonlySet<string> = new Set([
  "diff",
  "rehub",
  "generate",
  "patch-preview",
  "migrate-storage",
  "completion",
  "retarget",
  "crossplane",
  "plan",
  "versions",
  "compat",
  "lint",
]);

export function topLevelHelp(): string {
  const width = Math.max(...[...COMMANDS.keys()].map((n) => n.length));
  const lines = [...COMMANDS.values()].map((c) =>
    `  ${c.spec.name.padEnd(width)}   ${c.spec.summary}`
  );
  return [
    "convctl drives the dco conversion engine against local files: validate and analyze",
    "conversion configs, round-trip sample objects, convert objects and draft rules.",
    "",
    "Usage:",
    "  convctl <command> [flags]",
    "",
    "Commands:",
    ...lines,
    "",
    'Run "convctl <command> --help" for the flags of a command.',
    "Exit codes: 0 success, 1 a result failure (invalid config, failed tests), 2 a usage or tool error.",
    "",
  ].join("\n");
}
