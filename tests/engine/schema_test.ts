/** Schema model: classification, flattening, path resolution and the known-field trees. */
import assert from "node:assert/strict";
import { classify, flatten, type SchemaNode } from "../../src/engine/mod.ts";
import {
  isRequiredAt,
  itemSchema,
  knownTree,
  mergeKnownTrees,
  resolveSchema,
  splitPath,
} from "../../src/engine/schema.ts";

const info = (node: SchemaNode) => {
  const i = classify(node);
  return [i.kind, i.opaque, i.construct];
};

Deno.test("classification table, in order", () => {
  const rows: [SchemaNode, unknown[]][] = [
    [{ type: "object", "x-kubernetes-preserve-unknown-fields": true }, ["object", true, ""]],
    [
      {
        type: "object",
        "x-kubernetes-preserve-unknown-fields": true,
        properties: { a: { type: "string" } },
      },
      ["object", true, ""],
    ],
    [{ "x-kubernetes-preserve-unknown-fields": true }, ["object", true, ""]],
    [{ type: "object", properties: { a: { type: "string" } } }, ["object", false, ""]],
    [{ type: "object", additionalProperties: { type: "string" } }, ["object", true, ""]],
    [{ type: "object", additionalProperties: false }, ["object", true, ""]],
    [{ type: "object", additionalProperties: true }, ["object", true, ""]],
    [{ type: "object" }, ["object", false, ""]],
    [{ type: "object", properties: {} }, ["object", false, ""]],
    [{ type: "array", items: { type: "string" } }, ["array", false, ""]],
    [{ type: "array" }, ["array", true, ""]],
    [{ type: "array", items: [{ type: "string" }] }, ["array", true, ""]],
    [{ type: "string" }, ["string", false, ""]],
    [{ type: "integer" }, ["integer", false, ""]],
    [{ type: "number" }, ["number", false, ""]],
    [{ type: "boolean" }, ["boolean", false, ""]],
    [{ "x-kubernetes-int-or-string": true }, ["unknown", true, ""]],
    [{}, ["unknown", true, ""]],
    [{ type: "null" }, ["unknown", true, ""]],
  ];
  for (const [node, expected] of rows) assert.deepEqual(info(node), expected, JSON.stringify(node));
});

Deno.test("constructs: $ref > oneOf > anyOf > allOf, opaque even with properties", () => {
  const props = { type: "object", properties: { a: { type: "string" } } };
  assert.deepEqual(info({ ...props, oneOf: [{ required: ["a"] }] }), ["object", true, "oneOf"]);
  assert.deepEqual(info({ $ref: "#/x", oneOf: [{}] }), ["unknown", true, "$ref"]);
  assert.deepEqual(info({ anyOf: [{}], allOf: [{}] }), ["unknown", true, "anyOf"]);
  assert.deepEqual(info({ type: "string", allOf: [{ minLength: 1 }] }), ["string", true, "allOf"]);
  assert.deepEqual(
    info({ type: "string", oneOf: [], $ref: "" }),
    ["string", false, ""],
    "empty ones do not count",
  );
});

const schema: SchemaNode = {
  type: "object",
  required: ["spec"],
  properties: {
    metadata: { type: "object" },
    spec: {
      type: "object",
      required: ["name", "net"],
      properties: {
        name: { type: "string" },
        net: {
          type: "object",
          properties: { cidr: { type: "string" }, ipv6: { type: "boolean" } },
        },
        empty: { type: "object" },
        tags: { type: "object", additionalProperties: { type: "string" } },
        raw: {
          type: "object",
          "x-kubernetes-preserve-unknown-fields": true,
          properties: { a: { type: "string" } },
        },
        ports: {
          type: "array",
          items: { type: "object", properties: { port: { type: "integer" } } },
        },
        choice: {
          type: "object",
          properties: { x: { type: "string" } },
          oneOf: [{ required: ["x"] }],
        },
        ios: { "x-kubernetes-int-or-string": true },
      },
    },
    status: { type: "object", properties: { phase: { type: "string" } } },
  },
};

Deno.test("flatten: leaves, required flags, constructs, no overlap", () => {
  const leaves = flatten(schema);
  assert.deepEqual(
    leaves.map((l) => [l.path, l.kind, l.opaque, l.construct, l.required]),
    [
      ["spec.name", "string", false, "", true],
      ["spec.net.cidr", "string", false, "", false],
      ["spec.net.ipv6", "boolean", false, "", false],
      ["spec.tags", "object", true, "", false],
      ["spec.raw", "object", true, "", false],
      ["spec.ports", "array", false, "", false],
      ["spec.choice", "object", true, "oneOf", false],
      ["spec.ios", "unknown", true, "", false],
      ["status.phase", "string", false, "", false],
    ],
  );
  const paths = leaves.map((l) => l.path);
  for (const a of paths) {
    for (const b of paths) assert.ok(a === b || !b.startsWith(a + "."), `${a} overlaps ${b}`);
  }
  assert.deepEqual(flatten(undefined), []);
  assert.deepEqual(
    flatten({ type: "object", "x-kubernetes-preserve-unknown-fields": true }),
    [],
    "an opaque root is not a leaf",
  );
});

Deno.test("flatten with a prefix (subtree claims)", () => {
  const net = schema.properties!.spec.properties!.net;
  assert.deepEqual(flatten(net, "spec.net").map((l) => l.path), ["spec.net.cidr", "spec.net.ipv6"]);
  assert.deepEqual(flatten({ type: "string" }, "spec.name").map((l) => l.path), ["spec.name"]);
  assert.deepEqual(
    flatten({ type: "object", additionalProperties: true }, "spec.m").map((l) => l.path),
    ["spec.m"],
  );
});

Deno.test("resolution walks properties only", () => {
  const r = (p: string) => resolveSchema(schema, splitPath(p));
  assert.equal(r("spec.net.cidr")?.type, "string");
  assert.equal(r(""), schema);
  assert.equal(r("spec.empty")?.type, "object", "the final node's type is not checked");
  assert.equal(r("spec.missing"), undefined);
  assert.equal(r("spec.tags.anything"), undefined, "not into free-form maps");
  assert.equal(r("spec.ports.port"), undefined, "not into arrays");
  assert.equal(
    r("spec.raw.a")?.type,
    "string",
    "declared properties of preserve-unknown nodes resolve",
  );
  assert.equal(r("spec.name.length"), undefined);
  assert.equal(r("spec.toString"), undefined, "only own properties");
  assert.equal(r("spec.__proto__"), undefined);
  assert.equal(resolveSchema(undefined, ["spec"]), undefined);
  assert.deepEqual(splitPath(""), []);
  assert.deepEqual(splitPath("a.b"), ["a", "b"]);
});

Deno.test("isRequiredAt and itemSchema", () => {
  assert.equal(isRequiredAt(schema, ["spec", "net"]), true);
  assert.equal(isRequiredAt(schema, ["spec", "tags"]), false);
  assert.equal(isRequiredAt(schema, ["spec"]), true);
  assert.equal(isRequiredAt(schema, []), false);
  assert.deepEqual(itemSchema(schema.properties!.spec.properties!.ports), {
    type: "object",
    properties: { port: { type: "integer" } },
  });
  assert.equal(itemSchema({ type: "array" }), undefined);
  assert.equal(itemSchema({ type: "array", items: [{ type: "string" }] }), undefined);
  assert.equal(itemSchema({ type: "object" }), undefined);
});

Deno.test("known trees: structured nodes have children, everything else is terminal; merge keeps terminals", () => {
  const tree = knownTree(schema);
  assert.deepEqual(tree, {
    metadata: null,
    spec: {
      name: null,
      net: { cidr: null, ipv6: null },
      empty: null,
      tags: null,
      raw: null,
      ports: null,
      choice: { x: null },
      ios: null,
    },
    status: { phase: null },
  });
  const other = knownTree({
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: {
          net: { type: "string" },
          extra: { type: "object", properties: { q: { type: "string" } } },
        },
      },
    },
  });
  const merged = mergeKnownTrees(tree, other);
  assert.equal((merged.spec as Record<string, unknown>).net, null, "terminal on either side wins");
  assert.deepEqual((merged.spec as Record<string, unknown>).extra, { q: null });
  assert.deepEqual(merged.status, { phase: null });
  const proto = knownTree(
    JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}'),
  );
  assert.ok(Object.hasOwn(proto, "__proto__"));
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
});
