/**
 * Join templates: the supported Go text/template subset, fail-closed parsing and Go `%v` value
 * rendering.
 */
import assert from "node:assert/strict";
import {
  formatGoFloat,
  formatGoValue,
  GoTemplate,
  parseTemplate,
  TemplateSyntaxError,
} from "../../src/engine/go_template.ts";
import type { JsonValue } from "../../src/engine/types.ts";
import { ConversionError } from "../../src/engine/value.ts";

const run = (src: string, data: Record<string, JsonValue>) =>
  new GoTemplate(src).execute(new Map(Object.entries(data)));

Deno.test("template: field references and literal text", () => {
  assert.equal(run("{{.value}}{{.unit}}", { value: "50", unit: "Gi" }), "50Gi");
  assert.equal(run("{{.name}} <{{.email}}>", { name: "Jane Doe", email: "j@x" }), "Jane Doe <j@x>");
  assert.equal(run("{{ .name }}", { name: "spaced" }), "spaced");
  assert.equal(run("{{\n.name\n}}", { name: "newlines" }), "newlines");
  assert.equal(run("plain", {}), "plain");
  assert.equal(run("", {}), "");
  assert.equal(run("a }} b", {}), "a }} b");
  assert.equal(run("{{.café}}", { café: "ok" }), "ok");
  assert.deepEqual(new GoTemplate("{{.a}}-{{.b}}-{{.a}}").fields, ["a", "b"]);
});

Deno.test("template: trim markers trim adjacent whitespace", () => {
  assert.equal(run("a  \n {{- .x -}} \t\n b", { x: "X" }), "aXb");
  assert.equal(run("a {{- .x}} b", { x: "X" }), "aX b");
  assert.equal(run("a {{.x -}} b", { x: "X" }), "a Xb");
  // "{{-3}}" is not a trim marker in Go (no space after the dash): refused, not trimmed.
  assert.throws(() => parseTemplate("a {{-.x}}"), TemplateSyntaxError);
});

Deno.test("template: comments", () => {
  assert.equal(run("a{{/* note */}}b", {}), "ab");
  assert.equal(run("a {{- /* multi\nline */ -}} b", {}), "ab");
  assert.throws(() => parseTemplate("{{/* open"), /unclosed comment/);
  assert.throws(() => parseTemplate("{{/* c */ }}"), /comment ends before closing delimiter/);
});

Deno.test("template: everything else is refused at parse time (fail closed)", () => {
  for (
    const src of [
      '{{.a | printf "%s"}}',
      '{{printf "%v" .a}}',
      "{{if .a}}x{{end}}",
      "{{range .a}}{{.}}{{end}}",
      "{{with .a}}{{.}}{{end}}",
      "{{$x := .a}}{{$x}}",
      "{{.}}",
      "{{.a.b}}",
      "{{.a .b}}",
      '{{"lit"}}',
      "{{3}}",
      "{{.1a}}",
      "{{}}",
      "{{ -}}",
      "{{.a",
      "{{eq .a .b}}",
    ]
  ) {
    assert.throws(() => parseTemplate(src), TemplateSyntaxError, src);
  }
});

Deno.test("template: a missing key is an execution error", () => {
  assert.throws(
    () => run("{{.value}}{{.unit}}", { unit: "Mi" }),
    (e: unknown) => e instanceof ConversionError && /no entry for key "value"/.test(e.message),
  );
});

Deno.test("template: Go %v rendering of values", () => {
  assert.equal(
    run("{{.s}}|{{.t}}|{{.f}}|{{.n}}", { s: "x", t: true, f: false, n: null }),
    [
      "x",
      "true",
      "false",
      "<no value>",
    ].join("|"),
  );
  assert.throws(() => formatGoValue({ a: 1 }, "f"), ConversionError);
  assert.throws(() => formatGoValue([1, 2], "f"), ConversionError);
});

Deno.test("template: numbers print in Go's shortest %g (exponent below 1e-4 or from 1e6)", () => {
  const cases: [number, string][] = [
    [50, "50"],
    [123456, "123456"],
    [999999, "999999"],
    [1000000, "1e+06"],
    [2000000, "2e+06"],
    [1234567, "1.234567e+06"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [0.000012345, "1.2345e-05"],
    [0.25, "0.25"],
    [100000.5, "100000.5"],
    [-1000000, "-1e+06"],
    [-2.5, "-2.5"],
    [1e21, "1e+21"],
    [1.5e300, "1.5e+300"],
    [5e-324, "5e-324"],
    [0, "0"],
    [-0, "-0"],
  ];
  for (const [v, want] of cases) assert.equal(formatGoFloat(v), want, String(v));
  assert.equal(run("{{.value}}{{.unit}}", { value: 2000000, unit: "Mi" }), "2e+06Mi");
});
