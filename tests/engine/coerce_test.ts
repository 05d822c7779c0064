/**
 * The coercion table is exact: an integer field gets the int64 a string or number denotes, digit
 * for digit, or the conversion fails with a message — never a rounded double. (Go parity of the
 * grammar itself is tests/engine/goparity_test.ts.)
 */
import assert from "node:assert/strict";
import { coerceScalar, type FractionPolicy, type ScalarKind } from "../../src/engine/coerce.ts";
import type { JsonValue } from "../../src/engine/mod.ts";
import { assertConversionError, resource } from "./_checks.ts";
import { h2s, pairPlan, s2h } from "./_helpers.ts";
import { bool, int, num, root, str } from "./_schemas.ts";

const to = (kind: ScalarKind, v: JsonValue, policy: FractionPolicy = "Error") =>
  coerceScalar(v, kind, policy, "spec.n");
const fails = (kind: ScalarKind, v: JsonValue, policy: FractionPolicy, ...fragments: string[]) =>
  assertConversionError(() => to(kind, v, policy), "spec.n", ...fragments);

Deno.test("string → integer: the exact int64, a bigint beyond 2^53; beyond int64 fails", () => {
  assert.equal(to("integer", "9007199254740993"), 9007199254740993n);
  assert.equal(to("integer", "-9223372036854775808"), -9223372036854775808n);
  assert.equal(to("integer", "9223372036854775807"), 9223372036854775807n);
  assert.equal(to("integer", "1764590400123456789"), 1764590400123456789n);
  assert.equal(to("integer", "9007199254740991"), 9007199254740991, "a safe integer is a number");
  assert.equal(to("integer", "0x1p62"), 4611686018427387904n);
  assert.equal(to("integer", "1e18"), 1000000000000000000n);
  fails("integer", "9223372036854775808", "Round", "out of range for an int64");
  fails("integer", "-9223372036854775809", "Truncate", "out of range for an int64");
  fails("integer", "1e19", "Error", "out of range for an int64");
  fails("integer", "1e400", "Error", "out of range for an int64");
  fails("integer", "inf", "Round", "not a finite number");
  fails("integer", "NaN", "Round", "not a finite number");
});

Deno.test("string → integer: Go's grammar — underscores, TrimSpace, no U+FEFF", () => {
  assert.equal(to("integer", "1_000"), 1000);
  assert.equal(to("integer", " 42 "), 42);
  assert.equal(to("integer", "\u008542\u0085"), 42, "U+0085 is space to Go");
  assert.equal(to("integer", "\u3000-7\u2029"), -7);
  fails("integer", "\ufeff42", "Error", "is not a number");
  fails("integer", "1__000", "Error", "is not a number");
  fails("integer", "_1000", "Error", "is not a number");
  fails("integer", "0x10", "Error", "is not a number");
  fails("integer", "", "Error", "is not a number");
});

Deno.test("fraction policies work on the exact value, also beyond 2^53", () => {
  assert.equal(to("integer", "9007199254740993.5", "Round"), 9007199254740994n);
  assert.equal(to("integer", "9007199254740993.5", "Truncate"), 9007199254740993n);
  assert.equal(to("integer", "-9007199254740993.5", "Round"), -9007199254740994n);
  fails("integer", "9007199254740993.5", "Error", "is not a whole number");
  assert.equal(to("integer", "9223372036854775807.5", "Truncate"), 9223372036854775807n);
  fails("integer", "9223372036854775807.5", "Round", "out of range for an int64");
  // The double of "2.49999999999999999999" is 2.5; the string is below the half.
  assert.equal(to("integer", "2.49999999999999999999", "Round"), 2);
  fails("integer", "1.0000000000000000001", "Error", "is not a whole number");
  assert.equal(to("integer", "-2.5", "Round"), -3);
  assert.equal(to("integer", "-2.5", "Truncate"), -2);
  assert.equal(to("integer", "1e-400", "Round"), 0);
  assert.equal(to("integer", "-0.4", "Round"), 0);
  assert.ok(Object.is(to("integer", "-0.4", "Round"), 0), "never -0");
});

Deno.test("number and bigint → integer: whole values beyond 2^53 are written as exact bigints", () => {
  assert.equal(to("integer", 2 ** 60), 1152921504606846976n, "not 1152921504606847000");
  assert.equal(to("integer", -(2 ** 63)), -9223372036854775808n);
  fails("integer", 2 ** 63, "Round", "out of range for an int64");
  fails("integer", 1e300, "Round", "out of range for an int64");
  assert.equal(to("integer", 2.5, "Round"), 3);
  assert.equal(to("integer", -2.5, "Round"), -3);
  assert.ok(Object.is(to("integer", -0), 0));
  assert.equal(to("integer", 9007199254740993n), 9007199254740993n);
  fails("integer", 1n << 64n, "Error", "out of range for an int64");
  assert.equal(to("integer", true), 1);
});

Deno.test("to number: integers keep their digits; other strings are ParseFloat's double", () => {
  assert.equal(to("number", 9007199254740993n), 9007199254740993n);
  assert.equal(to("number", "9007199254740993"), 9007199254740993n);
  assert.equal(to("number", "-9223372036854775808"), -9223372036854775808n, "not …776000");
  assert.equal(to("number", "9007199254740991"), 9007199254740991, "a safe integer is a number");
  assert.equal(to("number", "9007199254740993.0"), 9007199254740993n, "whole, so exact");
  assert.equal(to("number", "0.1"), 0.1);
  assert.equal(to("number", "0x1p-2"), 0.25);
  assert.equal(to("number", "9223372036854775808"), 9223372036854775808, "beyond int64: a double");
  assert.equal(to("number", "1_000.5"), 1000.5);
  fails("number", "1e400", "Error", "out of range for a double");
  fails("number", "-Infinity", "Error", "not a finite number");
  fails("number", "+nan", "Error", "is not a number");
});

Deno.test("bigint → string is its digits; → boolean is an error", () => {
  assert.equal(to("string", 9007199254740993n), "9007199254740993");
  assert.equal(to("string", -9223372036854775808n), "-9223372036854775808");
  fails("boolean", 9007199254740993n, "Error", "cannot coerce a number to a boolean");
  assert.equal(to("boolean", "\u0085true"), true);
  fails("boolean", "\ufefftrue", "Error", "is not a boolean");
});

Deno.test("TypeCoerce carries int64 values digit for digit in both directions", () => {
  const plan = pairPlan(
    root({ n: int(), r: num(), on: bool() }, { requireSpec: true }),
    root({ n: str(), r: str(), on: str() }, { requireSpec: true }),
    ["spec.n", "spec.r", "spec.on"].map((path) => ({
      strategy: "TypeCoerce",
      typeCoerce: { path },
    })),
  );
  for (const n of ["9007199254740993", "-9223372036854775808", "9223372036854775807"]) {
    const hub = s2h(plan, resource({ spec: { n, r: n, on: "1" } }));
    assert.deepEqual(hub.spec, { n: BigInt(n), r: BigInt(n), on: true });
    assert.deepEqual(h2s(plan, hub).spec, { n, r: n, on: "true" });
  }
  assertConversionError(
    () => s2h(plan, resource({ spec: { n: "9223372036854775808" } })),
    "spec.n",
    "out of range for an int64",
  );
});

Deno.test("a megabyte of digits is answered from the digit string", () => {
  const zeros = "0".repeat(1_000_000);
  assert.equal(to("integer", `0.${zeros}1`, "Round"), 0);
  assert.equal(to("integer", `7.${zeros}1`, "Truncate"), 7);
  assert.equal(to("integer", `7.5${zeros}`, "Round"), 8);
  fails("integer", `0.${zeros}1`, "Error", "is not a whole number");
  fails("integer", `1${zeros}`, "Round", "out of range for an int64");
  // Go stops reading an exponent at 10000: this is 10^(1000000 - 10000), not 1.
  fails("integer", `1${zeros}e-1000000`, "Round", "out of range for an int64");
  // Messages stay short.
  const e = fails("integer", `1${zeros}`, "Round", "(1000001 characters)");
  assert.ok(e.message.length < 200);
});
