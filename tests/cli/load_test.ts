import assert from "node:assert/strict";
import { CliError } from "../../src/cli/args.ts";
import { parseYamlDocuments } from "../../src/cli/load.ts";

Deno.test("YAML 1.1 scalars as go-yaml v2 resolves them", () => {
  const [doc] = parseYamlDocuments(
    [
      "bools: [y, Y, yes, Yes, YES, on, On, ON, true, n, N, no, No, NO, off, Off, OFF, false]",
      'quoted: ["on", "yes", "n"]',
      "notBools: [yES, oN, nO]",
      "octal: 0777",
      "hex: 0x1F",
      "binary: 0b101",
      "underscored: 1_000",
      "float: 1e3",
      "date: 2001-12-14",
      "time: 1:20",
      "nothing: ~",
      "base: &b {a: 1, b: 2}",
      "merged: {<<: *b, b: 3}",
    ].join("\n"),
    "t.yaml",
  );
  assert.deepEqual(doc, {
    bools: [...Array(9).fill(true), ...Array(9).fill(false)],
    quoted: ["on", "yes", "n"],
    notBools: ["yES", "oN", "nO"],
    octal: 511,
    hex: 31,
    binary: 5,
    underscored: 1000,
    float: 1000,
    date: "2001-12-14",
    time: "1:20",
    nothing: null,
    base: { a: 1, b: 2 },
    merged: { a: 1, b: 3 },
  });
});

Deno.test("multi-document streams skip empty documents", () => {
  assert.deepEqual(
    parseYamlDocuments("---\n# only a comment\n---\na: 1\n---\n---\n- 2\n", "s.yaml"),
    [
      { a: 1 },
      [2],
    ],
  );
  assert.deepEqual(parseYamlDocuments("", "empty.yaml"), []);
});

Deno.test("duplicate keys and non-JSON values are errors naming file and position", () => {
  assert.throws(
    () => parseYamlDocuments("a: 1\nb:\n  c: 1\n  c: 2\n", "dup.yaml"),
    new CliError("dup.yaml:4:3: Map keys must be unique"),
  );
  assert.throws(() => parseYamlDocuments("a: .inf\n", "inf.yaml"), /JSON cannot represent/);
});
