import assert from "node:assert/strict";
import { validateStructural } from "../../src/engine/structural_validate.ts";
import type { JsonValue, SchemaNode } from "../../src/engine/mod.ts";

const root = (spec: SchemaNode): SchemaNode => ({
  type: "object",
  properties: { spec },
});

function found(schema: SchemaNode, spec: JsonValue): string[] {
  const object = { apiVersion: "g/v1", kind: "K", metadata: { name: "x" }, spec };
  return validateStructural(root(schema), object).violations.map((v) =>
    `${v.path}: ${v.constraint}`
  );
}

Deno.test("type, required, enum and nullable", () => {
  const schema: SchemaNode = {
    type: "object",
    required: ["size"],
    properties: {
      size: { type: "string", enum: ["S", "M"] },
      count: { type: "integer" },
      ratio: { type: "number" },
      note: { type: "string", nullable: true },
      flag: { type: "boolean" },
    },
  };
  assert.deepEqual(found(schema, { size: "S", count: 3, ratio: 2, note: null, flag: true }), []);
  assert.deepEqual(found(schema, { count: 1.5, ratio: "x", flag: null }), [
    "spec.size: required",
    "spec.count: type",
    "spec.ratio: type",
    "spec.flag: type",
  ]);
  assert.deepEqual(found(schema, { size: "L" }), ["spec.size: enum"]);
});

Deno.test("formats the apiserver checks; unknown formats pass", () => {
  const schema: SchemaNode = {
    type: "object",
    properties: {
      small: { type: "integer", format: "int32" },
      at: { type: "string", format: "date-time" },
      day: { type: "string", format: "date" },
      wait: { type: "string", format: "duration" },
      id: { type: "string", format: "uuid" },
      ip: { type: "string", format: "ipv4" },
      ip6: { type: "string", format: "ipv6" },
      net: { type: "string", format: "cidr" },
      data: { type: "string", format: "byte" },
      other: { type: "string", format: "made-up" },
    },
  };
  const good = {
    small: 2147483647,
    at: "2024-01-02T03:04:05Z",
    day: "2024-01-02",
    wait: "1h30m",
    id: "123e4567-e89b-12d3-a456-426614174000",
    ip: "10.0.0.1",
    ip6: "fe80::1",
    net: "10.0.0.0/8",
    data: "aGVsbG8=",
    other: "anything",
  };
  assert.deepEqual(found(schema, good), []);
  const bad = {
    small: 2147483648,
    at: "2024-01-02",
    day: "2024-13-40",
    wait: "soon",
    id: "nope",
    ip: "300.1.1.1",
    ip6: "fe80:::1",
    net: "10.0.0.0/33",
    data: "a===",
    other: "anything",
  };
  assert.deepEqual(found(schema, bad), [
    "spec.small: format",
    "spec.at: format",
    "spec.day: format",
    "spec.wait: format",
    "spec.id: format",
    "spec.ip: format",
    "spec.ip6: format",
    "spec.net: format",
    "spec.data: format",
  ]);
});

Deno.test("bounds, RE2 pattern and the x-kubernetes extensions", () => {
  const schema: SchemaNode = {
    type: "object",
    properties: {
      name: { type: "string", maxLength: 3, pattern: "^[a-z]+$" },
      port: { "x-kubernetes-int-or-string": true },
      tags: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
      ports: {
        type: "array",
        maxItems: 2,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        items: { type: "object", properties: { name: { type: "string" } } },
      },
      labels: { type: "object", additionalProperties: { type: "string" } },
      free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      embedded: {
        type: "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
      },
    },
  };
  assert.deepEqual(
    found(schema, {
      name: "abc",
      port: "http",
      tags: ["a", "b"],
      ports: [{ name: "a" }, { name: "b" }],
      labels: { a: "x" },
      free: { anything: [1, { b: 2 }] },
      embedded: { apiVersion: "v1", kind: "ConfigMap" },
    }),
    [],
  );
  assert.deepEqual(
    found(schema, {
      name: "ABCD",
      port: 1.5,
      tags: ["a", "a"],
      ports: [{ name: "a" }, { name: "a" }, {}],
      labels: { a: 1 },
      embedded: { kind: "ConfigMap" },
    }),
    [
      "spec.name: maxLength",
      "spec.name: pattern",
      "spec.port: type",
      "spec.tags[1]: x-kubernetes-list-type",
      "spec.ports: maxItems",
      "spec.ports[1]: x-kubernetes-list-type",
      "spec.ports[2].name: x-kubernetes-list-map-keys",
      "spec.labels.a: type",
      "spec.embedded.apiVersion: x-kubernetes-embedded-resource",
    ],
  );
});

Deno.test("unknown fields are pruned by the apiserver, not refused", () => {
  assert.deepEqual(found({ type: "object", properties: {} }, { extra: 1 }), []);
});

Deno.test("CEL x-kubernetes-validations: self with ints, messages, fieldPath, skipped rules", () => {
  const schema: SchemaNode = {
    type: "object",
    properties: {
      min: { type: "integer" },
      max: { type: "integer" },
      name: { type: "string" },
    },
    "x-kubernetes-validations": [
      { rule: "self.min <= self.max", message: "min must not exceed max" },
      { rule: "!has(self.name) || self.name.startsWith('w-')", fieldPath: ".name" },
      { rule: "self.min == oldSelf.min" }, // a transition rule: not run on create
      { rule: "self.name.lowerAscii() == self.name" }, // a Kubernetes extension
    ],
  };
  const object = (spec: JsonValue) => ({ apiVersion: "g/v1", kind: "K", spec });
  const ok = validateStructural(root(schema), object({ min: 1, max: 2, name: "w-a" }));
  assert.deepEqual(ok.violations, []);
  assert.deepEqual(ok.unevaluated.map((u) => u.rule), ["self.name.lowerAscii() == self.name"]);

  const bad = validateStructural(root(schema), object({ min: 3, max: 2, name: "x" }));
  assert.deepEqual(bad.violations, [
    { path: "spec", constraint: "x-kubernetes-validations", message: "min must not exceed max" },
    {
      path: "spec.name",
      constraint: "x-kubernetes-validations",
      message: "failed rule: !has(self.name) || self.name.startsWith('w-')",
    },
  ]);
  // A missing field read without has() is an evaluation error, which the apiserver rejects.
  const missing = validateStructural(root(schema), object({ min: 1 }));
  assert.deepEqual(missing.violations.map((v) => v.constraint), ["x-kubernetes-validations"]);
});

Deno.test("allOf, anyOf, oneOf and not", () => {
  const schema: SchemaNode = {
    type: "object",
    properties: { a: { type: "string" }, b: { type: "string" } },
    oneOf: [{ required: ["a"] }, { required: ["b"] }],
  };
  assert.deepEqual(found(schema, { a: "x" }), []);
  assert.deepEqual(found(schema, { a: "x", b: "y" }), ["spec: oneOf"]);
  assert.deepEqual(found(schema, {}), ["spec: oneOf"]);
  assert.deepEqual(found({ type: "string", not: { enum: ["no"] } }, "no"), ["spec: not"]);
  assert.deepEqual(found({ type: "string", anyOf: [{ maxLength: 1 }, { pattern: "^a" }] }, "bb"), [
    "spec: anyOf",
  ]);
});
