/**
 * Every citation in comments and documents resolves inside the repository (tests/repo/_citations.ts
 * says what counts), and the checker itself catches each kind of broken reference.
 */
import assert from "node:assert/strict";
import { CHECKED_PATHS, citationProblems, problemsOf } from "./_citations.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("citations: every reference in src, docs, tests, hack, charts and examples resolves", () => {
  const problems = citationProblems(ROOT, CHECKED_PATHS).map((p) =>
    `${p.file}:${p.line}: ${p.problem}`
  );
  assert.deepEqual(problems, []);
});

Deno.test("citations: the checker fails on a section sign, a phase tag and broken paths", () => {
  // Built from parts, so that this file itself holds no citation or tag a grep would find.
  const section = "runtime.md " + "\u00a7" + "8.6";
  const tag = "[P" + "14]";
  const text = [
    "/**",
    ` * The answer table (${section}) decides. ${tag}`,
    " * See docs/design/no-such-file.md and docs/index.md#no-such-heading.",
    " * Fine: docs/index.md, docs/testing.md#cleanup-guarantees, src/lib/json.ts.",
    " */",
    'const s = "docs/created-by-the-test.md"; // a string literal is not a citation',
  ].join("\n");
  const problems = problemsOf(ROOT, "src/example.ts", text).map((p) => `${p.line}: ${p.problem}`);
  assert.deepEqual(problems.slice(0, 4), [
    "2: cites a section (§) of a document the repo lacks",
    `2: phase tag ${tag}: say it in words`,
    "3: docs/design/no-such-file.md: no such file or folder",
    "3: docs/index.md#no-such-heading: no heading with that anchor",
  ]);
});

Deno.test("citations: a resolving path and anchor pass", () => {
  const text = "# Title\n\nSee [the floor](docs/index.md) and src/lib/json.ts.\n";
  assert.deepEqual(problemsOf(ROOT, "docs/example.md", text), []);
});
