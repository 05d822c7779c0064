/**
 * The one shape of a convctl command. A command declares its flags, what it loads, its output
 * formats and its own logic; `defineCommand` does the rest in a fixed order (docs/design/cli.md):
 * flag checks before any file is read (`-o` among them: an unknown format is a usage error in
 * every command), then the config and schema, then `run`, the `-o` renderer and the exit code.
 */
import { engineSpecOf } from "../api/mod.ts";
import type { ConversionConfigSpec, SchemaSource } from "../engine/mod.ts";
import { CliError, type CommandSpec, FLAGS, type FlagSpec, type ParsedFlags } from "./args.ts";
import { type LoadedConfig, type LoadedSchema, loadTarget, STDIN } from "./load.ts";
import { PACKAGE_FLAGS } from "./package_source.ts";
import type { Io } from "./output.ts";

/** A registered command: its help and flags, and a runner returning the exit code. */
export interface Command {
  spec: CommandSpec;
  run(flags: ParsedFlags, io: Io): Promise<number>;
}

/**
 * What a command reads before `run`: nothing, a config (`-c`) and the schema file if one is given,
 * or a config and its schema file (`-x` or `--crd`, whichever matches the config kind).
 */
export type TargetNeed = "none" | "config" | "config+schema";

/** Flags of which at most one, or exactly one, may be given. */
export type FlagGroup = { atMostOne: readonly string[] } | { exactlyOne: readonly string[] };

export interface Invocation<O> {
  flags: ParsedFlags;
  io: Io;
  /** What the command's `options` made of its flags. */
  options: O;
}

export interface ConfigInvocation<O> extends Invocation<O> {
  config: LoadedConfig;
  schema?: LoadedSchema;
  /** The config's spec as the engine reads it. */
  spec: ConversionConfigSpec;
}

export interface SchemaInvocation<O> extends ConfigInvocation<O> {
  schema: LoadedSchema;
  source: SchemaSource;
}

export type InvocationOf<T extends TargetNeed, O> = T extends "config+schema" ? SchemaInvocation<O>
  : T extends "config" ? ConfigInvocation<O>
  : Invocation<O>;

/** `-o` values and their renderers; the first one listed is shown first in errors. */
export interface OutputFormats<R, C> {
  formats: Readonly<Record<string, (result: R, invocation: C) => string>>;
  default: string;
}

export interface CommandDefinition<T extends TargetNeed, O, R> {
  name: string;
  usage: string;
  summary: string;
  target: T;
  /** The command's flags in help order; config, xrd and crd come first by `target`. */
  flags: readonly FlagSpec[];
  /**
   * Checks the positional arguments (a subcommand, a shell name, paths) before any flag check;
   * without it, any positional argument is an error.
   */
  positionals?: (args: readonly string[]) => void;
  /** Flags that must be given (`--config` is implied by `target`). */
  required?: readonly string[];
  /** Checked after the schema flags' group. */
  groups?: readonly FlagGroup[];
  /** `flag → other`: the flag may be given only together with the other (a set boolean). */
  requires?: Readonly<Record<string, string>>;
  /** The command's own flag checks and values, before any file is read. */
  options?: (flags: ParsedFlags) => O;
  run(invocation: InvocationOf<T, O>): R | Promise<R>;
  /** How `-o` renders the result (read only when the command has an `output` flag). */
  output: OutputFormats<R, InvocationOf<T, O>>;
  /** Where the rendered text goes; stdout unless given. */
  write?: (text: string, result: R, invocation: InvocationOf<T, O>) => void | Promise<void>;
  /** 0 unless given. */
  exitCode?: (result: R, invocation: InvocationOf<T, O>) => number;
}

/** The `-c`/`-x`/`--crd` flags a command gets from its `target`. */
function targetFlags(target: TargetNeed): FlagSpec[] {
  const config = { ...FLAGS.config, help: `${FLAGS.config.help} (required)` };
  if (target === "none") return [];
  const { package: pkg, target: xrdName } = PACKAGE_FLAGS;
  if (target === "config+schema") return [config, FLAGS.xrd, FLAGS.crd, pkg, xrdName];
  return [
    config,
    { ...FLAGS.xrd, help: `${FLAGS.xrd.help}; enables schema analysis` },
    { ...FLAGS.crd, help: `${FLAGS.crd.help}; enables schema analysis` },
    { ...pkg, help: `${pkg.help}; enables schema analysis` },
    xrdName,
  ];
}

const shown = (names: readonly string[], sep: string) => names.map((n) => `--${n}`).join(sep);

/** The flag checks every command shares, in the order a user meets them. */
function checkFlags(
  flags: ParsedFlags,
  def: CommandDefinition<TargetNeed, unknown, unknown>,
  specs: readonly FlagSpec[],
): void {
  if (def.positionals !== undefined) def.positionals(flags.positionals);
  else if (flags.positionals.length > 0) {
    throw new CliError(
      `unexpected argument ${JSON.stringify(flags.positionals[0])} for "convctl ${def.name}"`,
    );
  }
  const required = [...(def.target === "none" ? [] : ["config"]), ...(def.required ?? [])];
  const missing = required.filter((n) => !flags.has(n));
  if (missing.length > 0) throw new CliError(`required flag(s) ${shown(missing, ", ")} not set`);

  const schemaGroup: FlagGroup[] = def.target === "config+schema"
    ? [{ exactlyOne: ["xrd", "crd", "package"] }]
    : def.target === "config"
    ? [{ atMostOne: ["xrd", "crd", "package"] }]
    : [];
  for (const group of [...schemaGroup, ...(def.groups ?? [])]) {
    const names = "atMostOne" in group ? group.atMostOne : group.exactlyOne;
    const given = names.filter((n) => flags.has(n));
    if (given.length > 1) {
      throw new CliError(`flags ${shown(given, " and ")} cannot be used together`);
    }
    if ("exactlyOne" in group && given.length === 0) {
      throw new CliError(`one of the flags ${shown(names, ", ")} is required`);
    }
  }
  const fromStdin = INPUT_FLAGS.filter((n) => flags.string(n) === STDIN);
  if (fromStdin.length > 1) {
    throw new CliError(`only one file can be read from stdin: ${shown(fromStdin, " and ")} are -`);
  }
  for (const [flag, other] of Object.entries(def.requires ?? {})) {
    const otherIsBool = specs.find((s) => s.name === other)?.kind === "bool";
    const otherSet = otherIsBool ? flags.bool(other) : flags.has(other);
    if (flags.has(flag) && !otherSet) throw new CliError(`--${flag} requires --${other}`);
  }
}

/** The `-o` format: a listed one (the default when absent); anything else is a usage error. */
function outputFormat(flags: ParsedFlags, output: OutputFormats<never, never>): string {
  const value = flags.string("output");
  const allowed = Object.keys(output.formats);
  if (value === undefined) return output.default;
  if (!allowed.includes(value)) {
    throw new CliError(
      `unknown output format ${JSON.stringify(value)} (use ${allowed.join("|")})`,
    );
  }
  return value;
}

/** The flags that name a file to read, any of which may be `-` (stdin), but only one at a time. */
const INPUT_FLAGS = ["config", "xrd", "crd", "sample"];

/** Turns a definition into a registered command. */
export function defineCommand<T extends TargetNeed, O = undefined, R = string>(
  def: CommandDefinition<T, O, R>,
): Command {
  // `-o` offers the command's formats to shell completion.
  const flags = [...targetFlags(def.target), ...def.flags].map((f) =>
    f.name === "output" && f.choices === undefined
      ? { ...f, choices: Object.keys(def.output.formats) }
      : f
  );
  const spec: CommandSpec = { name: def.name, usage: def.usage, summary: def.summary, flags };
  const hasOutputFlag = flags.some((f) => f.name === "output");
  return {
    spec,
    async run(parsed, io) {
      checkFlags(parsed, def as CommandDefinition<TargetNeed, unknown, unknown>, flags);
      const format = hasOutputFlag ? outputFormat(parsed, def.output) : def.output.default;
      const options = def.options?.(parsed) as O;
      let invocation: Invocation<O> = { flags: parsed, io, options };
      if (def.target !== "none") {
        const loaded = await loadTarget(parsed, def.target === "config" ? "optional" : "required");
        invocation = {
          ...invocation,
          ...loaded,
          spec: engineSpecOf(loaded.config.config),
          source: loaded.schema?.source,
        } as ConfigInvocation<O>;
      }
      const typed = invocation as InvocationOf<T, O>;
      const result = await def.run(typed);
      const text = def.output.formats[format](result, typed);
      if (def.write !== undefined) await def.write(text, result, typed);
      else io.out(text);
      return def.exitCode?.(result, typed) ?? 0;
    },
  };
}

/** The output of a command that prints one text and has no `-o`. */
export const PLAIN_TEXT: OutputFormats<string, unknown> = {
  formats: { text: (text) => text },
  default: "text",
};
