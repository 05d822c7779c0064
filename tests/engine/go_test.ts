/** Go-compatible formatting. */
import assert from "node:assert/strict";
import {
  compareBytes,
  formatPlainNumber,
  goJSON,
  labelValueError,
  qualifiedNameError,
} from "../../src/engine/go.ts";

Deno.test("formatPlainNumber: whole values below 1e15 as integer digits; -0 is 0", () => {
  assert.equal(formatPlainNumber(5), "5");
  assert.equal(formatPlainNumber(-3), "-3");
  assert.equal(formatPlainNumber(0), "0");
  assert.equal(formatPlainNumber(-0), "0");
  assert.equal(formatPlainNumber(5.0), "5");
  assert.equal(formatPlainNumber(999999999999999), "999999999999999");
});

Deno.test("formatPlainNumber: shortest round-trip digits, never an exponent", () => {
  assert.equal(formatPlainNumber(0.25), "0.25");
  assert.equal(formatPlainNumber(1e-7), "0.0000001");
  assert.equal(formatPlainNumber(-1.5e-7), "-0.00000015");
  assert.equal(formatPlainNumber(1e21), "1000000000000000000000");
  assert.equal(formatPlainNumber(-1.25e22), "-12500000000000000000000");
  assert.equal(formatPlainNumber(1e15), "1000000000000000");
  assert.equal(formatPlainNumber(123456.789), "123456.789");
  assert.equal(formatPlainNumber(0.1 + 0.2), "0.30000000000000004");
  assert.equal(formatPlainNumber(2.5e-5), "0.000025");
  assert.equal(formatPlainNumber(5e-324), "0." + "0".repeat(323) + "5");
  assert.equal(formatPlainNumber(1.7976931348623157e308), "17976931348623157" + "0".repeat(292));
  for (const v of [1e-7, 1e21, 0.1, 2 ** 60, -9.87e-12, 3.14159e25]) {
    assert.equal(Number(formatPlainNumber(v)), v, `round trip of ${v}`);
    assert.ok(!/e/i.test(formatPlainNumber(v)));
  }
});

Deno.test("goJSON: sorted keys at every level, compact, numbers as ES shortest", () => {
  assert.equal(
    goJSON({ b: 1, a: { d: [true, null, 0.5], c: "x" } }),
    '{"a":{"c":"x","d":[true,null,0.5]},"b":1}',
  );
  assert.equal(goJSON(1e21), "1e+21");
  assert.equal(goJSON(1e-7), "1e-7");
  assert.equal(goJSON([]), "[]");
  assert.equal(goJSON({}), "{}");
  // Byte-wise (code point) key order: uppercase before lowercase, astral after BMP.
  assert.equal(
    goJSON({ b: 1, B: 2, "é": 3, "😀": 4, "\uffff": 5 }),
    '{"B":2,"b":1,"é":3,"\uffff":5,"😀":4}',
  );
});

Deno.test("goJSON: HTML-safe escapes, U+2028/2029, short escapes and lowercase \\u00XX", () => {
  assert.equal(goJSON("a <b> & c"), '"a \\u003cb\\u003e \\u0026 c"');
  assert.equal(goJSON("\u2028\u2029"), '"\\u2028\\u2029"');
  assert.equal(goJSON('q"b\\'), '"q\\"b\\\\"');
  assert.equal(goJSON("\n\r\t\b\f"), '"\\n\\r\\t\\b\\f"');
  assert.equal(goJSON("\u0000\u0001\u001f\u001b"), '"\\u0000\\u0001\\u001f\\u001b"');
  assert.equal(goJSON("\u007f/é"), '"\u007f/é"', "DEL, slash and non-ASCII are not escaped");
  assert.equal(goJSON({ "<k>": "&" }), '{"\\u003ck\\u003e":"\\u0026"}');
  // Parsing it back is ordinary JSON.
  const v = { s: "a<b>&\u2028\u0001", n: [1, 2.5] };
  assert.deepEqual(JSON.parse(goJSON(v)), v);
});

Deno.test("goJSON: non-finite numbers are rejected", () => {
  assert.throws(() => goJSON(NaN), /unsupported value/);
  assert.throws(() => goJSON({ a: Infinity }), /unsupported value/);
});

Deno.test("compareBytes orders by UTF-8 bytes (code points), not UTF-16 units", () => {
  // U+FF61 sorts before U+1F600 in UTF-8, but after its surrogate in UTF-16.
  assert.ok("\uff61" > "😀", "JS default order differs");
  assert.equal(compareBytes("\uff61", "😀"), -1);
  assert.equal(compareBytes("😀", "\uff61"), 1);
  assert.equal(compareBytes("a", "ab"), -1);
  assert.equal(compareBytes("ab", "ab"), 0);
  assert.deepEqual(["b", "a", "B", "😀", "\uff61"].sort(compareBytes), [
    "B",
    "a",
    "b",
    "\uff61",
    "😀",
  ]);
});

Deno.test("qualifiedNameError: valid label keys", () => {
  for (
    const key of [
      "tier",
      "a",
      "A-b_c.d9",
      "demo.example.com/tier",
      "x/y",
      "a".repeat(63),
      `${"a".repeat(253)}/n`,
      "k8s.io/a-b",
    ]
  ) {
    assert.equal(qualifiedNameError(key), undefined, key);
  }
});

Deno.test("qualifiedNameError: invalid label keys, with the reason", () => {
  const cases: [string, RegExp][] = [
    ["", /name ""/],
    ["-tier", /name/],
    ["tier-", /name/],
    ["ti er", /name/],
    ["a".repeat(64), /name/],
    ["a/b/c", /more than one "\/"/],
    ["/tier", /prefix ""/],
    ["Demo.example.com/tier", /DNS-1123/],
    ["demo_x.com/tier", /DNS-1123/],
    ["-demo.com/tier", /DNS-1123/],
    [`${"a".repeat(254)}/n`, /DNS-1123/],
    ["demo.com/", /name ""/],
  ];
  for (const [key, reason] of cases) assert.match(qualifiedNameError(key) ?? "", reason, key);
});

Deno.test("labelValueError: empty or 1-63 name characters", () => {
  for (const v of ["", "gold", "3", "a.b-c_d", "0.5", "a".repeat(63), "true"]) {
    assert.equal(labelValueError(v), undefined, v);
  }
  for (const v of ['"gold"', "not valid!", "-1", "a".repeat(64), "1e+21", "x/y", "é"]) {
    assert.match(labelValueError(v) ?? "", /label value/, v);
  }
});
