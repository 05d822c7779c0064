/**
 * The CEL environment of the CEL strategy, on @bufbuild/cel.
 *
 * - Environment: the standard library and macros only, one dynamic variable `object`. JSON
 *   numbers are doubles; `double + int` is a no-such-overload error; int overflow is an error.
 * - Checking: the library does not export its type checker, so `checkExpression` below is a small
 *   checker of our own over the parsed AST: undeclared identifiers and functions (which is how
 *   extension functions such as `split` are refused), arity and statically known argument types
 *   against the standard overloads, and the syntax the reference's environment lacks (optional
 *   syntax, two-variable comprehensions, message construction).
 * - Cost bound: the library has no cost model, so evaluation is metered here (see `COST` and
 *   docs/strategies.md "CEL"): a static cost per evaluated node in cel-go's units, charged per
 *   evaluation for the nodes outside loops and per iteration for each comprehension body, plus
 *   size-dependent charges for string, equality and membership work, and for converting the
 *   result to JSON. Going over `CEL_COST_LIMIT` aborts the evaluation.
 * - Two library behaviours are corrected by rewriting the AST before planning: `has(m.f)` and
 *   `k in m` treat a key whose value is null as absent (cel-go does not), and the macros' list
 *   accumulation is quadratic (a chain of lazy concatenations), so `map`/`filter` append into an
 *   accumulator that only the comprehension can see.
 */
import {
  celEnv,
  celError,
  type CelFunc,
  type CelList,
  celList,
  type CelMap,
  celMap,
  type CelResult,
  CelScalar,
  type CelType,
  celType,
  type CelValue,
  isCelError,
  isCelList,
  isCelMap,
  isCelType,
  isCelUint,
  parse,
  plan,
} from "@bufbuild/cel";
import type { JsonObject, JsonValue } from "./types.ts";
import { ConversionError, setKey } from "./value.ts";

/** cel-go's default per-evaluation limit in the reference. */
export const CEL_COST_LIMIT = 1_000_000;
/** cel-go's default parser limits. */
const MAX_EXPRESSION_CODE_POINTS = 100_000;
const MAX_NESTING = 250;

/** Static cost of one evaluated node, in cel-go's runtime cost units. */
const COST = { const: 0, ident: 1, select: 1, call: 1, list: 10, map: 30 } as const;

/** An expression that does not parse or type-check in the CEL environment (docs/design/engine.md#cel). */
export class CelCompileError extends Error {
  override name = "CelCompileError";
}

type Expr = ReturnType<typeof parse>["expr"];
type ExprKind = Expr["exprKind"];
type Call = Extract<ExprKind, { case: "callExpr" }>["value"];
type Constant = Extract<ExprKind, { case: "constExpr" }>["value"];

// ---------------------------------------------------------------------------------------------
// Metering

class BudgetExceeded extends Error {
  override name = "BudgetExceeded";
}

interface Meter {
  used: number;
  exceeded: boolean;
}

/** The meter of the evaluation in progress (evaluation is synchronous and never re-entered). */
let active: Meter | undefined;

function charge(units: number): void {
  const m = active;
  if (m === undefined) return;
  m.used += units;
  if (m.used > CEL_COST_LIMIT) {
    m.exceeded = true;
    throw new BudgetExceeded(`exceeded the cost limit of ${CEL_COST_LIMIT}`);
  }
}

function remaining(): number {
  return active === undefined ? Infinity : Math.max(0, CEL_COST_LIMIT - active.used);
}

const textCost = (length: number) => Math.ceil(length / 10);

function isText(v: CelValue): v is string | Uint8Array {
  return typeof v === "string" || v instanceof Uint8Array;
}

/** Nodes (plus text/10) of a value, counted until `cap` is passed: bounded work on any value. */
function deepSize(root: CelValue, cap: number): number {
  let n = 0;
  const stack: CelValue[] = [root];
  while (stack.length > 0 && n <= cap) {
    const v = stack.pop()!;
    n += 1;
    if (isText(v)) n += textCost(v.length);
    else if (isCelList(v)) {
      for (const x of v) {
        if (n + stack.length > cap) break;
        stack.push(x);
      }
    } else if (isCelMap(v)) {
      for (const [k, x] of v) {
        if (n + stack.length > cap) break;
        stack.push(k as CelValue, x);
      }
    }
  }
  return n + stack.length;
}

/** Size-dependent cost of a standard-library call, charged before the call runs. */
function dynamicCost(name: string, target: CelValue | undefined, args: CelValue[]): number {
  const all = target === undefined ? args : [target, ...args];
  switch (name) {
    case "_==_":
    case "_!=_": {
      const a = deepSize(all[0], remaining());
      return Math.min(a, deepSize(all[1], Math.min(a, remaining())));
    }
    case "@in": {
      const container = all[1];
      if (isCelList(container)) return container.size * deepSize(all[0], remaining());
      return isText(all[0]) ? textCost(all[0].length) : 0;
    }
    case "_+_":
      // Concatenation is lazy, but its size is real work for whoever iterates it; charging it
      // keeps every list's length within the budget (repeated doubling is stopped early).
      if (isCelList(all[0]) && isCelList(all[1])) return all[0].size + all[1].size;
      break;
    case "matches":
      if (typeof all[0] === "string" && typeof all[1] === "string") {
        return textCost(all[0].length) * Math.ceil(all[1].length / 4);
      }
      return 0;
  }
  let n = 0;
  for (const a of all) if (isText(a)) n += textCost(a.length);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Environment

/** A function object of our own; the resolver only reads these members. */
function rawFunc(
  name: string,
  args: CelType[],
  result: CelType,
  call: (id: number, target: CelValue | undefined, args: CelValue[]) => CelResult | undefined,
): CelFunc {
  return {
    id: `${name}(${args.map((a) => a.name).join(",")})`,
    name,
    target: undefined,
    arguments: args,
    result,
    call,
  } as unknown as CelFunc;
}

const STD = celEnv();

/** Lists the macros' accumulators own; only their comprehension can see them while growing. */
const OWNED = new WeakMap<CelList, CelValue[]>();

const INTERNAL: CelFunc[] = [
  // Charges one comprehension iteration; wraps the loop condition.
  rawFunc("@tick", [CelScalar.DYN, CelScalar.INT], CelScalar.DYN, (_id, target, args) => {
    if (target !== undefined || args.length !== 2) return undefined;
    charge(Number(args[1]));
    return args[0];
  }),
  // `@result + [x]` of map/filter: amortised O(1) append into the accumulator.
  rawFunc("@append", [CelScalar.DYN, CelScalar.DYN], CelScalar.DYN, (_id, target, args) => {
    const [acc, tail] = args;
    if (target !== undefined || !isCelList(acc) || !isCelList(tail)) return undefined;
    charge(tail.size);
    let items = OWNED.get(acc);
    let list = acc;
    if (items === undefined) {
      items = [...acc];
      list = celList(items);
      OWNED.set(list, items);
    }
    for (const x of tail) items.push(x);
    return list;
  }),
  // has(m.f): presence of the key, also when its value is null.
  rawFunc("@has", [CelScalar.DYN, CelScalar.STRING], CelScalar.BOOL, (_id, target, args) => {
    const [obj, field] = args;
    if (target !== undefined || typeof field !== "string") return undefined;
    if (!isCelMap(obj)) {
      return celError(`has(): cannot select field ${field} from a ${celTypeName(obj)}`);
    }
    return obj.get(field) !== undefined;
  }),
];

/** Standard overloads wrapped to meter them; the first of each name charges once per call. */
function meteredStd(): CelFunc[] {
  const out: CelFunc[] = [];
  const charged = new Set<string>();
  for (const inner of STD.funcs) {
    const first = !charged.has(inner.name);
    charged.add(inner.name);
    const name = inner.name;
    const call = (id: number, target: CelValue | undefined, args: CelValue[]) => {
      if (first) {
        charge(dynamicCost(name, target, args));
        // `k in m`: the library tests presence with `!= undefined`, dropping null-valued keys.
        if (name === "@in" && isCelMap(args[1]) && isMapKey(args[0])) {
          return args[1].get(args[0]) !== undefined;
        }
      }
      return inner.call(id, target, args);
    };
    out.push(Object.create(inner, { call: { value: call } }) as CelFunc);
  }
  return out;
}

function isMapKey(v: CelValue): v is string | bigint | boolean | number {
  return typeof v === "string" || typeof v === "bigint" || typeof v === "boolean" ||
    typeof v === "number" || isCelUint(v);
}

const ENV = celEnv({
  variables: { object: CelScalar.DYN },
  funcs: [...meteredStd(), ...INTERNAL],
});

// ---------------------------------------------------------------------------------------------
// Checking

type StaticType =
  | "dyn"
  | "int"
  | "uint"
  | "double"
  | "string"
  | "bool"
  | "bytes"
  | "null_type"
  | "list"
  | "map"
  | "type"
  | "timestamp"
  | "duration";

function staticOf(t: CelType): StaticType {
  switch (t.kind) {
    case "list":
      return "list";
    case "map":
      return "map";
    case "object":
      if (t.name === "google.protobuf.Timestamp") return "timestamp";
      if (t.name === "google.protobuf.Duration") return "duration";
      return "dyn";
    default:
      return t.name as StaticType;
  }
}

interface Overload {
  member: boolean;
  target: StaticType;
  params: StaticType[];
  result: StaticType;
}

const OVERLOADS = new Map<string, Overload[]>();
for (const f of STD.funcs) {
  const list = OVERLOADS.get(f.name) ?? [];
  list.push({
    member: f.target !== undefined,
    target: f.target === undefined ? "dyn" : staticOf(f.target),
    params: f.arguments.map(staticOf),
    result: staticOf(f.result),
  });
  OVERLOADS.set(f.name, list);
}

/** Identifiers the standard environment declares besides `object`: type names. */
const TYPE_IDENTS: ReadonlySet<string> = new Set([
  "int",
  "uint",
  "double",
  "bool",
  "string",
  "bytes",
  "list",
  "map",
  "null_type",
  "type",
]);

const assignable = (arg: StaticType, param: StaticType) =>
  arg === param || arg === "dyn" || param === "dyn";

function constType(c: Constant): StaticType {
  switch (c.constantKind.case) {
    case "boolValue":
      return "bool";
    case "int64Value":
      return "int";
    case "uint64Value":
      return "uint";
    case "doubleValue":
      return "double";
    case "stringValue":
      return "string";
    case "bytesValue":
      return "bytes";
    case "nullValue":
      return "null_type";
    default:
      throw new CelCompileError(`unsupported literal ${c.constantKind.case}`);
  }
}

function checkCall(call: Call, scope: ReadonlyMap<string, StaticType>, depth: number): StaticType {
  const fn = call.function;
  const args = call.args.map((a) => check(a, scope, depth));
  const target = call.target === undefined ? undefined : check(call.target, scope, depth);
  const applied = () => `(${[...(target === undefined ? [] : [target]), ...args].join(", ")})`;
  const mismatch = () =>
    new CelCompileError(`found no matching overload for '${fn}' applied to '${applied()}'`);
  switch (fn) {
    case "_&&_":
    case "_||_":
    case "@not_strictly_false":
      if (!args.every((a) => assignable(a, "bool"))) throw mismatch();
      return "bool";
    case "_?_:_": {
      const [cond, a, b] = args;
      if (!assignable(cond, "bool")) throw mismatch();
      if (a === b || b === "null_type") return a;
      if (a === "null_type") return b;
      if (a === "dyn" || b === "dyn") return "dyn";
      throw mismatch();
    }
    case "_[_]": {
      const [operand, index] = args;
      if (operand === "list" && !["int", "uint", "dyn"].includes(index)) throw mismatch();
      if (!["list", "map", "dyn"].includes(operand)) throw mismatch();
      return "dyn";
    }
    case "_==_":
    case "_!=_": {
      const [a, b] = args;
      if (a !== b && a !== "dyn" && b !== "dyn" && a !== "null_type" && b !== "null_type") {
        throw mismatch();
      }
      return "bool";
    }
  }
  const overloads = OVERLOADS.get(fn);
  if (overloads === undefined) {
    throw new CelCompileError(
      `undeclared reference to '${fn}' (only the standard CEL library is available)`,
    );
  }
  const member = target !== undefined;
  const shaped = overloads.filter((o) => o.member === member && o.params.length === args.length);
  if (shaped.length === 0) {
    throw new CelCompileError(
      `found no matching overload for '${fn}' with ${args.length} argument(s)${
        member ? " as a method" : ""
      }`,
    );
  }
  const candidates = shaped.filter((o) =>
    (!member || assignable(target, o.target)) && o.params.every((p, i) => assignable(args[i], p))
  );
  if (candidates.length === 0) throw mismatch();
  const results = new Set(candidates.map((o) => o.result));
  return results.size === 1 ? [...results][0] : "dyn";
}

function check(e: Expr, scope: ReadonlyMap<string, StaticType>, depth: number): StaticType {
  if (depth > MAX_NESTING) {
    throw new CelCompileError(`expression nests deeper than ${MAX_NESTING} levels`);
  }
  const k = e.exprKind;
  switch (k.case) {
    case "constExpr":
      return constType(k.value);
    case "identExpr": {
      const t = scope.get(k.value.name);
      if (t !== undefined) return t;
      if (TYPE_IDENTS.has(k.value.name)) return "type";
      throw new CelCompileError(
        `undeclared reference to '${k.value.name}' (the only variable is 'object')`,
      );
    }
    case "selectExpr": {
      const operand = check(k.value.operand!, scope, depth + 1);
      if (operand !== "dyn" && operand !== "map") {
        throw new CelCompileError(`type '${operand}' does not support field selection`);
      }
      return k.value.testOnly ? "bool" : "dyn";
    }
    case "callExpr":
      return checkCall(k.value, scope, depth + 1);
    case "listExpr":
      if (k.value.optionalIndices.length > 0) {
        throw new CelCompileError("optional list elements are not supported");
      }
      for (const x of k.value.elements) check(x, scope, depth + 1);
      return "list";
    case "structExpr": {
      if (k.value.messageName !== "") {
        throw new CelCompileError(`message construction (${k.value.messageName}) is not supported`);
      }
      for (const entry of k.value.entries) {
        if (entry.optionalEntry) {
          throw new CelCompileError("optional map entries are not supported");
        }
        if (entry.keyKind.case !== "mapKey") throw new CelCompileError("invalid map literal");
        const key = check(entry.keyKind.value, scope, depth + 1);
        if (!["int", "uint", "bool", "string", "dyn"].includes(key)) {
          throw new CelCompileError(`unsupported map key type '${key}'`);
        }
        check(entry.value!, scope, depth + 1);
      }
      return "map";
    }
    case "comprehensionExpr": {
      const c = k.value;
      if (c.iterVar2 !== "") {
        throw new CelCompileError("two-variable comprehensions are not supported");
      }
      const range = check(c.iterRange!, scope, depth + 1);
      if (!["list", "map", "dyn"].includes(range)) {
        throw new CelCompileError(
          `expression of type '${range}' cannot be the range of a comprehension`,
        );
      }
      const accu = check(c.accuInit!, scope, depth + 1);
      const inner = new Map(scope).set(c.accuVar, accu).set(c.iterVar, "dyn");
      check(c.loopCondition!, inner, depth + 1);
      check(c.loopStep!, inner, depth + 1);
      return check(c.result!, new Map(scope).set(c.accuVar, accu), depth + 1);
    }
    default:
      throw new CelCompileError("unsupported expression");
  }
}

/** Parses and checks an expression; throws CelCompileError. */
export function checkExpression(source: string): Expr {
  if (source.trim() === "") throw new CelCompileError("the expression is empty");
  let codePoints = 0;
  for (const _ of source) {
    if (++codePoints > MAX_EXPRESSION_CODE_POINTS) {
      throw new CelCompileError(`the expression exceeds ${MAX_EXPRESSION_CODE_POINTS} characters`);
    }
  }
  let expr: Expr;
  try {
    expr = parse(source).expr;
  } catch (e) {
    throw new CelCompileError(e instanceof Error ? e.message : String(e));
  }
  check(expr, new Map([["object", "dyn"]]), 0);
  return expr;
}

// ---------------------------------------------------------------------------------------------
// Instrumentation

let nextId = 1n << 40n;

function node(exprKind: ExprKind): Expr {
  return { $typeName: "cel.expr.Expr", id: nextId++, exprKind } as Expr;
}

function callNode(fn: string, args: Expr[]): Expr {
  return node({
    case: "callExpr",
    value: { $typeName: "cel.expr.Expr.Call", function: fn, args, target: undefined },
  } as ExprKind);
}

function constNode(constantKind: Constant["constantKind"]): Expr {
  return node({
    case: "constExpr",
    value: { $typeName: "cel.expr.Constant", constantKind },
  } as ExprKind);
}

/** Static cost of the nodes evaluated once per evaluation of `e` (loop bodies excluded). */
function staticCost(e: Expr): number {
  const k = e.exprKind;
  switch (k.case) {
    case "constExpr":
      return COST.const;
    case "identExpr":
      return COST.ident;
    case "selectExpr":
      return COST.select + staticCost(k.value.operand!);
    case "callExpr":
      return COST.call + (k.value.target === undefined ? 0 : staticCost(k.value.target)) +
        k.value.args.reduce((n, a) => n + staticCost(a), 0);
    case "listExpr":
      return COST.list + k.value.elements.reduce((n, a) => n + staticCost(a), 0);
    case "structExpr":
      return COST.map +
        k.value.entries.reduce(
          (n, en) =>
            n + staticCost(en.value!) +
            (en.keyKind.case === "mapKey" ? staticCost(en.keyKind.value) : 0),
          0,
        );
    case "comprehensionExpr":
      return staticCost(k.value.iterRange!) + staticCost(k.value.accuInit!) +
        staticCost(k.value.result!);
    default:
      return 0;
  }
}

function isAccumulatorAppend(call: Call, accuVar: string): boolean {
  const [acc, tail] = call.args;
  return call.function === "_+_" && call.target === undefined && call.args.length === 2 &&
    acc.exprKind.case === "identExpr" && acc.exprKind.value.name === accuVar &&
    tail.exprKind.case === "listExpr";
}

/**
 * Rewrites in place: `has(x.f)` → `@has(x, "f")`; in each comprehension, `@result + [..]` →
 * `@append(...)` and the loop condition → `@tick(cond, cost of one iteration)`.
 */
function instrument(e: Expr, accuVar: string | undefined): void {
  const k = e.exprKind;
  switch (k.case) {
    case "selectExpr":
      instrument(k.value.operand!, accuVar);
      if (k.value.testOnly) {
        const field = constNode({ case: "stringValue", value: k.value.field });
        e.exprKind = callNode("@has", [k.value.operand!, field]).exprKind;
      }
      return;
    case "callExpr":
      if (k.value.target !== undefined) instrument(k.value.target, accuVar);
      for (const a of k.value.args) instrument(a, accuVar);
      if (accuVar !== undefined && isAccumulatorAppend(k.value, accuVar)) {
        k.value.function = "@append";
      }
      return;
    case "listExpr":
      for (const x of k.value.elements) instrument(x, accuVar);
      return;
    case "structExpr":
      for (const en of k.value.entries) {
        if (en.keyKind.case === "mapKey") instrument(en.keyKind.value, accuVar);
        instrument(en.value!, accuVar);
      }
      return;
    case "comprehensionExpr": {
      const c = k.value;
      instrument(c.iterRange!, accuVar);
      instrument(c.accuInit!, accuVar);
      instrument(c.result!, accuVar);
      instrument(c.loopCondition!, c.accuVar);
      instrument(c.loopStep!, c.accuVar);
      const perIteration = staticCost(c.loopCondition!) + staticCost(c.loopStep!);
      c.loopCondition = callNode("@tick", [
        c.loopCondition!,
        constNode({ case: "int64Value", value: BigInt(Math.max(1, perIteration)) }),
      ]);
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Programs

function celTypeName(v: CelValue): string {
  try {
    return celType(v).name;
  } catch {
    return typeof v;
  }
}

/**
 * The input as CEL values, converted once per evaluation: the library would otherwise rebuild a
 * map's entry table on every field access, making each access cost the map's size.
 */
function fromJson(v: JsonValue): CelValue {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return celList(v.map(fromJson));
  const entries = new Map<string, CelValue>();
  for (const key in v) if (Object.hasOwn(v, key)) entries.set(key, fromJson(v[key]));
  return celMap(entries);
}

/** A CEL value as JSON; ints become numbers. Charged one unit per node written. */
function toJson(v: CelValue, what: string): JsonValue {
  charge(1);
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new ConversionError(`${what}: ${v} cannot be written as JSON`);
    return v;
  }
  if (typeof v === "bigint") return Number(v);
  if (isCelUint(v)) return Number(v.value);
  if (isCelList(v)) {
    const out: JsonValue[] = [];
    let i = 0;
    for (const x of v) out.push(toJson(x, `${what}[${i++}]`));
    return out;
  }
  if (isCelMap(v)) {
    const out: JsonObject = {};
    for (const [key, x] of v) {
      if (typeof key !== "string") {
        throw new ConversionError(
          `${what}: map key ${String(key)} is not a string and cannot be written as JSON`,
        );
      }
      setKey(out, key, toJson(x, `${what}.${key}`));
    }
    return out;
  }
  const type = isCelType(v) ? "type" : celTypeName(v);
  throw new ConversionError(`${what}: a CEL ${type} value cannot be written as JSON`);
}

/** Where to read one destination in a result map: nested path first, then the dotted key. */
export interface ResultLookup {
  segments: readonly string[];
  dotted: string;
}

function lookup(result: CelMap, at: ResultLookup): CelValue | undefined {
  let cur: CelValue | undefined = result;
  for (const seg of at.segments) {
    if (!isCelMap(cur)) {
      cur = undefined;
      break;
    }
    cur = cur.get(seg);
    if (cur === undefined) break;
  }
  if (cur !== undefined && at.segments.length > 0) return cur;
  return result.get(at.dotted);
}

/** A checked, instrumented and planned expression. */
export class CelProgram {
  readonly #run: (ctx: { object: CelValue }) => CelValue;
  readonly #base: number;

  private constructor(readonly source: string, expr: Expr) {
    instrument(expr, undefined);
    this.#base = staticCost(expr);
    this.#run = plan(ENV, expr) as (ctx: { object: CelValue }) => CelValue;
  }

  /** Parses, checks and plans; throws CelCompileError. */
  static compile(source: string): CelProgram {
    return new CelProgram(source, checkExpression(source));
  }

  /**
   * Evaluates with `object` bound to `input`; the result must be a map. Returns the JSON value
   * found for each lookup (undefined when the result has none). Throws ConversionError.
   */
  evaluate(input: JsonObject, lookups: readonly ResultLookup[]): (JsonValue | undefined)[] {
    const meter: Meter = { used: 0, exceeded: false };
    const outer = active;
    active = meter;
    try {
      charge(this.#base);
      const result = this.#run({ object: fromJson(input) });
      if (meter.exceeded) throw new BudgetExceeded("");
      if (isCelError(result)) throw new ConversionError(`CEL evaluation failed: ${result.message}`);
      if (!isCelMap(result)) {
        throw new ConversionError(`CEL result must be a map, got ${celTypeName(result)}`);
      }
      return lookups.map((at) => {
        const v = lookup(result, at);
        return v === undefined ? undefined : toJson(v, `CEL result ${at.dotted}`);
      });
    } catch (e) {
      if (e instanceof BudgetExceeded || meter.exceeded) {
        throw new ConversionError(
          `CEL evaluation exceeded the cost limit of ${CEL_COST_LIMIT} units; ` +
            "bound the input or simplify the expression",
        );
      }
      throw e;
    } finally {
      active = outer;
    }
  }
}
