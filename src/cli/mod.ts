/**
 * convctl's command list and top-level help. Each command is one file exporting a
 * `defineCommand(...)` (src/cli/command.ts); adding one is that file plus its line in `ALL`.
 * Tool errors are thrown as `CliError` and turned into `error: <message>` / exit 2 by the entry
 * point.
 */
import { analyzeCommand } from "./analyze.ts";
import type { Command } from "./command.ts";
import { completionCommand } from "./completion.ts";
import { compatCommand } from "./compat.ts";
import { convertCommand } from "./convert.ts";
import { crossplaneCommand } from "./crossplane_status.ts";
import { diffCommand } from "./diff.ts";
import { fuzzCommand } from "./fuzz.ts";
import { generateCommand } from "./generate.ts";
import { lintCommand } from "./lint.ts";
import { migrateStorageCommand } from "./migrate_storage.ts";
import { patchPreviewCommand } from "./patch_preview.ts";
import { planCommand } from "./plan.ts";
import { rehubCommand } from "./rehub.ts";
import { retargetCommand } from "./retarget.ts";
import { suggestCommand } from "./suggest.ts";
import { testCommand } from "./test.ts";
import { validateCommand } from "./validate.ts";
import { versionCommand } from "./version.ts";
import { versionsCommand } from "./versions.ts";

export { CliError, commandHelp, parseFlags } from "./args.ts";
export type { Command } from "./command.ts";
export { errorLine, type Io, processIo } from "./output.ts";

/** Every command, in the order the help lists them. */
const ALL: readonly Command[] = [
  validateCommand,
  analyzeCommand,
  testCommand,
  diffCommand,
  convertCommand,
  suggestCommand,
  rehubCommand,
  fuzzCommand,
  generateCommand,
  patchPreviewCommand,
  migrateStorageCommand,
  lintCommand,
  completionCommand(() => ALL),
  planCommand,
  versionsCommand,
  retargetCommand,
  crossplaneCommand,
  compatCommand,
  versionCommand,
];

export const COMMANDS: ReadonlyMap<string, Command> = new Map(ALL.map((c) => [c.spec.name, c]));

export function topLevelHelp(): string {
  const width = Math.max(...[...COMMANDS.keys()].map((n) => n.length));
  const lines = [...COMMANDS.values()].map((c) =>
    `  ${c.spec.name.padEnd(width)}   ${c.spec.summary}`
  );
  return [
    "convctl drives the dco conversion engine against local files: validate and analyze",
    "conversion configs, round-trip sample objects, convert objects and draft rules; compare",
    "configs, plan hub promotions and version retirements, and gate changes between revisions.",
    "Against a cluster: diff --live, retarget and crossplane status.",
    "",
    "Usage:",
    "  convctl <command> [flags]",
    "",
    "Commands:",
    ...lines,
    "",
    'Run "convctl <command> --help" for the flags of a command.',
    "Exit codes: 0 success, 1 a result failure (invalid config, failed tests, deltas, breaking",
    "changes), 2 a usage or tool error.",
    "",
  ].join("\n");
}
