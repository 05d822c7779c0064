/**
 * Checking CEL expressions before they are planned. The library does not export its type checker,
 * so this is a small checker of our own over the parsed AST: undeclared identifiers and functions
 * (which is how extension functions such as `split` are refused), arity and statically known
 * argument types against the standard overloads, and the syntax the reference's environment
 * lacks (optional syntax, two-variable comprehensions, message construction). See
 * docs/design/engine.md#cel.
 */
import { celEnv, type CelType, parse } from "@bufbuild/cel";

/** cel-go's default parser limits. */
const MAX_EXPRESSION_CODE_POINTS = 100_000;
const MAX_NESTING = 250;

/** An expression that does not parse or type-check in the CEL environment. */
export class CelCompileError extends Error {
  override name = "CelCompileError";
}

export type Expr = ReturnType<typeof parse>["expr"];
export type ExprKind = Expr["exprKind"];
export type Call = Extract<ExprKind, { case: "callExpr" }>["value"];
export type Constant = Extract<ExprKind, { case: "constExpr" }>["value"];

/** The standard library's functions: what the checker knows and the environment meters. */
export const STD = celEnv();

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
