/**
 * The request-reading helpers of the conversion endpoint: uid recovery from a body that will not
 * be parsed, the nesting scan, and the target of a request path.
 */
import assert from "node:assert/strict";
import {
  inspectParsed,
  nestingExceeds,
  recoverUid,
  scanBody,
  targetOfPath,
} from "../../../src/webhook/convert/mod.ts";
import { parseJson } from "../../../src/lib/json_exact.ts";

Deno.test("recoverUid finds request.uid and nothing else", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  assert.equal(
    recoverUid(enc('{"kind":"ConversionReview","request":{"uid":"abc","objects":[')),
    "abc",
  );
  assert.equal(
    recoverUid(enc('{"request": {"objects":[{"metadata":{"uid":"inner"}}],"uid":"outer"}}')),
    "outer",
  );
  assert.equal(recoverUid(enc('{"uid":"top","request":{"x":1}}')), "");
  assert.equal(
    recoverUid(enc('{"request":{"uid":"trunc')),
    "",
    "an incomplete string is not a uid",
  );
  assert.equal(recoverUid(enc('{"request":{"uid":"a\\"b"}}')), 'a"b');
  assert.equal(recoverUid(enc('{"other":{"uid":"x"},"request":{"uid":"y"}}')), "y");
  assert.equal(recoverUid(enc("garbage")), "");
  assert.equal(recoverUid(enc("")), "");
});

Deno.test("nestingExceeds counts brackets outside strings", () => {
  assert.equal(nestingExceeds("[[[]]]", 3), false);
  assert.equal(nestingExceeds("[[[[]]]]", 3), true);
  assert.equal(nestingExceeds('{"a":"[[[[[[[["}', 1), false);
  assert.equal(nestingExceeds('{"a":"x\\"[[[["}', 1), false, "escaped quote stays in the string");
  assert.equal(nestingExceeds('{"a":"x\\\\"}', 1), false, "escaped backslash ends the string");
  assert.equal(nestingExceeds('{"a":"x\\\\","b":[[1]]}', 2), true);
  assert.equal(nestingExceeds("[".repeat(10_000), 100), true);
});

Deno.test("targetOfPath", () => {
  assert.equal(targetOfPath("/convert/widgets.example.com"), "widgets.example.com");
  assert.equal(targetOfPath("/convert/widgets.example.com?timeout=30s"), "widgets.example.com");
  assert.equal(targetOfPath("/convert/"), undefined);
  assert.equal(targetOfPath("/convert/a/b"), undefined);
  assert.equal(targetOfPath("/healthz"), undefined);
  assert.equal(targetOfPath("/convert/%E0%A4%A"), undefined);
});

Deno.test("scanBody flags long numbers outside strings, in the same pass as the depth", () => {
  assert.deepEqual(scanBody('{"a":123456789012345}', 5), { tooDeep: false, longNumbers: false });
  assert.deepEqual(scanBody('{"a":1234567890123456}', 5), { tooDeep: false, longNumbers: true });
  assert.deepEqual(scanBody('{"a":[1.5e3]}', 5), { tooDeep: false, longNumbers: true });
  assert.deepEqual(scanBody('{"a":"12345678901234567890","e":true}', 5), {
    tooDeep: false,
    longNumbers: false,
  });
  assert.equal(scanBody("[[[9007199254740993]]]", 2).tooDeep, true);
  assert.equal(scanBody("[9007199254740993,[[[]]]]", 2).longNumbers, true);
});

Deno.test("inspectParsed: the depth scanBody finds in the text, from the parsed value", () => {
  for (
    const text of [
      "[[[]]]",
      "[[[[]]]]",
      '{"a":"[[[[[[[["}',
      '{"a":{"b":{"c":{}}}}',
      '{"a":[{"b":[1,{"c":null}]}]}',
      "1",
      '"x"',
      "[[1],[[2]],[[[3]]]]",
    ]
  ) {
    for (const max of [1, 2, 3, 4, 5]) {
      assert.equal(
        inspectParsed(JSON.parse(text), max).tooDeep,
        scanBody(text, max).tooDeep,
        `${text} at ${max}`,
      );
    }
  }
  // Deeper than any stack: the walk is iterative.
  assert.equal(
    inspectParsed(JSON.parse("[".repeat(200_000) + "]".repeat(200_000)), 100).tooDeep,
    true,
  );
});

Deno.test("inspectParsed flags exactly the numbers the exact parse reads differently", () => {
  const flagged = (text: string) => inspectParsed(JSON.parse(text), 10).longNumbers;
  assert.equal(flagged('{"a":9007199254740991,"b":-9007199254740991}'), false);
  assert.equal(flagged('{"a":9007199254740993}'), true, "2^53 + 1 rounds");
  assert.equal(flagged('{"a":[-9223372036854775807]}'), true);
  assert.equal(flagged('{"a":1e400}'), true, "Infinity");
  assert.equal(flagged('{"a":1.5e3,"b":0.1,"c":"12345678901234567890"}'), false);
  assert.equal(flagged("12345678901234567890"), true, "a bare number");
  // Differential: whenever nothing is flagged, the plain parse is what the exact parse reads.
  const literals = [
    "0",
    "-0",
    "1",
    "42",
    "1.5",
    "1e5",
    "2.5E-7",
    "1.0000000000000000001",
    "123456789012345",
    "9007199254740991",
    "9007199254740992",
    "9007199254740993",
    "-9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "12345678901234567890123",
    "1e21",
    "1e400",
    "-1e400",
    "0.1000000000000000055511151231257827",
  ];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let round = 0; round < 2000; round++) {
    const picks = Array.from(
      { length: 1 + (next() % 4) },
      () => literals[next() % literals.length],
    );
    const text = `{"spec":{"n":[${picks.join(",")}],"s":"${picks[0]}"}}`;
    let exact: unknown;
    try {
      exact = parseJson(text, true);
    } catch {
      assert.equal(flagged(text), true, `${text}: the exact parse refuses it`);
      continue;
    }
    if (!flagged(text)) assert.deepEqual(JSON.parse(text), exact, text);
  }
});
