/**
 * The request-reading helpers of the conversion endpoint: uid recovery from a body that will not
 * be parsed, the nesting scan, and the target of a request path.
 */
import assert from "node:assert/strict";
import {
  nestingExceeds,
  recoverUid,
  scanBody,
  targetOfPath,
} from "../../../src/webhook/convert/mod.ts";

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
