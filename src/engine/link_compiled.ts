/**
 * The compiled linker: one op list (one direction of a plan, or a ForEach's nested list) becomes
 * one generated JavaScript function, built with `new Function` once at link time. The hot, simple
 * ops are emitted as straight-line code — `copy` (FieldRename, identity copies), `set`
 * (Constant, DefaultValue), `when` around either, and the `carry` walk (one generated function
 * per level of the carry tree, its keys a `switch`) — and every other op is called as its
 * interpreted closure from the generated code. The interpreted linker (convert.ts) stays the
 * reference: the law suite and tests/engine/compiled_test.ts require identical output and
 * identical errors from both.
 *
 * Safety: the only text taken from a plan into the code is path segments and carry-tree keys, and
 * each is emitted by {@link literal} as a double-quoted string literal of printable ASCII only
 * (JSON-escaped, every other character as `\uXXXX`), so no plan text can end the literal or be
 * read as code. Property reads always use bracket notation over such a literal after an
 * `Object.hasOwn` check (no prototype lookups); a write of the key `__proto__` goes through the
 * engine's `setKey`. Values (constants, `when` operands) never become code: they are passed in as
 * an array and indexed by position, like the interpreted closures and the helper functions.
 * docs/design/engine.md#the-compiled-linker has the argument in full and the fallback.
 */
import { isJsonObject } from "../lib/json.ts";
import type { CarryTree } from "./schema.ts";
import { carryTarget } from "./strategies/_core_ops.ts";
import type { OpFn } from "./strategy.ts";
import type { JsonValue, OpData } from "./types.ts";
import { ABSENT, deepCopy, jsonEqual, setKey, setPath } from "./value.ts";

/**
 * `s` as a JavaScript string literal: `"`-quoted, JSON escapes for `"`, `\` and control
 * characters, every character outside printable ASCII as `\uXXXX` (so U+2028/U+2029, lone
 * surrogates and `</script>`-style text are inert). Throws on a non-string.
 */
export function literal(s: string): string {
  if (typeof s !== "string") throw new TypeError("a generated literal must be a string");
  return JSON.stringify(s).replace(
    /[^\x20-\x7e]|</g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** The interpreted closure of the op at `index` (what the generated code calls for that op). */
export type LinkOne = (op: OpData, index: number) => OpFn;

/** What the generated code receives, by parameter name (never data spliced as code). */
interface Env {
  /** Interpreted closures of the ops not generated. */
  F: OpFn[];
  /** Constant values (`set` values, `when` operands). */
  K: JsonValue[];
  /** Path segment arrays, for the helpers called on a slow path. */
  P: string[][];
}

const HELPER_NAMES = ["A", "O", "H", "KS", "SK", "SP", "D", "EQ", "CT"] as const;
const HELPERS = [
  ABSENT,
  isJsonObject,
  Object.hasOwn,
  Object.keys,
  setKey,
  setPath,
  deepCopy,
  jsonEqual,
  carryTarget,
] as const;

/** Emits the body of one op list; see the module doc. */
class Emitter {
  readonly env: Env = { F: [], K: [], P: [] };
  /** Carry level functions, emitted before the op list's function. */
  readonly levels: string[] = [];
  private n = 0;

  constructor(private readonly linkOne: LinkOne) {}

  private fresh(prefix: string): string {
    return `${prefix}${this.n++}`;
  }

  private constant(v: JsonValue): string {
    this.env.K.push(v);
    return `K[${this.env.K.length - 1}]`;
  }

  private path(segments: string[]): string {
    this.env.P.push(segments);
    return `P[${this.env.P.length - 1}]`;
  }

  /** The statements of one op at `index`; `share` = the shareInput carry (see LinkOptions). */
  op(op: OpData, index: number, share: boolean): string {
    const inline = this.inline(op, share);
    if (inline !== undefined) return inline;
    this.env.F.push(this.linkOne(op, index));
    return `F[${this.env.F.length - 1}](input, output);`;
  }

  /** The generated statements of `op`, or undefined when it runs as its interpreted closure. */
  private inline(op: OpData, share: boolean): string | undefined {
    switch (op.op) {
      case "copy": {
        const { from, to } = op;
        return isSegments(from) && isSegments(to) && to.length > 0
          ? this.copy(from, to)
          : undefined; // the empty target: setPath's own error, from the interpreted op
      }
      case "set":
        return isSegments(op.to) && op.to.length > 0
          ? this.write(op.to, `D(${this.constant(op.value as JsonValue)})`)
          : undefined;
      case "when": {
        const inner = op.inner as OpData | undefined;
        if (!isSegments(op.path) || (inner?.op !== "copy" && inner?.op !== "set")) return undefined;
        const body = this.inline(inner, false);
        if (body === undefined) return undefined;
        const v = this.fresh("v");
        const equals = this.constant(op.equals as JsonValue);
        return `${this.read(v, op.path)}\nif (${v} !== A && EQ(${v}, ${equals})) {\n${body}\n}`;
      }
      case "carry":
        return this.carry(op.tree as CarryTree, share);
    }
    return undefined;
  }

  /** `let v = <value at segments of input, or A>;` exactly as getPath reads. */
  private read(v: string, segments: string[]): string {
    let inner = `${v} = c;`;
    for (let i = segments.length - 1; i >= 0; i--) {
      const k = literal(segments[i]);
      inner = `if (O(c) && H(c, ${k})) { c = c[${k}]; ${inner} }`;
    }
    return `let ${v} = A;\n{ let c = input; ${inner} }`;
  }

  private copy(from: string[], to: string[]): string {
    const v = this.fresh("v");
    return `${this.read(v, from)}\nif (${v} !== A) {\n${this.write(to, `D(${v})`)}\n}`;
  }

  /**
   * Writes `value` at `segments` (non-empty) of the output as setPath does: missing maps are
   * created; at a non-map intermediate setPath itself runs (and throws its error).
   */
  private write(segments: string[], value: string): string {
    const label = this.fresh("w");
    const x = this.fresh("x");
    const lines = [`${label}: { const ${x} = ${value}; let o = output, n;`];
    for (let i = 0; i < segments.length - 1; i++) {
      const k = literal(segments[i]);
      lines.push(
        `if (!H(o, ${k})) { n = {}; ${store("o", segments[i], "n")} o = n; }`,
        `else { n = o[${k}]; if (!O(n)) { SP(output, ${
          this.path(segments)
        }, ${x}); break ${label}; } o = n; }`,
      );
    }
    lines.push(`${store("o", segments[segments.length - 1], x)} }`);
    return lines.join("\n");
  }

  /**
   * The carry walk of _core_ops.ts, one generated function per tree level. A level writes into
   * the output map as it walks — in place into an existing map, else into a map it creates on
   * the first write and returns — with a named store per declared key. That gives the same keys,
   * values and key order as the interpreted walk (existing keys first, then the carried ones in
   * walk order) while V8 keeps the map a fast object past the ~12 keyed stores at which the
   * interpreted walk must rebuild it with `Object.fromEntries`.
   */
  private carry(tree: CarryTree, share: boolean): string {
    return `${this.level(tree, true, share)}(input, output);`;
  }

  /** Emits the level function for `tree`; returns its name. */
  private level(tree: CarryTree, root: boolean, share: boolean): string {
    const name = this.fresh("L");
    const cases: string[] = [];
    const skips: string[] = [];
    for (const key of Object.keys(tree)) {
      const node = tree[key];
      const k = literal(key);
      if (node === "skip") skips.push(`case ${k}:`);
      else if (node === "copy") {
        const v = share ? `input[${k}]` : `D(input[${k}])`;
        cases.push(`case ${k}: ${store("(o ??= {})", key, v)} continue;`);
      } else {
        const child = this.level(node, false, share);
        cases.push(
          `case ${k}: { const v = input[${k}]; if (!O(v)) continue;`,
          `const r = ${child}(v, CT(o, ${k}));`,
          `if (r !== undefined) ${store("(o ??= {})", key, "r")} continue; }`,
        );
      }
    }
    if (skips.length > 0) cases.push(...skips, "continue;");
    const copy = share ? "input[key]" : "D(input[key])";
    cases.push(root ? "default: continue;" : `default: SK(o ??= {}, key, ${copy}); continue;`);
    this.levels.push(
      `function ${name}(input, existing) {`,
      "let o = existing; const keys = KS(input);",
      "for (let i = 0; i < keys.length; i++) {",
      "const key = keys[i];",
      "switch (key) {",
      ...cases,
      "} }",
      "return o === existing ? undefined : o; }",
    );
    return name;
  }
}

/** `obj[key] = value;` for a key known now; `__proto__` through setKey. */
function store(obj: string, key: string, value: string): string {
  return key === "__proto__"
    ? `SK(${obj}, ${literal(key)}, ${value});`
    : `${obj}[${literal(key)}] = ${value};`;
}

function isSegments(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === "string");
}

/** The generated source of an op list (without the parameter list); exported for tests. */
export function generate(
  ops: readonly OpData[],
  shareLast: boolean,
  linkOne: LinkOne,
): { source: string; env: Env } {
  const e = new Emitter(linkOne);
  const body = ops.map((op, i) =>
    e.op(op, i, shareLast && op.op === "carry" && i === ops.length - 1)
  );
  const source = [
    '"use strict";',
    ...e.levels,
    "return function compiledOps(input, output) {",
    ...body,
    "};",
  ].join("\n");
  return { source, env: e.env };
}

/**
 * Compiles an op list into one function, or returns undefined where code generation is
 * unavailable (`new Function` throws EvalError, as under a Content-Security-Policy without
 * `unsafe-eval`); the caller then links the interpreted closures.
 */
export function compileOps(
  ops: readonly OpData[],
  shareLast: boolean,
  linkOne: LinkOne,
): OpFn | undefined {
  const { source, env } = generate(ops, shareLast, linkOne);
  let factory: (...args: unknown[]) => OpFn;
  try {
    factory = new Function("F", "K", "P", ...HELPER_NAMES, source) as typeof factory;
  } catch (e) {
    if (e instanceof EvalError) return undefined;
    throw e;
  }
  return factory(env.F, env.K, env.P, ...HELPERS);
}

/**
 * The compiled form of an op list whose interpreted closures `fns` are already linked (linking
 * them validates the op data and is what a link error comes from): generated on the first call,
 * so linking stays as cheap as the interpreted linker and a plan never used costs no generated
 * code. Where code generation is unavailable it keeps running the interpreted closures.
 */
export function compiledOps(
  ops: readonly OpData[],
  fns: readonly OpFn[],
  shareLast: boolean,
): OpFn {
  // Held until the first call only: afterwards the generated function keeps what it calls.
  let pending: { ops: readonly OpData[]; fns: readonly OpFn[] } | undefined = { ops, fns };
  let run: OpFn = (input, output) => {
    const p = pending!;
    run = compileOps(p.ops, shareLast, (_op, i) => p.fns[i]) ?? interpretedOps(p.fns);
    pending = undefined;
    run(input, output);
  };
  return (input, output) => run(input, output);
}

/** The interpreted closures run in order (the fallback without code generation). */
function interpretedOps(fns: readonly OpFn[]): OpFn {
  return (input, output) => {
    for (let i = 0; i < fns.length; i++) fns[i](input, output);
  };
}
