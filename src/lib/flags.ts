/**
 * The one command-line flag parser of every binary (convctl, the manager, the webhook server).
 * Spellings are pflag's, which Go tools share: `--name value`, `--name=value`, `-n value`, `-n=value`,
 * `-nvalue`; a boolean is set by `--name` or `--name=true|false` (also `1/0`, `t/f`, any case) and
 * never takes the next argument; a list flag accumulates over repeats and splits values at commas;
 * `--` ends the flags. A flag given twice keeps its last value. Every mistake is a {@link FlagError};
 * an unknown flag names the closest known one.
 */

import { didYouMean } from "./edit_distance.ts";

/** A command-line mistake the user can fix: unknown flag, missing or malformed value. */
export class FlagError extends Error {
  override name = "FlagError";
}

export type FlagKind = "string" | "bool" | "list";

export interface FlagSpec {
  /** Long name without dashes. */
  name: string;
  /** One-letter shorthand without the dash. */
  short?: string;
  /** Other long names that set the same flag (the last occurrence of any of them wins). */
  aliases?: readonly string[];
  kind: FlagKind;
  /** Placeholder for the value in help text, e.g. FILE. */
  value?: string;
  help?: string;
  /** Default shown in help (the caller applies it). */
  default?: string;
}

type FlagValue = string | boolean | string[];

/** What `parseFlags` found: values by (canonical) long name, and the non-flag arguments. */
export class ParsedFlags {
  constructor(
    private readonly values: ReadonlyMap<string, FlagValue>,
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
  throw new FlagError(
    `invalid argument ${JSON.stringify(raw)} for ${flag}: expected true or false`,
  );
}

/** Parses `args` against `flags`; throws {@link FlagError}. */
export function parseFlags(args: readonly string[], flags: readonly FlagSpec[]): ParsedFlags {
  const byLong = new Map<string, FlagSpec>();
  for (const f of flags) for (const n of [f.name, ...(f.aliases ?? [])]) byLong.set(n, f);
  const byShort = new Map(flags.filter((f) => f.short !== undefined).map((f) => [f.short!, f]));
  const values = new Map<string, FlagValue>();
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
      if (spec === undefined) {
        const known = [...byLong.keys()].map((n) => `--${n}`);
        throw new FlagError(`unknown flag: --${name}${didYouMean(`--${name}`, known, false)}`);
      }
      let raw: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
      if (raw === undefined && spec.kind !== "bool") {
        if (i + 1 >= args.length) throw new FlagError(`flag needs an argument: --${name}`);
        raw = args[++i];
      }
      assign(spec, raw, `--${name}`);
    } else if (arg.startsWith("-") && arg.length > 1) {
      const letter = arg[1];
      const spec = byShort.get(letter);
      if (spec === undefined) {
        throw new FlagError(`unknown shorthand flag: ${JSON.stringify(letter)} in ${arg}`);
      }
      let raw: string | undefined = arg.length > 2 ? arg.slice(2) : undefined;
      if (raw?.startsWith("=")) raw = raw.slice(1);
      if (raw === undefined && spec.kind !== "bool") {
        if (i + 1 >= args.length) {
          throw new FlagError(`flag needs an argument: ${JSON.stringify(letter)} in ${arg}`);
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

/**
 * How a daemon flag fills its field: as text, a boolean, an integer, or through `parse` (which
 * throws {@link FlagError} for a bad value). `field: undefined` accepts the flag and ignores it.
 */
export type FieldFlag<T> =
  | { field: keyof T | undefined; kind: "string" | "bool" | "int" }
  | { field: keyof T; parse: (raw: string, flag: string) => T[keyof T] };

/**
 * `--help` (or `-h`) was given: not an error. `usage` lists every flag of the record with its
 * aliases and default; the caller prints it and exits 0.
 */
export class HelpRequested extends Error {
  override name = "HelpRequested";
  constructor(readonly usage: string) {
    super("help requested");
  }
}

/** The help text of a daemon's flag table: one line per field, aliases and default with it. */
export function flagRecordUsage<T extends object>(
  table: Readonly<Record<string, FieldFlag<T>>>,
  defaults: Readonly<T>,
): string {
  const byField = new Map<string, string[]>();
  for (const [name, entry] of Object.entries(table)) {
    if (entry.field === undefined) continue;
    const key = String(entry.field);
    byField.set(key, [...(byField.get(key) ?? []), name]);
  }
  const lines: string[] = [];
  for (const [field, names] of byField) {
    const value = (defaults as Record<string, unknown>)[field];
    // Fields named `…Ms` hold a Go-duration flag in milliseconds: shown as the flag is written.
    const shown = typeof value === "number" && field.endsWith("Ms")
      ? ` (default ${durationText(value)})`
      : typeof value === "string"
      ? (value === "" ? "" : ` (default ${JSON.stringify(value)})`)
      : typeof value === "number" || typeof value === "boolean"
      ? ` (default ${value})`
      : "";
    lines.push(`  ${names.map((n) => `--${n}`).join(", ")}${shown}`);
  }
  return lines.join("\n");
}

/** Milliseconds as the shortest Go duration that spells them (`2m`, `90s`, `8760h`, `250ms`). */
function durationText(ms: number): string {
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const) {
    if (ms !== 0 && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * For daemons, whose flags fill one settings record: `defaults` overwritten by every flag given.
 * Several names may fill one field (aliases). A non-flag argument is an error. `--help`/`-h`
 * throws {@link HelpRequested} with the usage, whatever else is given.
 */
export function parseFlagRecord<T extends object>(
  args: readonly string[],
  table: Readonly<Record<string, FieldFlag<T>>>,
  defaults: Readonly<T>,
): T {
  const end = args.indexOf("--");
  if ((end < 0 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h")) {
    throw new HelpRequested(flagRecordUsage(table, defaults));
  }
  // One spec per field, its other names as aliases, so the last of them wins.
  const specs = new Map<string, FlagSpec & { entry: FieldFlag<T> }>();
  for (const [name, entry] of Object.entries(table)) {
    const key = entry.field === undefined ? `ignored ${name}` : `field ${String(entry.field)}`;
    const known = specs.get(key);
    if (known !== undefined) {
      known.aliases = [...(known.aliases ?? []), name];
      continue;
    }
    const kind = "kind" in entry && entry.kind === "bool" ? "bool" : "string";
    specs.set(key, { name, kind, entry });
  }
  const parsed = parseFlags(args, [...specs.values()]);
  if (parsed.positionals.length > 0) {
    throw new FlagError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  }
  const out: T = { ...defaults };
  for (const { name, entry } of specs.values()) {
    if (entry.field === undefined || !parsed.has(name)) continue;
    const flag = `--${name}`;
    let value: unknown;
    if ("parse" in entry) value = entry.parse(parsed.string(name)!, flag);
    else if (entry.kind === "bool") value = parsed.bool(name);
    else if (entry.kind === "int") value = intValue(flag, parsed.string(name)!);
    else value = parsed.string(name);
    out[entry.field] = value as T[keyof T];
  }
  return out;
}

/** A decimal integer, optionally negative. */
function intValue(flag: string, raw: string): number {
  if (!/^-?\d+$/.test(raw)) {
    throw new FlagError(`${flag}: ${JSON.stringify(raw)} is not an integer`);
  }
  return Number(raw);
}
