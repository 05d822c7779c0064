/** Exact JSON text: int64 beyond 2^53 as bigint digits, the long-number scan, bigint output. */
import assert from "node:assert/strict";
import { jsonEqual } from "../../src/lib/json.ts";
import {
  hasLongNumbers,
  normalizeInteger,
  parseJson,
  stringifyJson,
} from "../../src/lib/json_exact.ts";

Deno.test("parseJson keeps int64 literals beyond 2^53 as bigints and every other number a double", () => {
  const v = parseJson(
    '{"a":9007199254740993,"b":-9223372036854775808,"c":9223372036854775807,' +
      '"d":9007199254740991,"e":9223372036854775808,"f":1.5,"g":12345678901234567.5,' +
      '"h":"9007199254740993","i":[9007199254740992]}',
  );
  assert.deepEqual(v, {
    a: 9007199254740993n,
    b: -9223372036854775808n,
    c: 9223372036854775807n,
    d: 9007199254740991, // the largest safe integer stays a number
    e: 9223372036854775808, // beyond int64: the double the apiserver made of it
    f: 1.5,
    g: 12345678901234568, // not an integer literal: a double
    h: "9007199254740993",
    i: [9007199254740992n],
  });
});

Deno.test("parseJson refuses numbers beyond the double range", () => {
  for (const text of ["1e400", "[-1e400]", '{"x":' + "9".repeat(400) + "}"]) {
    assert.throws(() => parseJson(text), SyntaxError, text);
    assert.throws(() => parseJson(text), /outside the range of a double/);
  }
  assert.equal(parseJson("1e308"), 1e308);
});

Deno.test("hasLongNumbers: 16+ digit runs and exponents outside strings only", () => {
  assert.equal(hasLongNumbers('{"a":123456789012345,"b":"12345678901234567890"}'), false);
  assert.equal(hasLongNumbers('{"a":1234567890123456}'), true);
  assert.equal(hasLongNumbers('{"a":1e5}'), true);
  assert.equal(hasLongNumbers('{"a":1.5E-7}'), true);
  assert.equal(hasLongNumbers('{"e":true,"x":"1e5","y":"a\\"1234567890123456789"}'), false);
  assert.equal(hasLongNumbers('{"a":"unterminated 12345678901234567'), false);
  // Without the scan, the plain parse is used: the caller's promise that no long number exists.
  assert.equal(parseJson("9007199254740993", false), 9007199254740992);
});

Deno.test("stringifyJson writes bigint digits, with and without the hint, indented or not", () => {
  const v = { a: 9007199254740993n, b: [-9223372036854775808n], c: 1 };
  const compact = '{"a":9007199254740993,"b":[-9223372036854775808],"c":1}';
  assert.equal(stringifyJson(v), compact);
  assert.equal(stringifyJson(v, { mayHoldBigints: true }), compact);
  assert.equal(stringifyJson({ c: 1 }, { mayHoldBigints: true }), '{"c":1}');
  assert.equal(
    stringifyJson(v, { indent: 2 }),
    '{\n  "a": 9007199254740993,\n  "b": [\n    -9223372036854775808\n  ],\n  "c": 1\n}',
  );
  assert.deepEqual(parseJson(stringifyJson(v)), v);
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  assert.throws(() => stringifyJson(cycle), TypeError);
});

Deno.test("normalizeInteger: safe → number, int64 → bigint, beyond → double", () => {
  assert.equal(normalizeInteger(9007199254740991n), 9007199254740991);
  assert.equal(normalizeInteger(-9007199254740992n), -9007199254740992n);
  assert.equal(normalizeInteger(9223372036854775807n), 9223372036854775807n);
  assert.equal(normalizeInteger(9223372036854775808n), 9223372036854775808);
});

Deno.test("jsonEqual compares a bigint and a number by value, never a string", () => {
  assert.equal(jsonEqual(9007199254740993n, 9007199254740993n), true);
  assert.equal(jsonEqual(9007199254740992n, 9007199254740992), true);
  assert.equal(jsonEqual(9007199254740993n, 9007199254740992), false);
  assert.equal(jsonEqual(9007199254740993n, "9007199254740993"), false);
  assert.equal(jsonEqual({ a: [9007199254740993n] }, { a: [9007199254740993n] }), true);
});

/** The same text read by the rewrite path and (a marker escape in the text forces it) the reviver. */
function bothPaths(text: string): [unknown, unknown] {
  const viaRewrite = parseJson(text);
  const forced = parseJson(`[${text},"\\u0001"]`) as unknown[];
  return [viaRewrite, forced[0]];
}

Deno.test("parseJson: the rewrite path and the reviver read the same values", () => {
  const corpus = [
    '{"a":9007199254740993,"b":[-9223372036854775808,{"c":9223372036854775807}]}',
    '{"a":"9007199254740993","b":"x\\"9007199254740993","c":9007199254740993}',
    "[1234567890123456.5,1.2345678901234567e5,12345678901234567890123,-0,0]",
    '{"__proto__":9007199254740993,"k":[9007199254740992 , 9007199254740991]}',
    "  9007199254740993  ",
    '{"e":1e5,"t":true,"f":false,"n":null,"s":"\\u0002"}',
  ];
  for (const text of corpus) {
    const [a, b] = bothPaths(text);
    assert.deepEqual(a, b, text);
  }
  const proto = parseJson('{"__proto__":9007199254740993}') as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(proto, "__proto__")?.value, 9007199254740993n);
});

Deno.test("parseJson: invalid text stays invalid on both paths", () => {
  for (
    const text of [
      "{1234567890123456789:1}",
      "[01234567890123456789]",
      "[1234567890123456789",
      "[--1234567890123456789]",
      "[1234567890123456789 1]",
      '["a"1234567890123456789]',
      "[1e400]",
      "[" + "1".repeat(400) + "]",
    ]
  ) {
    assert.throws(() => parseJson(text), SyntaxError, text);
    assert.throws(() => parseJson(`[${text},"\\u0001"]`), SyntaxError, text);
  }
});

Deno.test("stringifyJson: swapped and replacer output agree; the value is left as it was", () => {
  const values: unknown[] = [
    { a: 9007199254740993n, b: [-9223372036854775808n, { c: 9223372036854775807n }], s: "x" },
    { k: [1, "two", 9007199254740993n], '"': '"\\u0001' },
    // Strings holding U+0001, as values and keys, beside bigints: the output must still be exact.
    { a: 9007199254740993n, s: "\u0001123", t: '"\u0001123', k: { "\u00019": 9007199254740994n } },
    [9007199254740993n],
  ];
  for (const v of values) {
    const before = structuredClone(v);
    const expected = JSON.stringify(v, (_k, x) => typeof x === "bigint" ? `#${x}#` : x)
      .replace(/"#(-?\d+)#"/g, "$1");
    assert.equal(stringifyJson(v, { mayHoldBigints: true }), expected);
    assert.equal(stringifyJson(v), expected);
    assert.deepEqual(v, before, "the value is restored");
  }
  const frozen = Object.freeze({ a: 9007199254740993n });
  assert.equal(stringifyJson(frozen), '{"a":9007199254740993}');
});
