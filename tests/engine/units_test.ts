/**
 * Quantity and Duration carry int64 values exactly: a milli-value beyond 2^53 is a bigint, one
 * beyond int64 fails the conversion (never an Infinity that JSON writes as null), and the inputs
 * on which Kubernetes' own parser never returns are answered at once. (Parity with
 * resource.ParseQuantity is tests/engine/goparity_test.ts.)
 */
import assert from "node:assert/strict";
import { parseQuantity, quantityMillis, quantityToMillis } from "../../src/engine/units.ts";
import { assertConversionError, resource } from "./_checks.ts";
import { h2s, pairPlan, s2h } from "./_helpers.ts";
import { int, root, str } from "./_schemas.ts";

const quantityPlan = () =>
  pairPlan(
    root({ mem: str(), cpu: int() }, { requireSpec: true }),
    root({ memMillis: int(), cpu: str() }, { requireSpec: true }),
    [
      {
        strategy: "Quantity",
        quantity: { hubPath: "spec.mem", spokePath: "spec.memMillis" },
        acknowledgeLossy: true,
        reason: "canonical form",
      },
      {
        strategy: "Quantity",
        quantity: { hubPath: "spec.cpu", spokePath: "spec.cpu" },
        acknowledgeLossy: true,
        reason: "canonical form",
      },
    ],
  );

const millisOf = (mem: string) => h2s(quantityPlan(), resource({ spec: { mem } })).spec;

Deno.test("Quantity → milli-units: exact int64, bigint beyond 2^53", () => {
  assert.deepEqual(millisOf("9223372036854775807m"), { memMillis: 9223372036854775807n });
  assert.deepEqual(millisOf("-9223372036854775808m"), { memMillis: -9223372036854775808n });
  assert.deepEqual(millisOf("9007199254740993m"), { memMillis: 9007199254740993n });
  assert.deepEqual(millisOf("4Pi"), { memMillis: 4503599627370496000n });
  assert.deepEqual(millisOf("-1.025Ti"), { memMillis: -1126999418470400 });
  assert.deepEqual(millisOf("1Gi"), { memMillis: 1073741824000 });
  // Kubernetes' degenerate readings: a sign or a suffix alone is zero, the exponent wraps at int32.
  assert.deepEqual(millisOf("+"), { memMillis: 0 });
  assert.deepEqual(millisOf("Ki"), { memMillis: 0 });
  assert.deepEqual(millisOf("1e4294967296"), { memMillis: 1000 });
  assert.deepEqual(millisOf("-0.0000000001"), { memMillis: -1 }, "away from zero");
});

Deno.test("a Quantity whose milli-value is beyond int64 fails the conversion (never null)", () => {
  for (const mem of ["1e400", "-1e400", "9223372036854775808m", "8Ei", "1E", "9223372036854776"]) {
    assertConversionError(
      () => millisOf(mem),
      "spec.mem",
      JSON.stringify(mem),
      "does not fit an int64",
    );
  }
  assertConversionError(
    () => millisOf("1_000"),
    "is not a Kubernetes quantity",
    "regular expression",
  );
  assertConversionError(() => millisOf("1e"), "unable to parse quantity's suffix");
  assertConversionError(() => millisOf("-.e-20"), "unable to parse numeric part of quantity");
  assertConversionError(() => millisOf(" 1"), "is not a Kubernetes quantity");
});

Deno.test("milli-units → Quantity: bigints format exactly; fractions and non-int64 values fail", () => {
  const plan = quantityPlan();
  const hub = (memMillis: number | bigint) => s2h(plan, resource({ spec: { memMillis } })).spec;
  assert.deepEqual(hub(9223372036854775807n), { mem: "9223372036854775807m" });
  assert.deepEqual(hub(-9223372036854775808n), { mem: "-9223372036854775808m" });
  assert.deepEqual(hub(9007199254740993000n), { mem: "9007199254740993" });
  assert.deepEqual(hub(1500), { mem: "1500m" });
  assertConversionError(() => hub(1.5), "spec.memMillis", "not a whole number of milli-units");
  assertConversionError(() => hub(1n << 63n), "spec.memMillis", "does not fit an int64");
  assertConversionError(() => hub(2 ** 63), "spec.memMillis", "does not fit an int64");
});

Deno.test("Duration: bigint seconds beyond a Go duration fail; whole seconds only", () => {
  const plan = pairPlan(
    root({ t: int() }, { requireSpec: true }),
    root({ t: str() }, { requireSpec: true }),
    [{
      strategy: "Duration",
      duration: { hubPath: "spec.t", spokePath: "spec.t" },
      acknowledgeLossy: true,
      reason: "canonical form",
    }],
  );
  const spoke = (t: number | bigint) => h2s(plan, resource({ spec: { t } })).spec;
  assert.deepEqual(spoke(5400), { t: "1h30m0s" });
  assertConversionError(() => spoke(9007199254740993n), "spec.t", "does not fit a Go duration");
  assertConversionError(() => spoke(1.5), "spec.t", "not a whole number of seconds");
});

Deno.test("inputs Kubernetes never finishes parsing are answered from their magnitude", () => {
  // ParseQuantity computes 10^(about 2^31) for these; the values are plain.
  assert.deepEqual(parseQuantity("1e-2147483647"), { unscaled: 1n, exp: -9 });
  assert.equal(quantityToMillis("1e-2147483647"), 1n);
  assert.equal(quantityToMillis("-1e-2147483647"), -1n);
  for (
    const huge of [
      "1e-2147483648",
      "1e2147483648",
      "1.5e-2147483647",
      "1234567890123456789012e2000000000",
    ]
  ) {
    const q = parseQuantity(huge);
    assert.ok(typeof q !== "string", huge);
    assert.equal(quantityMillis(q), "range", huge);
  }
  assert.equal(quantityToMillis("123456789012345678901e-2000000000"), 1n);
});

Deno.test("a megabyte of digits in a quantity is read from the digit string", () => {
  const zeros = "0".repeat(1_000_000);
  assert.equal(quantityToMillis(`0.${zeros}1`), 1n);
  assert.equal(quantityToMillis(`-0.${zeros}1`), -1n);
  assert.equal(quantityToMillis(`1.5${zeros}`), 1500n);
  assert.equal(quantityToMillis(`1${zeros}`), undefined, "beyond int64");
  assert.deepEqual(parseQuantity(`1${zeros}Ki`), { unscaled: 9223372036854775807n, exp: 0 });
  assert.equal(quantityToMillis(`0.${zeros}1Ki`), 1n);
});
