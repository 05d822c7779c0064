/**
 * convctl's flags: the shared parser (src/lib/flags.ts) plus `-h/--help`, the help text of a
 * command, the flag definitions several commands share, and `CliError`, the error every user-fixable
 * problem becomes (printed as `error: <message>`, exit 2).
 */
import {
  FlagError,
  type FlagSpec,
  ParsedFlags,
  parseFlags as parseLibFlags,
} from "../lib/flags.ts";

export { type FlagSpec, ParsedFlags };

/** A failure the user can fix; printed as `error: <message>`, exit code 2. */
export class CliError extends Error {
  override name = "CliError";
}

export interface CommandSpec {
  name: string;
  usage: string;
  summary: string;
  flags: readonly FlagSpec[];
}

export const HELP_FLAG: FlagSpec = { name: "help", short: "h", kind: "bool", help: "show help" };

/** Parses `args` against `flags` (plus -h/--help); a flag mistake is a {@link CliError}. */
export function parseFlags(args: readonly string[], flags: readonly FlagSpec[]): ParsedFlags {
  try {
    return parseLibFlags(args, [...flags, HELP_FLAG]);
  } catch (e) {
    if (e instanceof FlagError) throw new CliError(e.message);
    throw e;
  }
}

function display(spec: FlagSpec): string {
  return spec.short !== undefined ? `-${spec.short}, --${spec.name}` : `--${spec.name}`;
}

/** Help text for one command: usage, summary and an aligned flag table. */
export function commandHelp(cmd: CommandSpec): string {
  const rows = [...cmd.flags, HELP_FLAG].map((f) => {
    const left = `  ${display(f)}${f.value !== undefined ? ` ${f.value}` : ""}`;
    const dflt = f.default !== undefined ? ` (default ${f.default})` : "";
    return [left, (f.help ?? "") + dflt];
  });
  const width = Math.max(...rows.map(([l]) => l.length));
  const lines = rows.map(([l, r]) => `${l.padEnd(width)}   ${r}`);
  return `${cmd.summary}\n\nUsage:\n  ${cmd.usage}\n\nFlags:\n${lines.join("\n")}\n`;
}

/** Shared flag definitions, so every command spells and documents them the same way. */
export const FLAGS = {
  config: {
    name: "config",
    short: "c",
    kind: "string",
    value: "FILE",
    help: "XRDConversionConfig or CRDConversionConfig file (- reads stdin)",
  },
  xrd: {
    name: "xrd",
    short: "x",
    kind: "string",
    value: "FILE",
    help: "Crossplane CompositeResourceDefinition file (for an XRDConversionConfig)",
  },
  crd: {
    name: "crd",
    kind: "string",
    value: "FILE",
    help: "CustomResourceDefinition file (for a CRDConversionConfig)",
  },
  quiet: { name: "quiet", kind: "bool", help: "no progress line on stderr" },
} as const satisfies Record<string, FlagSpec>;

/**
 * `--validate-input` (on by default) and `--no-validate-input`: whether objects read as input are
 * checked against their version's schema first. Give them to a command together, with an
 * `atMostOne` group over both.
 */
export const VALIDATE_INPUT_FLAGS: readonly FlagSpec[] = [
  {
    name: "validate-input",
    kind: "bool",
    help: "check input objects against their version's schema (types, required, enums)",
    default: "true",
  },
  { name: "no-validate-input", kind: "bool", help: "skip that check" },
];

/** What {@link VALIDATE_INPUT_FLAGS} say: validate unless turned off either way. */
export function validateInputOf(flags: ParsedFlags): boolean {
  if (flags.bool("no-validate-input")) return false;
  return !flags.has("validate-input") || flags.bool("validate-input");
}

/** `-o/--output FORMAT`. */
export function outputFlag(help: string, dflt: string): FlagSpec {
  return { name: "output", short: "o", kind: "string", value: "FORMAT", help, default: dflt };
}

/** A flag's value from a fixed list, or `dflt` when the flag is absent. */
export function choice<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
  dflt: T,
): T {
  if (value === undefined) return dflt;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new CliError(
      `invalid value ${JSON.stringify(value)} for --${flag}: must be one of ${allowed.join(", ")}`,
    );
  }
  return value as T;
}
