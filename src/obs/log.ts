/**
 * Structured logging for the long-running roles (manager, webhook server): one JSON object per
 * line on stderr — `{"ts": RFC 3339, "level", "logger", "msg", ...fields}` — with `Error` values
 * serialized as `{name, message, stack, cause, ...own fields}`.
 *
 * Why our own ~150 lines instead of pino or LogTape: zero dependencies and zero permissions (pino
 * needs full `--allow-env` and `--allow-sys=hostname` under Deno 2), a level check
 * that is one integer comparison, and the field layout we want without a formatter layer.
 *
 * The level and format come from controller-runtime's zap flags so the chart's values and
 * operators' habits carry over: `--zap-log-level=debug|info|warn|error|<n>` (a positive integer
 * n means "verbosity n", i.e. debug here), `--zap-devel` (human-readable lines, default level
 * debug), `--zap-encoder=json|console`, `--zap-time-encoding=epoch|millis|nano|iso8601|rfc3339|
 * rfc3339nano` (how `ts` is written; default iso8601, UTC with milliseconds — controller-runtime's
 * default is epoch) and `--zap-stacktrace-level=info|error|panic` (lines at or above it carry a
 * `stacktrace` field; default panic, which no line reaches — controller-runtime's is error).
 * {@link configureLogging} takes them out of an argument list and leaves the rest for the role's
 * own flag parser.
 *
 * Logging is not the hot path's business: the conversion path logs nothing per object.
 */

/** Severity, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Output shape: JSON lines (production) or zap-development-style console lines. */
export type LogFormat = "json" | "console";

/** Extra key/value pairs of one log line. */
export type LogFields = Readonly<Record<string, unknown>>;

/** A named logger; every method writes at most one line. */
export interface Logger {
  readonly name: string;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Whether a line at `level` would be written (to skip building expensive fields). */
  enabled(level: LogLevel): boolean;
  /** A logger with the same name that adds `fields` to every line (call-site fields win). */
  with(fields: LogFields): Logger;
  /** A logger named `<name>.<suffix>` that keeps this logger's fields. */
  child(suffix: string): Logger;
}

/** How the `ts` field is written (zap's time encoders). */
export type TimeEncoding = "epoch" | "millis" | "nano" | "iso8601" | "rfc3339" | "rfc3339nano";

export const TIME_ENCODINGS: readonly TimeEncoding[] = [
  "epoch",
  "millis",
  "nano",
  "iso8601",
  "rfc3339",
  "rfc3339nano",
];

/** From which level lines carry a `stacktrace`; `panic` is above every level, i.e. never. */
export type StacktraceLevel = "info" | "error" | "panic";

/** The effective logging configuration. */
export interface LoggingConfig {
  level: LogLevel;
  format: LogFormat;
  timeEncoding: TimeEncoding;
  stacktraceLevel: StacktraceLevel;
}

const RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 };

let minRank = RANK.info;
let format: LogFormat = "json";
let timeEncoding: TimeEncoding = "iso8601";
/** Lines at or above this rank carry a stack; 4 = none (`panic`). */
let stackRank = 4;
const STACK_RANK: Readonly<Record<StacktraceLevel, number>> = { info: 1, error: 3, panic: 4 };
let sink: (line: string) => void = writeStderr;

const encoder = new TextEncoder();

function writeStderr(line: string): void {
  const bytes = encoder.encode(line + "\n");
  let off = 0;
  try {
    while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
  } catch {
    // stderr is gone (closed pipe): nothing sensible is left to do with a log line.
  }
}

/** Sets the global minimum level. */
export function setLogLevel(level: LogLevel): void {
  minRank = RANK[level];
}

/** The global minimum level. */
export function getLogLevel(): LogLevel {
  return (Object.keys(RANK) as LogLevel[]).find((l) => RANK[l] === minRank) ?? "info";
}

/** Sets the global output format. */
export function setLogFormat(f: LogFormat): void {
  format = f;
}

/** Sets how `ts` is written. */
export function setTimeEncoding(e: TimeEncoding): void {
  timeEncoding = e;
}

/** Sets from which level lines carry a `stacktrace`. */
export function setStacktraceLevel(l: StacktraceLevel): void {
  stackRank = STACK_RANK[l];
}

/**
 * `ts` as JSON text: a number for the epoch encodings (`nano` as exact integer digits), else a
 * quoted UTC time.
 */
export function encodeTime(ms: number, enc: TimeEncoding = timeEncoding): string {
  switch (enc) {
    case "epoch":
      return String(ms / 1000);
    case "millis":
      return String(ms);
    case "nano":
      return (BigInt(Math.round(ms)) * 1_000_000n).toString();
    case "iso8601":
      return JSON.stringify(new Date(ms).toISOString());
    case "rfc3339":
      return JSON.stringify(new Date(ms).toISOString().replace(/\.\d+Z$/, "Z"));
    case "rfc3339nano":
      return JSON.stringify(
        new Date(ms).toISOString().replace(/\.(\d*?)0*Z$/, (_m, d: string) => d ? `.${d}Z` : "Z"),
      );
  }
}

/**
 * Replaces where lines go (default: stderr). Tests capture lines with it; pass undefined to
 * restore stderr.
 */
export function setLogSink(fn: ((line: string) => void) | undefined): void {
  sink = fn ?? writeStderr;
}

function parseLevel(v: string): LogLevel {
  const s = v.trim().toLowerCase();
  if (s === "debug" || s === "info" || s === "error") return s;
  if (s === "warn" || s === "warning") return "warn";
  // zap: a positive integer n is verbosity level n (zapcore.Level(-n)), i.e. more than info.
  if (/^\d+$/.test(s) && Number(s) > 0) return "debug";
  throw new Error(
    `invalid --zap-log-level ${JSON.stringify(v)}: want debug, info, warn, error or an integer > 0`,
  );
}

function parseTimeEncoding(v: string): TimeEncoding {
  const s = v.trim().toLowerCase();
  if (s === "nanos") return "nano"; // zap's own spelling
  if ((TIME_ENCODINGS as readonly string[]).includes(s)) return s as TimeEncoding;
  throw new Error(
    `invalid --zap-time-encoding ${JSON.stringify(v)}: want ${TIME_ENCODINGS.join(", ")}`,
  );
}

function parseStacktraceLevel(v: string): StacktraceLevel {
  const s = v.trim().toLowerCase();
  if (s === "info" || s === "error" || s === "panic") return s;
  throw new Error(`invalid --zap-stacktrace-level ${JSON.stringify(v)}: want info, error or panic`);
}

function parseBool(flag: string, v: string): boolean {
  if (/^(1|t|true)$/i.test(v)) return true;
  if (/^(0|f|false)$/i.test(v)) return false;
  throw new Error(`invalid ${flag} ${JSON.stringify(v)}: want true or false`);
}

/**
 * Reads the zap-compatible flags out of `args`, applies them globally and returns the resulting
 * configuration plus the arguments it did not consume (in order). Flags may be written
 * `--flag=value` or `--flag value` (`--zap-devel` alone means true). Invalid values throw.
 */
export function configureLogging(
  args: readonly string[],
): { config: LoggingConfig; rest: string[] } {
  let level: LogLevel | undefined;
  let devel = false;
  let enc: LogFormat | undefined;
  let time: TimeEncoding | undefined;
  let stack: StacktraceLevel | undefined;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const m =
      /^--?(zap-log-level|zap-devel|zap-encoder|zap-time-encoding|zap-stacktrace-level)(?:=(.*))?$/s
        .exec(a);
    if (!m) {
      rest.push(a);
      continue;
    }
    const [, flag, inline] = m;
    if (flag === "zap-devel") {
      devel = inline === undefined ? true : parseBool("--zap-devel", inline);
      continue;
    }
    let v = inline;
    if (v === undefined) {
      if (i + 1 >= args.length) throw new Error(`flag --${flag} needs a value`);
      v = args[++i];
    }
    if (flag === "zap-log-level") level = parseLevel(v);
    else if (flag === "zap-time-encoding") time = parseTimeEncoding(v);
    else if (flag === "zap-stacktrace-level") stack = parseStacktraceLevel(v);
    else if (v === "json" || v === "console") enc = v;
    else throw new Error(`invalid --zap-encoder ${JSON.stringify(v)}: want json or console`);
  }
  const config: LoggingConfig = {
    level: level ?? (devel ? "debug" : "info"),
    format: enc ?? (devel ? "console" : "json"),
    timeEncoding: time ?? "iso8601",
    stacktraceLevel: stack ?? "panic",
  };
  setLogLevel(config.level);
  setLogFormat(config.format);
  setTimeEncoding(config.timeEncoding);
  setStacktraceLevel(config.stacktraceLevel);
  return { config, rest };
}

/**
 * A JSON-safe view of an error: name, message, stack, cause (recursively) and the error's own
 * enumerable fields (e.g. `status`/`reason` of a Kubernetes API error).
 */
export function serializeError(e: unknown, depth = 0): Record<string, unknown> {
  if (!(e instanceof Error)) return { message: String(e) };
  const out: Record<string, unknown> = { name: e.name, message: e.message };
  for (const [k, v] of Object.entries(e)) {
    if (!(k in out) && typeof v !== "function") out[k] = v;
  }
  if (e.stack) out.stack = e.stack;
  if (e.cause !== undefined && depth < 5) {
    out.cause = e.cause instanceof Error ? serializeError(e.cause, depth + 1) : e.cause;
  }
  return out;
}

const RESERVED = new Set(["ts", "level", "logger", "msg", "stacktrace"]);

function stringify(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === "bigint") return v.toString();
    if (v instanceof Error) return serializeError(v);
    if (typeof v === "object" && v !== null) {
      if (seen.has(v)) return "[Circular]";
      seen.add(v);
    }
    return v;
  });
}

/** The caller's stack, without this module's frames (`--zap-stacktrace-level`). */
function callerStack(): string {
  const frames = (new Error().stack ?? "").split("\n").slice(1);
  const here = import.meta.url;
  return frames.filter((f) => !f.includes(here)).map((f) => f.trim()).join("\n");
}

function emit(level: LogLevel, logger: string, msg: string, fields: LogFields | undefined): void {
  const ts = encodeTime(Date.now());
  const stacktrace = RANK[level] >= stackRank ? callerStack() : undefined;
  if (format === "console") {
    const shown = timeEncoding === "iso8601" || timeEncoding.startsWith("rfc")
      ? JSON.parse(ts) as string
      : ts;
    const extra = fields && Object.keys(fields).length ? `\t${stringify(fields)}` : "";
    sink(
      `${shown}\t${level.toUpperCase()}\t${logger}\t${msg}${extra}` +
        (stacktrace === undefined ? "" : `\n${stacktrace}`),
    );
    return;
  }
  // `ts` is spliced in as JSON text: the `nano` encoding's integer is beyond a double's precision.
  const line: Record<string, unknown> = { level, logger, msg };
  if (fields) {
    for (const [k, v] of Object.entries(fields)) line[RESERVED.has(k) ? `field.${k}` : k] = v;
  }
  if (stacktrace !== undefined) line.stacktrace = stacktrace;
  let text: string;
  try {
    text = stringify(line);
  } catch (e) {
    text = stringify({ level, logger, msg, logError: `unserializable fields: ${e}` });
  }
  sink(`{"ts":${ts},${text.slice(1)}`);
}

class JsonLogger implements Logger {
  constructor(readonly name: string, private readonly base: LogFields | undefined) {}

  #log(level: LogLevel, msg: string, fields: LogFields | undefined): void {
    if (RANK[level] < minRank) return;
    emit(level, this.name, msg, this.base ? { ...this.base, ...fields } : fields);
  }

  debug(msg: string, fields?: LogFields): void {
    this.#log("debug", msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.#log("info", msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.#log("warn", msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.#log("error", msg, fields);
  }
  enabled(level: LogLevel): boolean {
    return RANK[level] >= minRank;
  }
  with(fields: LogFields): Logger {
    return new JsonLogger(this.name, { ...this.base, ...fields });
  }
  child(suffix: string): Logger {
    return new JsonLogger(`${this.name}.${suffix}`, this.base);
  }
}

/** A logger named `name` (dotted names by convention: `kube.informer`, `webhook.registry`). */
export function createLogger(name: string): Logger {
  return new JsonLogger(name, undefined);
}

/** Formats milliseconds the way Go prints a time.Duration ("1.5s", "5m0s", "250ms"). */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  ms = Math.abs(ms);
  if (ms < 1000) return `${sign}${trim(ms)}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  if (h > 0) return `${sign}${h}h${m}m${trim(s)}s`;
  if (m > 0) return `${sign}${m}m${trim(s)}s`;
  return `${sign}${trim(s)}s`;
}

function trim(n: number): string {
  return String(Number(n.toFixed(3)));
}
