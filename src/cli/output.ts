/**
 * Output helpers: where text goes (results → stdout, errors and progress → stderr; progress and
 * colour only on a terminal), aligned text tables, JSON and YAML renderings with sorted keys, and
 * the one-line form of a diagnostic.
 */
import { stringify as stringifyYaml } from "yaml";
import type { Diagnostic, JsonObject, JsonValue } from "../engine/mod.ts";
import { stringifyJson } from "../lib/json_exact.ts";

/** The two streams a command writes to. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /**
   * Whether stderr is a terminal: progress lines, which rewrite themselves with `\r`, are written
   * only then (in a log or a pipe they would be noise). Absent = not a terminal.
   */
  readonly errIsTerminal?: boolean;
  /** Whether stderr may be coloured ({@link useColor}). Absent = no colour. */
  readonly color?: boolean;
}

/** An Io writing synchronously (so stdout and stderr never interleave out of order). */
export function processIo(): Io {
  const encoder = new TextEncoder();
  const write = (stream: { writeSync(p: Uint8Array): number }, text: string) => {
    let bytes = encoder.encode(text);
    while (bytes.length > 0) bytes = bytes.subarray(stream.writeSync(bytes));
  };
  return {
    out: (text) => write(Deno.stdout, text),
    err: (text) => write(Deno.stderr, text),
    errIsTerminal: Deno.stderr.isTerminal(),
    color: useColor(Deno.stderr),
  };
}

/** A progress line on stderr: `update` rewrites it in place, `done` ends it. */
export interface Progress {
  update(text: string): void;
  done(): void;
}

/**
 * The one way commands show progress: `\r<text>` on a terminal (nothing otherwise, or when
 * `enabled` is false, e.g. `--quiet`), ended with a newline by `done` if anything was shown.
 */
export function progressLine(io: Io, enabled = true): Progress {
  const on = enabled && io.errIsTerminal === true;
  let shown = false;
  return {
    update(text) {
      if (!on) return;
      shown = true;
      io.err(`\r${text}`);
    },
    done() {
      if (shown) io.err("\n");
      shown = false;
    },
  };
}

/** `error:` as the entry point prints it: red on a colour terminal. */
export function errorLine(io: Io, message: string): string {
  return io.color === true ? `\x1b[31merror:\x1b[0m ${message}\n` : `error: ${message}\n`;
}

/** Display width in code points (the tables use `→` and `µ`, which are one column each). */
function width(text: string): number {
  return [...text].length;
}

/** Left-aligned columns separated by two spaces; trailing spaces trimmed. */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  indent = "",
): string {
  const widths = headers.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: readonly string[]) =>
    indent +
    cells.map((c, i) => i === cells.length - 1 ? c : c + " ".repeat(widths[i] - width(c)))
      .join("  ").trimEnd();
  return [line(headers), ...rows.map(line)].join("\n") + "\n";
}

/** A copy with every map's keys in sorted order, as Go's encoders write them. */
export function sortKeysDeep(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(sortKeysDeep);
  if (typeof v !== "object" || v === null) return v;
  const out: JsonObject = {};
  for (const key of Object.keys(v).sort()) {
    Object.defineProperty(out, key, {
      value: sortKeysDeep(v[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** 2-space indented JSON with a trailing newline; an int64 beyond 2^53 is written as its digits. */
export function toJson(v: unknown): string {
  return stringifyJson(v, { indent: 2 }) + "\n";
}

/**
 * YAML written for YAML 1.1 readers (strings such as `yes` or `on` are quoted, so Go tooling and
 * convctl read them back as strings), never folded, keys sorted unless the caller's order matters.
 */
export function toYaml(v: JsonValue, sortKeys = true): string {
  return stringifyYaml(sortKeys ? sortKeysDeep(v) : v, {
    version: "1.1",
    lineWidth: 0,
    minContentWidth: 0,
  });
}

/** `[class] path: message`, the form every command prints a diagnostic in. */
export function formatDiagnostic(d: Diagnostic): string {
  return d.path === "" ? `[${d.class}] ${d.message}` : `[${d.class}] ${d.path}: ${d.message}`;
}

/** `[spoke v1] [class] path: message`. */
export function formatSpokeDiagnostic(version: string, d: Diagnostic): string {
  return `[spoke ${version}] ${formatDiagnostic(d)}`;
}

/** Colour only for a terminal that has not opted out (NO_COLOR). */
export function useColor(stream: { isTerminal(): boolean }): boolean {
  try {
    return stream.isTerminal() && Deno.env.get("NO_COLOR") === undefined;
  } catch {
    return false;
  }
}
