/**
 * `shareInput` and `metadata`: the output's seeded `metadata` is the input's own map exactly for
 * directions none of whose ops can write into it (convert.ts `leavesMetadata`), and a deep copy
 * otherwise — so a frozen input converts through the shared linking without a write into it.
 */
import assert from "node:assert/strict";
import {
  analyze,
  type ConversionRuleSpec,
  convertObject,
  createRouter,
  type JsonObject,
  type OpData,
} from "../../src/engine/mod.ts";
import { leavesMetadata } from "../../src/engine/convert.ts";
import { deepFreeze } from "./_checks.ts";
import { configFor, pairSource } from "./_helpers.ts";
import { apiVersion, HUB, KIND, obj, root, SPOKE, str } from "./_schemas.ts";

function routers(rules: ConversionRuleSpec[], hub = root({ a: str() }), spoke = hub) {
  const result = analyze(pairSource(hub, spoke), configFor({ [SPOKE]: rules }));
  assert.deepEqual(result.hardErrors, [], JSON.stringify(result.hardErrors));
  assert.deepEqual(result.spokes[0].errors, [], JSON.stringify(result.spokes[0].errors));
  return {
    shared: createRouter(result, { shareInput: true }),
    interpretedShared: createRouter(result, { shareInput: true, compiled: false }),
    owned: createRouter(result),
  };
}

function object(version: string, spec: JsonObject): JsonObject {
  return deepFreeze({
    apiVersion: apiVersion(version),
    kind: KIND,
    metadata: { name: "x", labels: { app: "a" }, annotations: { note: "n" } },
    spec,
  }) as JsonObject;
}

Deno.test("shareInput: metadata shared when no op writes it, copied without shareInput", () => {
  const r = routers(
    [{ strategy: "FieldRename", fieldRename: { hubPath: "spec.a", spokePath: "spec.b" } }],
    root({ a: str() }),
    root({ b: str() }),
  );
  const input = object(HUB, { a: "v" });
  for (const router of [r.shared, r.interpretedShared]) {
    const out = convertObject(router, input, apiVersion(SPOKE));
    assert.equal(out.metadata, input.metadata, "the input's own metadata map");
    assert.deepEqual(out.spec, { b: "v" });
  }
  const owned = convertObject(r.owned, input, apiVersion(SPOKE));
  assert.notEqual(owned.metadata, input.metadata);
  assert.deepEqual(owned.metadata, input.metadata);
});

Deno.test("shareInput: metadata copied for a direction whose ops write into it", () => {
  const r = routers(
    [{
      strategy: "ToAnnotation",
      toAnnotation: { hubPath: "spec.extra", key: "example.com/extra", restoreOnReverse: true },
    }],
    root({ a: str(), extra: obj({ x: str() }) }),
    root({ a: str() }),
  );
  const input = object(HUB, { a: "v", extra: { x: "1" } });
  // Frozen input: a write into a shared metadata map would throw.
  const out = convertObject(r.shared, input, apiVersion(SPOKE));
  assert.notEqual(out.metadata, input.metadata);
  const annotations = (out.metadata as JsonObject).annotations as JsonObject;
  assert.equal(annotations.note, "n");
  assert.ok(Object.hasOwn(annotations, "example.com/extra"));
  assert.deepEqual(input.metadata, {
    name: "x",
    labels: { app: "a" },
    annotations: { note: "n" },
  });
});

Deno.test("leavesMetadata: only ops known not to write under metadata", () => {
  const carry = (tree: JsonObject): OpData => ({ op: "carry", tree });
  const yes: OpData[][] = [
    [],
    [{ op: "copy", from: ["metadata", "name"], to: ["spec", "name"] }],
    [{ op: "set", to: ["spec", "x"], value: 1 }, carry({ metadata: "skip", spec: "copy" })],
    [{ op: "when", path: ["spec"], equals: 1, inner: { op: "set", to: ["spec", "y"], value: 2 } }],
    [{ op: "forEach", from: ["spec", "l"], to: ["spec", "m"], ops: [] }],
    [carry({ spec: { a: "copy" } })],
  ];
  const no: OpData[][] = [
    [{ op: "copy", from: ["spec", "a"], to: ["metadata", "labels", "a"] }],
    [{ op: "set", to: [], value: 1 }],
    [{ op: "when", path: ["spec"], equals: 1, inner: { op: "set", to: ["metadata"], value: {} } }],
    [{ op: "forEach", from: ["spec", "l"], to: ["metadata", "l"], ops: [] }],
    [carry({ metadata: { labels: "copy" } })],
    [carry({ metadata: "copy" })],
    [{ op: "toAnnotation", from: ["spec", "a"], key: "k" }],
    [{ op: "jsonPatch", ops: [] }],
  ];
  for (const ops of yes) assert.equal(leavesMetadata(ops), true, JSON.stringify(ops));
  for (const ops of no) assert.equal(leavesMetadata(ops), false, JSON.stringify(ops));
});
