/**
 * The request budget: one meter for a whole request, checked inside `forEach` and array passes
 * and shared by every CEL evaluation; the per-evaluation CEL limit still applies under it. Clocks
 * are injected, so nothing here depends on the machine's speed.
 */
import assert from "node:assert/strict";
import { CEL_COST_LIMIT } from "../../src/engine/cel_env.ts";
import { type ConversionRuleSpec, type JsonObject, type LinkedPlan } from "../../src/engine/mod.ts";
import {
  CLOCK_CHECK_UNITS,
  RequestBudget,
  RequestBudgetExceeded,
  spend,
} from "../../src/engine/request_budget.ts";
import { assertConversionError, resource } from "./_checks.ts";
import { h2s, pairPlan } from "./_helpers.ts";
import { arr, int, num, obj, root, str } from "./_schemas.ts";

/** A clock that advances `step` ms on every reading, and counts its readings. */
function steppingClock(step: number): { clock: () => number; readings: () => number } {
  let now = 0;
  let n = 0;
  return {
    clock: () => {
      n++;
      return (now += step);
    },
    readings: () => n,
  };
}

/** A clock that never moves: only the CEL total can trip. */
const frozen = () => 0;

// One CEL evaluation per element: n pairs of `l` compared (quadratic in l's length).
const QUADRATIC = '{"n": object.l.filter(a, object.l.exists(b, b > a + 1000.0)).size()}';
const celRule = (expression: string): ConversionRuleSpec => ({
  strategy: "CEL",
  cel: { hubPaths: ["n"], spokePaths: ["n"], hubToSpoke: expression, spokeToHub: expression },
  acknowledgeLossy: true,
  reason: "computed",
});
const item = obj({ l: arr(num()), n: int() });
const plan: LinkedPlan = pairPlan(root({ items: arr(item) }), root({ items: arr(item) }), [{
  strategy: "ForEach",
  forEach: {
    hubItemsPath: "spec.items",
    spokeItemsPath: "spec.items",
    rules: [celRule(QUADRATIC)],
  },
  acknowledgeLossy: true,
  reason: "computed",
}]);

/** `count` elements sharing one `l` of `length` numbers. */
function items(count: number, length: number): JsonObject {
  const l = Array.from({ length }, (_, i) => i);
  return resource({ spec: { items: Array.from({ length: count }, () => ({ l, n: 0 })) } });
}

/** The CEL cost of one element's evaluation, measured through an untrippable budget. */
function elementCost(length: number): number {
  const b = new RequestBudget({ clock: frozen, timeoutMs: 1, celCostLimit: Number.MAX_VALUE });
  b.run(() => h2s(plan, items(1, length)));
  return b.celUsed;
}

Deno.test("request budget: a forEach × cel object that would run for minutes stops at the time budget", () => {
  const perElement = elementCost(100);
  // 10,000 elements × ~90,000 units: about a billion units of CEL, minutes of CPU without a budget.
  assert.ok(perElement > 50_000 && perElement < CEL_COST_LIMIT, `${perElement}`);
  const slow = items(10_000, 100);
  const { clock, readings } = steppingClock(1); // 1 ms per reading; a 20 ms budget
  const budget = new RequestBudget({ clock, timeoutMs: 20 });
  const e = assertConversionError(
    () => budget.run(() => h2s(plan, slow)),
    /^hub→spoke \(v2↔v1\): spec\.items\[\d+\]: CEL hubToSpoke: request time budget of 0\.02s exceeded$/,
  );
  assert.equal(budget.tripped, "time");
  // The clock is read once per CLOCK_CHECK_UNITS units: it ran out after ~20 readings, so after
  // ~20 × CLOCK_CHECK_UNITS units of CEL — a few elements, not ten thousand.
  assert.equal(readings(), 21);
  assert.ok(budget.celUsed <= 21 * CLOCK_CHECK_UNITS + perElement, `${budget.celUsed}`);
  const at = Number(/items\[(\d+)\]/.exec(e.message)![1]);
  assert.ok(at < 10, `stopped at element ${at}`);
});

Deno.test("request budget: the total CEL cost is shared by the evaluations of every element and object", () => {
  const perElement = elementCost(100);
  // Room for exactly 3.5 elements: the 4th evaluation (items[3]) trips the total.
  const budget = new RequestBudget({
    clock: frozen,
    timeoutMs: 1,
    celCostLimit: Math.floor(3.5 * perElement),
  });
  assertConversionError(
    () => budget.run(() => h2s(plan, items(10, 100))),
    `spec.items[3]: CEL hubToSpoke: total CEL cost of the request exceeded the limit of ${
      Math.floor(3.5 * perElement)
    } units`,
  );
  assert.equal(budget.tripped, "celCost");

  // Across objects of one request: two objects of two elements fit, the third object trips.
  const shared = new RequestBudget({
    clock: frozen,
    timeoutMs: 1,
    celCostLimit: Math.floor(5.5 * perElement),
  });
  const two = items(2, 100);
  shared.run(() => h2s(plan, two));
  shared.run(() => h2s(plan, two));
  assert.equal(shared.celUsed, 4 * perElement);
  assertConversionError(() => shared.run(() => h2s(plan, two)), "spec.items[1]", "total CEL cost");
});

Deno.test("request budget: the per-evaluation CEL limit still applies inside a generous request budget", () => {
  const budget = new RequestBudget({ clock: frozen, timeoutMs: 1, celCostLimit: 1e12 });
  // One element of 400 numbers costs more than one evaluation may (see elementCost).
  assertConversionError(
    () => budget.run(() => h2s(plan, items(3, 400))),
    `spec.items[0]: CEL hubToSpoke: CEL evaluation exceeded the cost limit of ${CEL_COST_LIMIT} units`,
  );
  assert.equal(budget.tripped, undefined);
});

Deno.test("request budget: within the budget, and without one, the conversion is unchanged", () => {
  const input = items(3, 10);
  const plain = h2s(plan, input);
  assert.deepEqual((plain.spec as { items: { n: number }[] }).items.map((x) => x.n), [0, 0, 0]);
  const budget = new RequestBudget({ clock: frozen, timeoutMs: 1 });
  assert.deepEqual(budget.run(() => h2s(plan, input)), plain);
  assert.equal(budget.tripped, undefined);
  assert.ok(budget.celUsed > 0);
});

Deno.test("request budget: forEach elements without CEL are metered, one clock reading per CLOCK_CHECK_UNITS", () => {
  const cheap = pairPlan(
    root({ items: arr(obj({ name: str() })) }),
    root({ items: arr(obj({ label: str() })) }),
    [{
      strategy: "ForEach",
      forEach: {
        hubItemsPath: "spec.items",
        spokeItemsPath: "spec.items",
        rules: [{ strategy: "FieldRename", fieldRename: { hubPath: "name", spokePath: "label" } }],
      },
    }],
  );
  const input = resource({
    spec: { items: Array.from({ length: 5 * CLOCK_CHECK_UNITS }, (_, i) => ({ name: `n${i}` })) },
  });
  // A clock that never runs out: counts the readings of a whole conversion.
  const counting = steppingClock(0);
  const roomy = new RequestBudget({ clock: counting.clock, timeoutMs: 1 });
  roomy.run(() => h2s(cheap, input));
  assert.equal(counting.readings(), 1 + 5); // the construction, then one per CLOCK_CHECK_UNITS

  // A clock past the deadline at the first check: stopped after CLOCK_CHECK_UNITS elements.
  const late = steppingClock(10);
  const budget = new RequestBudget({ clock: late.clock, timeoutMs: 5 });
  assertConversionError(() => budget.run(() => h2s(cheap, input)), "request time budget of 0.005s");
  assert.equal(late.readings(), 2);
});

Deno.test("request budget: a tripped budget stays tripped, and no budget runs outside run()", () => {
  const budget = new RequestBudget({ clock: steppingClock(10).clock, timeoutMs: 5 });
  assert.throws(() => budget.run(() => spend(CLOCK_CHECK_UNITS)), RequestBudgetExceeded);
  // Every later charge throws at once, whatever its size.
  assert.throws(() => budget.run(() => spend(1)), /request time budget of 0\.005s exceeded/);
  assert.throws(() => budget.check(), RequestBudgetExceeded);
  // Outside run(), charges go nowhere (convctl converts without a budget).
  assert.doesNotThrow(() => spend(10 * CLOCK_CHECK_UNITS));
});

Deno.test("request budget: arrays walked by ArrayToMapByKey and ListJoin are charged before the pass", () => {
  const keyed = pairPlan(
    root({ xs: arr(obj({ k: str(), v: int() })), tags: arr(str()) }),
    root({ xs: { type: "object", additionalProperties: obj({ v: int() }) }, tags: str() }),
    [
      {
        strategy: "ArrayToMapByKey",
        arrayToMapByKey: { hubPath: "spec.xs", spokePath: "spec.xs", keyField: "k" },
        acknowledgeLossy: true,
        reason: "order",
      },
      { strategy: "ListJoin", listJoin: { hubPath: "spec.tags", spokePath: "spec.tags" } },
    ],
  );
  const n = CLOCK_CHECK_UNITS / 2;
  const input = resource({
    spec: {
      xs: Array.from({ length: n }, (_, i) => ({ k: `k${i}`, v: i })),
      tags: Array.from({ length: n }, (_, i) => `t${i}`),
    },
  });
  // Half the units each: the second pass brings the countdown to zero and reads the clock.
  const late = steppingClock(10);
  const budget = new RequestBudget({ clock: late.clock, timeoutMs: 5 });
  assertConversionError(() => budget.run(() => h2s(keyed, input)), "request time budget");
  assert.equal(late.readings(), 2);
  // With a clock that never runs out, the same object converts.
  const roomy = new RequestBudget({ clock: steppingClock(0).clock, timeoutMs: 1 });
  const out = roomy.run(() => h2s(keyed, input));
  assert.equal((out.spec as { tags: string }).tags.length > 0, true);
});
