/**
 * The cost bound of CEL evaluation. The library has no cost model, so evaluation is metered here
 * (see docs/strategies.md "CEL"): a static cost per evaluated node in cel-go's units, charged per
 * evaluation for the nodes outside loops and per iteration for each comprehension body (the
 * instrumentation below rewrites the AST to charge it), plus size-dependent charges for string,
 * equality and membership work, and for converting the result to JSON. Going over
 * `CEL_COST_LIMIT` aborts the evaluation. Every unit is also charged to the running request
 * budget (request_budget.ts): its total CEL cost across evaluations, and its clock.
 */
import { type CelValue, isCelList, isCelMap } from "@bufbuild/cel";
import type { Call, Constant, Expr, ExprKind } from "./cel_check.ts";
import { celRoom, RequestBudgetExceeded, spendCel } from "./request_budget.ts";

/** cel-go's default per-evaluation limit in the reference. */
export const CEL_COST_LIMIT = 1_000_000;

/** Static cost of one evaluated node, in cel-go's runtime cost units. */
const COST = { const: 0, ident: 1, select: 1, call: 1, list: 10, map: 30 } as const;

export class BudgetExceeded extends Error {
  override name = "BudgetExceeded";
}

export interface Meter {
  used: number;
  exceeded: boolean;
}

/** The meter of the evaluation in progress (evaluation is synchronous and never re-entered). */
let active: Meter | undefined;
/**
 * `active.used` beyond which {@link charge} leaves its hot path: the per-evaluation limit, or
 * sooner when the running request budget is due a clock reading or nears its CEL total.
 */
let stop = CEL_COST_LIMIT;
/** Units of the active meter already charged to the request budget. */
let settled = 0;

export function charge(units: number): void {
  const m = active;
  if (m === undefined) return;
  m.used += units;
  if (m.used > stop) overStop(m);
}

function overStop(m: Meter): void {
  if (m.used > CEL_COST_LIMIT) {
    m.exceeded = true;
    throw new BudgetExceeded(`exceeded the cost limit of ${CEL_COST_LIMIT}`);
  }
  settle(m); // may throw RequestBudgetExceeded
  stop = Math.min(CEL_COST_LIMIT, m.used + celRoom());
}

/** Charges the request budget with what `m` used since the last settlement. */
function settle(m: Meter): void {
  const units = m.used - settled;
  settled = m.used;
  spendCel(units);
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
export function dynamicCost(name: string, target: CelValue | undefined, args: CelValue[]): number {
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

/**
 * Runs `fn` with `meter` as the active meter (restoring the outer one afterwards). What the
 * evaluation used is charged to the running request budget as it goes and when it ends.
 */
export function withMeter<T>(meter: Meter, fn: () => T): T {
  const outer = { active, stop, settled };
  active = meter;
  settled = meter.used;
  stop = Math.min(CEL_COST_LIMIT, meter.used + celRoom());
  let ok = false;
  try {
    const out = fn();
    ok = true;
    return out;
  } finally {
    const rest = meter.used - settled;
    ({ active, stop, settled } = outer);
    // The rest of the evaluation's units; a trip throws only when no other error is on its way.
    if (ok) spendCel(rest);
    else spendCelQuietly(rest);
  }
}

function spendCelQuietly(units: number): void {
  try {
    spendCel(units);
  } catch (e) {
    if (!(e instanceof RequestBudgetExceeded)) throw e;
  }
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
export function staticCost(e: Expr): number {
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
export function instrument(e: Expr, accuVar: string | undefined): void {
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
