/**
 * The request budget: one meter for a whole conversion request, however many objects, `forEach`
 * elements and CEL evaluations it holds. Two bounds:
 *
 * - **time**: a deadline on an injected monotonic clock (the engine reads no clock of its own);
 * - **total CEL cost**: the sum of every CEL evaluation's cost units in the request, on top of
 *   the per-evaluation limit of cel_cost.ts (`REQUEST_CEL_COST_LIMIT` by default).
 *
 * Conversion is synchronous, so the budget of the request in progress is module state, set for
 * the duration of a call by {@link RequestBudget.run} (like cel_cost's meter): no parameter is
 * threaded through the op closures. Work is charged in units with {@link spend}: one per
 * `forEach` element, one per element of an array a strategy walks, one per CEL cost unit. The
 * clock is read only when {@link CLOCK_CHECK_UNITS} units have been spent since the last
 * reading, so the hot path is a decrement and a compare; CEL's own meter adds nothing to its hot
 * path (it settles with the budget only when {@link celRoom} is used up). Without a budget running
 * (convctl, tests, benches) every charge returns at once.
 *
 * A tripped budget stays tripped: every later charge throws again, so work that swallowed the
 * first throw (the CEL library turns a throw inside an evaluation into an error value) cannot
 * run on.
 */
import { ConversionError } from "./value.ts";

/**
 * Total CEL cost of one request: 100 full per-evaluation budgets (cel-go's per-call limit of
 * 1,000,000 units), ten times what Kubernetes allows the validation rules of one object.
 * Deterministic, unlike the time bound; units are not time (docs/design/webhook.md#the-request-budget).
 */
export const REQUEST_CEL_COST_LIMIT = 100_000_000;

/** Units spent between two clock readings (up to about 10 ms of the slowest CEL units). */
export const CLOCK_CHECK_UNITS = 10_000;

/** The bound that tripped. */
export type BudgetBound = "time" | "celCost";

/** Thrown (and re-thrown) once a request budget is spent; a ConversionError, so callers add where. */
export class RequestBudgetExceeded extends ConversionError {
  override name = "RequestBudgetExceeded";
  constructor(readonly bound: BudgetBound, message: string) {
    super(message);
  }
}

export interface RequestBudgetOptions {
  /** Monotonic milliseconds. */
  clock: () => number;
  /** The time budget, from the construction of the budget. */
  timeoutMs: number;
  /** Total CEL cost units; default {@link REQUEST_CEL_COST_LIMIT}. */
  celCostLimit?: number;
}

export class RequestBudget {
  /** `clock()` reading at which the time budget is spent. */
  readonly deadline: number;
  readonly timeoutMs: number;
  readonly celCostLimit: number;
  /** CEL cost units charged so far. */
  celUsed = 0;
  /** Set once a bound trips; never cleared. */
  tripped: BudgetBound | undefined;
  /** Units left before the next clock reading. */
  countdown = CLOCK_CHECK_UNITS;
  readonly #clock: () => number;

  constructor(options: RequestBudgetOptions) {
    if (!(options.timeoutMs > 0)) throw new RangeError("timeoutMs must be > 0");
    this.#clock = options.clock;
    this.timeoutMs = options.timeoutMs;
    this.celCostLimit = options.celCostLimit ?? REQUEST_CEL_COST_LIMIT;
    if (!(this.celCostLimit > 0)) throw new RangeError("celCostLimit must be > 0");
    this.deadline = options.clock() + options.timeoutMs;
  }

  /** Runs `fn` with this budget as the running one (restoring the outer one afterwards). */
  run<T>(fn: () => T): T {
    const outer = running;
    running = this;
    try {
      return fn();
    } finally {
      running = outer;
    }
  }

  /** Reads the clock now; throws when the deadline has passed (or the budget tripped before). */
  check(): void {
    if (this.tripped === undefined && this.#clock() >= this.deadline) this.tripped = "time";
    if (this.tripped === undefined) {
      this.countdown = CLOCK_CHECK_UNITS;
      return;
    }
    this.countdown = 0; // the next charge comes straight back here
    throw this.error();
  }

  /** The error of the bound that tripped. */
  error(): RequestBudgetExceeded {
    const bound = this.tripped ?? "time";
    return new RequestBudgetExceeded(
      bound,
      bound === "time"
        ? `request time budget of ${this.timeoutMs / 1000}s exceeded`
        : `total CEL cost of the request exceeded the limit of ${this.celCostLimit} units`,
    );
  }
}

/** The budget of the request in progress (conversion is synchronous). */
let running: RequestBudget | undefined;

/** Charges `units` of work to the running budget; reads the clock every CLOCK_CHECK_UNITS. */
export function spend(units: number): void {
  const b = running;
  if (b !== undefined && (b.countdown -= units) <= 0) b.check();
}

/**
 * Charges CEL cost units: to the request's CEL total and, as work, to its clock countdown.
 * cel_cost.ts calls it in batches, only when {@link celRoom} is used up and when an evaluation ends.
 */
export function spendCel(units: number): void {
  const b = running;
  if (b === undefined) return;
  if ((b.celUsed += units) > b.celCostLimit && b.tripped === undefined) b.tripped = "celCost";
  if ((b.countdown -= units) <= 0 || b.tripped !== undefined) b.check();
}

/**
 * CEL units the running budget can take before it must look (a clock reading or its CEL total):
 * cel_cost.ts charges on its hot path until then. Infinity when no budget runs.
 */
export function celRoom(): number {
  const b = running;
  return b === undefined
    ? Infinity
    : Math.max(0, Math.min(b.countdown, b.celCostLimit - b.celUsed));
}

/** Throws the running budget's error when it has tripped (after work that may swallow a throw). */
export function rethrowIfTripped(): void {
  const b = running;
  if (b !== undefined && b.tripped !== undefined) throw b.error();
}
