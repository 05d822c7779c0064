/**
 * A small flag parser with the pflag conventions convctl's users know from the reference:
 * `-c x`, `-c=x`, `-cx`, `--config x`, `--config=x`, boolean `--strict` / `--strict=false`,
 * repeatable list flags whose values may also be comma-separated, and `--` to end flags.
 * Unknown flags and missing values are usage errors (exit 2).
 */

/** A failure the user can fix; printed as `error: <message>`, exit code 2. */
export class CliError extends Error {
  override name = "CliError";
}

export type FlagKind = "string" | "bool" | "list";

export interface FlagSpec {
  /** Long name without dashes. */
  name: string;
  /** One-letter shorthand without the dash. */
  short?: string;
  kind: FlagKind;
  /** Placeholder for the value in help text, e.g. FILE. */
  value?: string;
  help: string;
  /** Default shown in help (the command applies it). */
  default?: string;
}

export interface CommandSpec {
  name: string;
  usage: string;
  summary: string;
  flags: readonly FlagSpec[];
}

export const HELP_FLAG: FlagSpec = { name: "help", short: "h", kind: "bool", help: "show help" };

export class ParsedFlags {
  constructor(
    private readonly values: ReadonlyMap<string, string | boolean | string[]>,
    readonly positionals: readonly string[],
  ) {}

  has(name: string): boolean {
    return this.values.has(name);
  }

  string(name: string): string | undefined {
    const v = this.values.get(name);
    return typeof v === "string" ? v : undefined;
  }

  bool(name: string): boolean {
    return this.values.get(name) === true;
  }

  list(name: string): string[] {
    const v = this.values.get(name);
    return Array.isArray(v) ? v : [];
  }
}

function parseBool(flag: string, raw: string): boolean {
  const v = raw.toLowerCase();
  if (["1", "t", "true"].includes(v)) return true;
  if (["0", "f", "false"].includes(v)) return false;
  throw new CliError(`invalid argument ${JSON.stringify(raw)} for ${flag}: expected true or false`);
}

function display(spec: FlagSpec): string {
  return spec.short !== undefined ? `-${spec.short}, --${spec.name}` : `--${spec.name}`;
}

/** Parses `args` against `flags` (plus -h/--help). */
export function parseFlags(args: readonly string[], flags: readonly FlagSpec[]): ParsedFlags {
  const all = [...flags, HELP_FLAG];
  const byLong = new Map(all.map((f) => [f.name, f]));
  const byShort = new Map(all.filter((f) => f.short !== undefined).map((f) => [f.short!, f]));
  const values = new Map<string, string | boolean | string[]>();
  const positionals: string[] = [];

  const assign = (spec: FlagSpec, raw: string | undefined, shown: string) => {
    if (spec.kind === "bool") {
      values.set(spec.name, raw === undefined ? true : parseBool(shown, raw));
    } else if (spec.kind === "string") {
      values.set(spec.name, raw!);
    } else {
      const prior = values.get(spec.name);
      const list = Array.isArray(prior) ? prior : [];
      list.push(...raw!.split(",").map((s) => s.trim()).filter((s) => s !== ""));
      values.set(spec.name, list);
    }
  };

  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const spec = byLong.get(name);
      if (spec === undefined) throw new CliError(`unknown flag: --${name}`);
      let raw: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
      if (raw === undefined && spec.kind !== "bool") {
        if (i + 1 >= args.length) throw new CliError(`flag needs an argument: --${name}`);
        raw = args[++i];
      }
      assign(spec, raw, `--${name}`);
    } else if (arg.startsWith("-") && arg.length > 1) {
      const letter = arg[1];
      const spec = byShort.get(letter);
      if (spec === undefined) {
        throw new CliError(`unknown shorthand flag: ${JSON.stringify(letter)} in ${arg}`);
      }
      let raw: string | undefined = arg.length > 2 ? arg.slice(2) : undefined;
      if (raw?.startsWith("=")) raw = raw.slice(1);
      if (raw === undefined && spec.kind !== "bool") {
        if (i + 1 >= args.length) {
          throw new CliError(`flag needs an argument: ${JSON.stringify(letter)} in ${arg}`);
        }
        raw = args[++i];
      }
      assign(spec, raw, `-${letter}`);
    } else {
      positionals.push(arg);
    }
  }
  return new ParsedFlags(values, positionals);
}

/** Help text for one command: usage, summary and an aligned flag table. */
export function commandHelp(cmd: CommandSpec): string {
  const rows = [...cmd.flags, HELP_FLAG].map((f) => {
    const left = `  ${display(f)}${f.value !== undefined ? ` ${f.value}` : ""}`;
    const dflt = f.default !== undefined ? ` (default ${f.default})` : "";
    return [left, f.help + dflt];
  });
  const width = Math.max(...rows.map(([l]) => l.length));
  const lines = rows.map(([l, r]) => `${l.padEnd(width)}   ${r}`);
  return `${cmd.summary}\n\nUsage:\n  ${cmd.usage}\n\nFlags:\n${lines.join("\n")}\n`;
}

/** `required flag(s) "config" not set` style checks shared by the commands. */
export function requireFlags(flags: ParsedFlags, ...names: string[]): void {
  const missing = names.filter((n) => !flags.has(n));
  if (missing.length > 0) {
    throw new CliError(`required flag(s) ${missing.map((n) => `--${n}`).join(", ")} not set`);
  }
}

export function mutuallyExclusive(flags: ParsedFlags, ...names: string[]): void {
  const set = names.filter((n) => flags.has(n));
  if (set.length > 1) {
    throw new CliError(
      `flags ${set.map((n) => `--${n}`).join(" and ")} cannot be used together`,
    );
  }
}

export function oneRequired(flags: ParsedFlags, ...names: string[]): void {
  if (!names.some((n) => flags.has(n))) {
    throw new CliError(`one of the flags ${names.map((n) => `--${n}`).join(", ")} is required`);
  }
}

export function noPositionals(flags: ParsedFlags, command: string): void {
  if (flags.positionals.length > 0) {
    throw new CliError(
      `unexpected argument ${JSON.stringify(flags.positionals[0])} for "convctl ${command}"`,
    );
  }
}

/** `--output` for commands that validate it. */
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

/** Shared flag definitions, so every command spells and documents them the same way. */
export const FLAGS = {
  config: {
    name: "config",
    short: "c",
    kind: "string",
    value: "FILE",
    help: "XRDConversionConfig or CRDConversionConfig file",
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
} as const satisfies Record<string, FlagSpec>;
