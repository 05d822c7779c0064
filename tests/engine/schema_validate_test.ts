import assert from "node:assert/strict";
import { validateAgainstSchema } from "../../src/engine/schema_validate.ts";
import type { SchemaNode } from "../../src/engine/mod.ts";

const SCHEMA: SchemaNode = {
  type: "object",
  required: ["spec"],
  properties: {
    metadata: { type: "object" },
    spec: {
      type: "object",
      required: ["size"],
      properties: {
        size: { type: "string", enum: ["small", "large"] },
        count: { type: "integer" },
        ratio: { type: "number" },
        on: { type: "boolean" },
        port: { "x-kubernetes-int-or-string": true },
        note: { type: "string", nullable: true },
        tags: { type: "array", items: { type: "string" } },
        labels: { type: "object", additionalProperties: { type: "string" } },
        free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        rules: {
          type: "array",
          items: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
        },
      },
    },
  },
};

const messages = (object: unknown) =>
  validateAgainstSchema(SCHEMA, object as never).map((v) => `${v.path}: ${v.message}`);

Deno.test("schema validation: a valid object has no violation; undeclared fields are not errors", () => {
  assert.deepEqual(
    messages({
      metadata: { name: "x" },
      spec: {
        size: "small",
        count: 3,
        ratio: 2,
        on: false,
        port: "http",
        note: null,
        tags: ["a"],
        labels: { a: "b" },
        free: { anything: [1, { deep: true }] },
        rules: [{ name: "r", extra: 1 }],
        undeclared: { x: 1 },
      },
      status: { whatever: 1 },
    }),
    [],
  );
  assert.deepEqual(
    messages({ spec: { size: "large", count: 12345678901234567890n, port: 8 } }),
    [],
  );
  assert.deepEqual(validateAgainstSchema(undefined, { any: "thing" }), []);
});

Deno.test("schema validation: types, required fields and enums, with paths", () => {
  assert.deepEqual(
    messages({
      spec: {
        size: "medium",
        count: 1.5,
        ratio: "2",
        on: "yes",
        port: 1.5,
        tags: ["a", 2],
        labels: { a: 1 },
        rules: [{ name: "ok" }, {}],
        note: 3,
      },
    }),
    [
      'spec.size: must be one of "small", "large", got "medium"',
      "spec.count: expected integer, got number 1.5",
      'spec.ratio: expected number, got string "2"',
      'spec.on: expected boolean, got string "yes"',
      "spec.port: expected an integer or a string, got number 1.5",
      "spec.tags[1]: expected string, got number 2",
      "spec.labels.a: expected string, got number 1",
      "spec.rules[1].name: required field is missing",
      "spec.note: expected string, got number 3",
    ],
  );
  assert.deepEqual(messages({}), ["spec: required field is missing"]);
  assert.deepEqual(messages({ spec: "x" }), ['spec: expected object, got string "x"']);
  assert.deepEqual(messages({ spec: { size: null } }), ["spec.size: expected string, got null"]);
  assert.deepEqual(messages([]), ["(root): expected object, got array"]);
});

Deno.test("schema validation: violations carry their path as segments", () => {
  const [v] = validateAgainstSchema(SCHEMA, { spec: { size: "small", rules: [{ name: 1 }] } });
  assert.deepEqual(v.at, ["spec", "rules", 0, "name"]);
  assert.equal(v.path, "spec.rules[0].name");
  const [odd] = validateAgainstSchema(SCHEMA, { spec: { size: "small", labels: { "a.b": 2 } } });
  assert.equal(odd.path, 'spec.labels["a.b"]');
});
