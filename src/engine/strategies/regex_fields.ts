/**
 * ScalarToFields / FieldsToScalar: one string on one side (A) is several scalar fields on the
 * other (B). Splitting searches an RE2 pattern and writes each named group's capture,
 * coerced to the field's declared kind; joining renders a Go text/template over the present
 * fields. Nothing proves the pattern and the template are inverses, so the rule is always
 * *unverifiable* and lossless only when the author says so (`losslessOverride`).
 */
import { coerceScalar, type ScalarKind } from "../coerce.ts";
import { compareBytes } from "../go.ts";
import { GoTemplate, TemplateSyntaxError } from "../go_template.ts";
import { Re2Pattern, Re2SyntaxError } from "../re2.ts";
import { classify, isScalarKind } from "../schema.ts";
import { mirror } from "../mirror.ts";
import type { OpLinker, Resolved, RuleContext } from "../strategy.ts";
import type { JsonObject, JsonValue } from "../types.ts";
import { ABSENT, ConversionError, getPath, setPath, typeName } from "../value.ts";

interface RegexFieldsParams {
  /** The single string field, on A (hubPath for ScalarToFields, spokePath for FieldsToScalar). */
  scalarPath: string;
  pattern: string;
  /** Group name → field path on the other side. */
  fields: Record<string, string>;
  joinTemplate: string;
  losslessOverride: boolean;
}

/** One captured field in op data. */
interface FieldOp {
  name: string;
  path: string[];
  kind: ScalarKind;
}

export const [scalarToFields, fieldsToScalar] = mirror<RegexFieldsParams>({
  names: ["ScalarToFields", "FieldsToScalar"],
  translate: (p, o) => ({
    scalarPath: p.path(`${o.a}Path`),
    pattern: p.string("pattern"),
    fields: p.stringMap(`${o.b}Fields`, true),
    joinTemplate: p.string("joinTemplate"),
    losslessOverride: p.optBool("losslessOverride"),
  }),
  compile(p, { name, a, b }, ctx) {
    const fieldsParam = `${b.side}Fields`;
    // The scalar's kind is not checked: the join writes a string there regardless.
    const scalar = a.resolve(p.scalarPath, `${a.side}Path`);
    a.claim(scalar);

    const pattern = compilePattern(p.pattern, ctx, p.scalarPath);
    const template = compileTemplate(p.joinTemplate, ctx, p.scalarPath);

    const names = Object.keys(p.fields).sort(compareBytes);
    if (names.length === 0) {
      ctx.error("invalid-parameter", `${fieldsParam} must name at least one field`);
    }
    const fields: FieldOp[] = [];
    for (const group of names) {
      const path = p.fields[group];
      if (pattern !== undefined && !pattern.hasGroup(group)) {
        ctx.error(
          "invalid-parameter",
          `${fieldsParam}.${group}: the pattern has no named group ${JSON.stringify(group)}`,
          path,
        );
      }
      const r = b.resolve(path, `${fieldsParam}.${group}`);
      fields.push({ name: group, path: r.segments, kind: fieldKind(r, ctx) });
      // A field path that does not resolve is not claimed (path-not-found already reports it).
      if (r.node !== undefined) b.claim(r);
    }
    ctx.warn(
      "unverifiable",
      `${name} cannot verify that the pattern and the join template are inverses; ` +
        `losslessness is taken from losslessOverride (${p.losslessOverride})`,
      p.scalarPath,
    );

    return {
      aPaths: [p.scalarPath],
      bPaths: names.map((n) => p.fields[n]).sort(compareBytes),
      lossless: { aToB: p.losslessOverride, bToA: p.losslessOverride },
      aToB: pattern === undefined
        ? undefined
        : { op: "regexSplit", from: scalar.segments, pattern: p.pattern, fields },
      bToA: template === undefined ? undefined : {
        op: "templateJoin",
        template: p.joinTemplate,
        fields: fields.map(({ name, path }) => ({ name, path })),
        to: scalar.segments,
      },
    };
  },
  ops: { regexSplit: linkSplit, templateJoin: linkJoin },
});

function compilePattern(source: string, ctx: RuleContext, at: string): Re2Pattern | undefined {
  try {
    return Re2Pattern.compile(source);
  } catch (e) {
    if (!(e instanceof Re2SyntaxError)) throw e;
    ctx.error("invalid-parameter", `pattern ${JSON.stringify(source)}: ${e.message}`, at);
    return undefined;
  }
}

function compileTemplate(source: string, ctx: RuleContext, at: string): GoTemplate | undefined {
  try {
    return new GoTemplate(source);
  } catch (e) {
    if (!(e instanceof TemplateSyntaxError)) throw e;
    ctx.error("invalid-parameter", `joinTemplate ${JSON.stringify(source)}: ${e.message}`, at);
    return undefined;
  }
}

/** The declared scalar kind of a field; anything else is a type-mismatch. */
function fieldKind(r: Resolved, ctx: RuleContext): ScalarKind {
  if (r.node === undefined) return "string";
  const kind = classify(r.node).kind;
  if (!isScalarKind(kind)) {
    ctx.error(
      "type-mismatch",
      `${r.path} is ${kind}; captured fields must be strings, integers, numbers or booleans`,
      r.path,
    );
    return "string";
  }
  return kind as ScalarKind;
}

/** Split: search the pattern in the string and write every field's capture, coerced. */
function linkSplit(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const fields = op.fields as FieldOp[];
  const pattern = Re2Pattern.compile(op.pattern as string);
  const what = from.join(".");
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    if (typeof v !== "string") {
      throw new ConversionError(`${what} is a ${typeName(v)}, not a string`);
    }
    const captures = pattern.search(v);
    if (captures === undefined) {
      throw new ConversionError(
        `${what}: ${JSON.stringify(v)} does not match pattern ${JSON.stringify(pattern.source)}`,
      );
    }
    for (const f of fields) {
      const capture = captures.get(f.name) ?? "";
      const where = `${what} group ${f.name} → ${f.path.join(".")}`;
      setPath(output, f.path, coerceScalar(capture, f.kind, "Error", where));
    }
  };
}

/** Join: render the template over the present fields (nulls included); none present, no write. */
function linkJoin(...[op]: Parameters<OpLinker>) {
  const fields = op.fields as { name: string; path: string[] }[];
  const to = op.to as string[];
  const template = new GoTemplate(op.template as string);
  const what = to.join(".");
  return (input: JsonObject, output: JsonObject) => {
    const data = new Map<string, JsonValue>();
    for (const f of fields) {
      const v = getPath(input, f.path);
      if (v !== ABSENT) data.set(f.name, v);
    }
    if (data.size === 0) return;
    let text: string;
    try {
      text = template.execute(data);
    } catch (e) {
      if (e instanceof ConversionError) throw new ConversionError(`${what}: ${e.message}`);
      throw e;
    }
    setPath(output, to, text);
  };
}
