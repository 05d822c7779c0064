/**
 * The CEL environment of the CEL strategy, on @bufbuild/cel, and the programs it plans.
 *
 * - Environment: the standard library and macros only, one dynamic variable `object`. JSON
 *   numbers are doubles, except integers beyond 2^53, which are ints (exact); `double + int` is a
 *   no-such-overload error; int overflow is an error. Int results are written exactly.
 * - Checking is in cel_check.ts, the cost bound in cel_cost.ts.
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
  plan,
} from "@bufbuild/cel";
import { CelCompileError, checkExpression, type Expr, STD } from "./cel_check.ts";
import {
  BudgetExceeded,
  CEL_COST_LIMIT,
  charge,
  dynamicCost,
  instrument,
  type Meter,
  staticCost,
  withMeter,
} from "./cel_cost.ts";
import { rethrowIfTripped } from "./request_budget.ts";
import type { JsonObject, JsonValue } from "./types.ts";
import { ConversionError, setKey } from "./value.ts";
import { normalizeInteger } from "../lib/json_exact.ts";

export { CEL_COST_LIMIT, CelCompileError };

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

function celTypeName(v: CelValue): string {
  try {
    return celType(v).name;
  } catch {
    return typeof v;
  }
}

/**
 * The input as CEL values, converted once per evaluation: the library would otherwise rebuild a
 * map's entry table on every field access, making each access cost the map's size. A JSON number
 * is a CEL double; an integer beyond 2^53 (read as a `bigint`) is a CEL int, kept exact.
 */
function fromJson(v: JsonValue): CelValue {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return celList(v.map(fromJson));
  const entries = new Map<string, CelValue>();
  for (const key in v) if (Object.hasOwn(v, key)) entries.set(key, fromJson(v[key]));
  return celMap(entries);
}

/**
 * A CEL value as JSON; ints and uints become numbers, exactly: a `bigint` above 2^53 (a uint
 * beyond int64 is a double, as the apiserver would read it). Charged one unit per node written.
 */
function toJson(v: CelValue, what: string): JsonValue {
  charge(1);
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new ConversionError(`${what}: ${v} cannot be written as JSON`);
    return v;
  }
  if (typeof v === "bigint") return normalizeInteger(v);
  if (isCelUint(v)) return normalizeInteger(v.value);
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
    try {
      return withMeter(meter, () => {
        charge(this.#base);
        const result = this.#run({ object: fromJson(input) });
        rethrowIfTripped(); // the library turns a throw inside the evaluation into a value
        if (meter.exceeded) throw new BudgetExceeded("");
        if (isCelError(result)) {
          throw new ConversionError(`CEL evaluation failed: ${result.message}`);
        }
        if (!isCelMap(result)) {
          throw new ConversionError(`CEL result must be a map, got ${celTypeName(result)}`);
        }
        return lookups.map((at) => {
          const v = lookup(result, at);
          return v === undefined ? undefined : toJson(v, `CEL result ${at.dotted}`);
        });
      });
    } catch (e) {
      if (e instanceof BudgetExceeded || meter.exceeded) {
        throw new ConversionError(
          `CEL evaluation exceeded the cost limit of ${CEL_COST_LIMIT} units; ` +
            "bound the input or simplify the expression",
        );
      }
      throw e;
    }
  }
}
