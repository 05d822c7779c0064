/** RE2 patterns: Go syntax and semantics, not JavaScript's. */
import assert from "node:assert/strict";
import { Re2Pattern, Re2SyntaxError } from "../../src/engine/re2.ts";

const matches = (pattern: string, input: string) =>
  Re2Pattern.compile(pattern).search(input) !== undefined;

Deno.test("re2: named groups in both Go spellings", () => {
  const p = Re2Pattern.compile("^(?P<value>\\d+)(?<unit>[A-Za-z]+)$");
  assert.deepEqual(p.groupNames, ["value", "unit"]);
  assert.ok(p.hasGroup("unit"));
  assert.ok(!p.hasGroup("other"));
  assert.deepEqual(Object.fromEntries(p.search("50Gi")!), { value: "50", unit: "Gi" });
});

Deno.test("re2: unanchored leftmost-first search", () => {
  const p = Re2Pattern.compile("(?P<n>\\d+)");
  assert.equal(p.search("size 50 or 60")!.get("n"), "50");
  // Leftmost-first, not leftmost-longest: the first alternative wins.
  assert.equal(Re2Pattern.compile("(?P<m>a|ab)").search("ab")!.get("m"), "a");
  assert.equal(Re2Pattern.compile("^x$").search("ax"), undefined);
});

Deno.test("re2: a group that did not take part yields the empty string", () => {
  const p = Re2Pattern.compile("(?P<a>x)|(?P<b>y)");
  assert.deepEqual(Object.fromEntries(p.search("y")!), { a: "", b: "y" });
});

Deno.test("re2: lookaround and backreferences are compile errors", () => {
  for (const pattern of ["a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b", "(a)\\1", "(?P<x>a)\\k<x>"]) {
    assert.throws(() => Re2Pattern.compile(pattern), Re2SyntaxError, pattern);
  }
  assert.throws(() => Re2Pattern.compile("a(?=b)"), /lookaround/);
  assert.throws(() => Re2Pattern.compile("(a)\\1"), /backreference/);
});

Deno.test("re2: other syntax errors", () => {
  for (const pattern of ["(?P<n>a", "x{1001}", "(?P<n>a)(?P<n>b)", "a++", "\\Z", "[z-a]"]) {
    assert.throws(() => Re2Pattern.compile(pattern), Re2SyntaxError, pattern);
  }
});

Deno.test("re2: \\s is [\\t\\n\\f\\r ] only", () => {
  assert.ok(matches("^\\s+$", "\t\n\f\r "));
  for (const c of ["\v", "\u00a0", "\u2028", "\ufeff"]) assert.ok(!matches("^\\s$", c), `U+${c}`);
});

Deno.test("re2: . excludes only \\n (and matches a whole code point)", () => {
  for (const c of ["\r", "\u2028", "\u2029", "😀"]) assert.ok(matches("^.$", c), JSON.stringify(c));
  assert.ok(!matches("^.$", "\n"));
  assert.ok(matches("(?s)^.$", "\n"));
});

Deno.test("re2: \\d, \\w and \\b are ASCII", () => {
  assert.ok(!matches("^\\d$", "٣"));
  assert.ok(!matches("^\\w$", "é"));
  assert.ok(matches("\\bfoo\\b", "a foo b"));
  assert.ok(matches("\\bfoo\\b", "éfooé")); // é is not a word character, so \b holds
});

Deno.test("re2: Unicode classes, POSIX classes, \\Q…\\E, \\A, \\z", () => {
  assert.ok(matches("^\\pL+$", "héllo"));
  assert.ok(matches("^\\p{Greek}+$", "αβγ"));
  assert.ok(matches("^[[:alpha:]]+$", "abc"));
  assert.ok(!matches("^[[:alpha:]]+$", "é")); // POSIX classes are ASCII
  assert.ok(matches("^\\Qa.b\\E$", "a.b"));
  assert.ok(!matches("^\\Qa.b\\E$", "axb"));
  assert.ok(matches("\\Aab\\z", "ab"));
  assert.ok(!matches("\\Aab\\z", "ab\n"));
});

Deno.test("re2: inline flags", () => {
  assert.ok(matches("(?i)^abc$", "ABC"));
  assert.ok(matches("^(?i:a)b$", "Ab"));
  assert.ok(!matches("^(?i:a)b$", "AB"));
  assert.ok(matches("(?m)^b$", "a\nb"));
  assert.equal(Re2Pattern.compile("(?U)(?P<g>a+)").search("aaa")!.get("g"), "a");
});

Deno.test("re2: matching is linear (no catastrophic backtracking)", () => {
  // A backtracking engine takes exponential time here (the test would never finish); RE2 does not.
  const p = Re2Pattern.compile("^(a+)+b$");
  const input = "a".repeat(50_000);
  assert.equal(p.search(input), undefined);
});
