/**
 * The subset of Go `text/template` used by join templates: literal text, field
 * references `{{.name}}`, trim markers `{{- ` / ` -}}` and comments `{{/* … *\/}}`, executed
 * against a map with "missing key is an error". Everything else Go's language has (pipelines,
 * functions, `if`/`range`/`with`, variables, literals, field chains) is rejected at parse time:
 * rendering it differently from the reference would silently corrupt data, refusing it cannot.
 */
import type { JsonValue } from "./types.ts";
import { ConversionError, typeName } from "./value.ts";

/** A template that does not parse, or uses a construct outside the supported subset. */
export class TemplateSyntaxError extends Error {
  override name = "TemplateSyntaxError";
}

export type TemplateNode = { text: string } | { field: string };

/** Go's lexer whitespace inside actions and for trim markers. */
const SPACE = " \t\r\n";
const isSpace = (c: string | undefined) => c !== undefined && c.length === 1 && SPACE.includes(c);

function trimLeftSpace(s: string): string {
  let i = 0;
  while (i < s.length && isSpace(s[i])) i++;
  return s.slice(i);
}

function trimRightSpace(s: string): string {
  let i = s.length;
  while (i > 0 && isSpace(s[i - 1])) i--;
  return s.slice(0, i);
}

/** `.name`: Go identifiers (letters, digits, `_`; a digit after the dot would lex as a number). */
const FIELD = /^\.([\p{L}_][\p{L}\p{Nd}_]*)$/u;

/** Line:column of an offset, for error messages in Go's style. */
function position(src: string, offset: number): string {
  const before = src.slice(0, offset);
  const line = before.split("\n").length;
  return `${line}:${offset - before.lastIndexOf("\n")}`;
}

/** Parses a template into text and field nodes; throws TemplateSyntaxError. */
export function parseTemplate(src: string): TemplateNode[] {
  const nodes: TemplateNode[] = [];
  let text = "";
  let trimNext = false;
  let i = 0;
  const flushText = (leftTrim: boolean) => {
    let t = text;
    if (trimNext) t = trimLeftSpace(t);
    if (leftTrim) t = trimRightSpace(t);
    if (t !== "") nodes.push({ text: t });
    text = "";
  };
  while (i < src.length) {
    const open = src.indexOf("{{", i);
    if (open < 0) {
      text += src.slice(i);
      break;
    }
    text += src.slice(i, open);
    let k = open + 2;
    const leftTrim = src[k] === "-" && isSpace(src[k + 1]);
    if (leftTrim) k += 2;
    flushText(leftTrim);
    if (src.startsWith("/*", k)) {
      const end = src.indexOf("*/", k + 2);
      if (end < 0) throw new TemplateSyntaxError(`${position(src, open)}: unclosed comment`);
      let j = end + 2;
      let rightTrim = false;
      if (isSpace(src[j]) && src[j + 1] === "-" && src.startsWith("}}", j + 2)) {
        rightTrim = true;
        j += 2;
      }
      if (!src.startsWith("}}", j)) {
        throw new TemplateSyntaxError(
          `${position(src, open)}: comment ends before closing delimiter`,
        );
      }
      trimNext = rightTrim;
      i = j + 2;
      continue;
    }
    const close = src.indexOf("}}", k);
    if (close < 0) throw new TemplateSyntaxError(`${position(src, open)}: unclosed action`);
    let body = src.slice(k, close);
    const rightTrim = body.length >= 2 && body.endsWith("-") && isSpace(body[body.length - 2]);
    if (rightTrim) body = body.slice(0, -2);
    const inner = trimRightSpace(trimLeftSpace(body));
    const m = FIELD.exec(inner);
    if (m === null) {
      throw new TemplateSyntaxError(
        `${position(src, open)}: unsupported action {{${
          src.slice(open + 2, close)
        }}}: only field references like {{.name}} (with optional trim markers and comments) are supported`,
      );
    }
    nodes.push({ field: m[1] });
    trimNext = rightTrim;
    i = close + 2;
  }
  flushText(false);
  return nodes;
}

/**
 * Go `strconv.FormatFloat(v, 'g', -1, 64)`, which `%v` uses for float64: the shortest digits that
 * round-trip, in exponent form when the decimal exponent is < -4 or >= 6 (`1e+06`, `1e-05`,
 * `1.234567e+06`; at least two exponent digits), positional otherwise.
 */
export function formatGoFloat(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v === 0) return Object.is(v, -0) ? "-0" : "0";
  // toExponential() without an argument yields the shortest round-trip digits.
  const [mantissa, expText] = v.toExponential().split("e");
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? "-" : "+";
    return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  // In [1e-4, 1e6) JS prints the same shortest digits positionally.
  return String(v);
}

/** Go `%v` of one template value; maps and arrays are refused (Go would print `map[…]`). */
export function formatGoValue(v: JsonValue, what: string): string {
  if (v === null) return "<no value>";
  switch (typeof v) {
    case "string":
      return v;
    case "boolean":
      return v ? "true" : "false";
    case "number":
      return formatGoFloat(v);
    case "bigint":
      return v.toString(); // an int64 beyond 2^53: Go prints an int64 as its digits
  }
  throw new ConversionError(
    `${what} is a ${typeName(v)}; join templates print only strings, numbers, booleans and null`,
  );
}

/** A parsed join template, executed with "missing key is an error" semantics. */
export class GoTemplate {
  readonly nodes: readonly TemplateNode[];

  constructor(readonly source: string) {
    this.nodes = parseTemplate(source);
  }

  /** Field names the template references, in order of first use. */
  get fields(): string[] {
    const seen = new Set<string>();
    for (const n of this.nodes) if ("field" in n) seen.add(n.field);
    return [...seen];
  }

  /** Renders the template; a referenced key missing from `data` is a ConversionError. */
  execute(data: ReadonlyMap<string, JsonValue>): string {
    let out = "";
    for (const n of this.nodes) {
      if ("text" in n) {
        out += n.text;
        continue;
      }
      if (!data.has(n.field)) {
        throw new ConversionError(
          `join template: map has no entry for key ${JSON.stringify(n.field)} (at {{.${n.field}}})`,
        );
      }
      out += formatGoValue(data.get(n.field)!, `join template field ${n.field}`);
    }
    return out;
  }
}
