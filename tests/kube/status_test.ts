/**
 * Status helpers without a cluster: condition list-map semantics (only a `status` flip
 * restamps `lastTransitionTime`), the RFC 7386 merge-patch diff (checked both against
 * expected patches and by applying it back with an independent RFC 7386 `apply`), and that
 * patchStatus/applyObject send what docs/design/kube.md#status-conditions-and-server-side-apply
 * says.
 */
import assert from "node:assert/strict";
import type { KubeClient, KubeObject, PatchOptions, ResourceRef } from "../../src/kube/mod.ts";
import {
  applyObject,
  FIELD_MANAGER,
  findCondition,
  isEmptyPatch,
  mergePatchFor,
  patchStatus,
  removeCondition,
  setCondition,
  type StatusCondition,
} from "../../src/kube/status.ts";
import { jsonEqual, type JsonValue } from "../../src/lib/json.ts";
import { rfc3339, rfc3339Micro } from "../../src/lib/time.ts";

const T0 = Date.UTC(2026, 10, 29, 20, 0, 0, 123);
const T1 = T0 + 60_000;
const T2 = T0 + 120_000;

Deno.test("time formats: metav1.Time (seconds) and MicroTime (six digits)", () => {
  assert.equal(rfc3339(T0), "2026-11-29T20:00:00Z");
  assert.equal(rfc3339Micro(T0), "2026-11-29T20:00:00.123000Z");
  assert.equal(rfc3339Micro(Date.UTC(2026, 0, 1)), "2026-01-01T00:00:00.000000Z");
});

Deno.test("setCondition: a new condition is appended and stamped", () => {
  const list = setCondition(undefined, {
    type: "Ready",
    status: "False",
    reason: "Pending",
    message: "waiting",
    observedGeneration: 3,
  }, T0);
  assert.deepEqual(list, [{
    type: "Ready",
    status: "False",
    reason: "Pending",
    message: "waiting",
    observedGeneration: 3,
    lastTransitionTime: "2026-11-29T20:00:00Z",
  }]);
});

Deno.test("setCondition: reason/message/generation changes keep lastTransitionTime", () => {
  const a = setCondition([], { type: "Ready", status: "False", reason: "A", message: "a" }, T0);
  const b = setCondition(a, {
    type: "Ready",
    status: "False",
    reason: "B",
    message: "b",
    observedGeneration: 2,
  }, T1);
  assert.equal(b[0].lastTransitionTime, rfc3339(T0));
  assert.equal(b[0].reason, "B");
  assert.equal(b[0].message, "b");
  assert.equal(b[0].observedGeneration, 2);
  // the input list is not modified
  assert.equal(a[0].reason, "A");
});

Deno.test("setCondition: a status flip restamps; flipping back restamps again", () => {
  const a = setCondition([], { type: "Ready", status: "False", reason: "A", message: "" }, T0);
  const b = setCondition(a, { type: "Ready", status: "True", reason: "A", message: "" }, T1);
  assert.equal(b[0].lastTransitionTime, rfc3339(T1));
  const c = setCondition(b, { type: "Ready", status: "True", reason: "Z", message: "z" }, T2);
  assert.equal(c[0].lastTransitionTime, rfc3339(T1));
  const d = setCondition(c, { type: "Ready", status: "Unknown", reason: "Z", message: "" }, T2);
  assert.equal(d[0].lastTransitionTime, rfc3339(T2));
});

Deno.test("setCondition: list-map by type — other conditions and order untouched", () => {
  let list: StatusCondition[] = [];
  for (const type of ["A", "B", "C"]) {
    list = setCondition(list, { type, status: "True", reason: "R", message: "" }, T0);
  }
  list = setCondition(list, { type: "B", status: "False", reason: "R2", message: "" }, T1);
  assert.deepEqual(list.map((c) => [c.type, c.status]), [["A", "True"], ["B", "False"], [
    "C",
    "True",
  ]]);
  assert.equal(findCondition(list, "A")?.lastTransitionTime, rfc3339(T0));
  assert.equal(findCondition(list, "B")?.lastTransitionTime, rfc3339(T1));
  assert.equal(findCondition(list, "D"), undefined);
});

Deno.test("setCondition: dropping observedGeneration removes the member", () => {
  const a = setCondition([], {
    type: "X",
    status: "True",
    reason: "",
    message: "",
    observedGeneration: 1,
  }, T0);
  const b = setCondition(a, { type: "X", status: "True", reason: "", message: "" }, T1);
  assert.equal("observedGeneration" in b[0], false);
});

Deno.test("removeCondition: removes by type, keeps the rest, does not mutate", () => {
  let list: StatusCondition[] = [];
  for (const type of ["A", "B"]) {
    list = setCondition(list, { type, status: "True", reason: "", message: "" }, T0);
  }
  assert.deepEqual(removeCondition(list, "A").map((c) => c.type), ["B"]);
  assert.deepEqual(removeCondition(list, "nope").map((c) => c.type), ["A", "B"]);
  assert.deepEqual(removeCondition(undefined, "A"), []);
  assert.equal(list.length, 2);
});

/** RFC 7386 MergePatch, written from the RFC's pseudo-code (independent of the SUT). */
function applyMergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const out: { [k: string]: JsonValue } =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

const CASES: Array<[string, JsonValue, JsonValue, JsonValue]> = [
  ["equal objects", { a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }, {}],
  ["scalar change", { a: 1, b: 2 }, { a: 1, b: 3 }, { b: 3 }],
  ["added key", { a: 1 }, { a: 1, b: "x" }, { b: "x" }],
  ["removed key", { a: 1, b: 2 }, { a: 1 }, { b: null }],
  ["nested change keeps siblings out", { s: { x: 1, y: { z: 1, w: 2 } } }, {
    s: { x: 1, y: { z: 2, w: 2 } },
  }, { s: { y: { z: 2 } } }],
  ["nested removal", { s: { x: 1, y: 2 } }, { s: { x: 1 } }, { s: { y: null } }],
  ["array replaced whole", { l: [{ a: 1 }, { b: 2 }] }, { l: [{ a: 1 }, { b: 3 }] }, {
    l: [{ a: 1 }, { b: 3 }],
  }],
  ["array shortened", { l: [1, 2, 3] }, { l: [1, 2] }, { l: [1, 2] }],
  ["object becomes scalar", { a: { b: 1 } }, { a: 5 }, { a: 5 }],
  ["scalar becomes object", { a: 5 }, { a: { b: 1 } }, { a: { b: 1 } }],
  ["array becomes object", { a: [1] }, { a: { b: 1 } }, { a: { b: 1 } }],
  ["value set to null means removal", { a: 1, b: 2 }, { a: 1, b: null }, { b: null }],
  ["removed subtree", { a: { b: { c: 1 } }, k: 1 }, { k: 1 }, { a: null }],
  ["non-object after replaces", { a: 1 }, [1, 2], [1, 2]],
];

for (const [name, before, after, want] of CASES) {
  Deno.test(`mergePatchFor: ${name}`, () => {
    const got = mergePatchFor(before, after);
    assert.deepEqual(got, want);
    // applying the patch yields `after` (null members = absent)
    const wantAfter = applyMergePatch({}, after) ?? after;
    assert.ok(
      jsonEqual(applyMergePatch(before, got), Array.isArray(after) ? after : wantAfter),
      `apply(before, patch) != after for ${name}`,
    );
  });
}

Deno.test("mergePatchFor: random documents round-trip through RFC 7386 apply", () => {
  let seed = 42;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const value = (depth: number): JsonValue => {
    switch (rnd(depth > 2 ? 3 : 5)) {
      case 0:
        return rnd(3);
      case 1:
        return ["x", "y", "z"][rnd(3)];
      case 2:
        return rnd(2) === 0;
      case 3:
        return Array.from({ length: rnd(3) }, () => value(depth + 1));
      default: {
        const o: { [k: string]: JsonValue } = {};
        for (let i = rnd(4); i > 0; i--) o[["a", "b", "c", "d"][rnd(4)]] = value(depth + 1);
        return o;
      }
    }
  };
  const obj = (): { [k: string]: JsonValue } => {
    const o: { [k: string]: JsonValue } = {};
    for (let i = rnd(5); i > 0; i--) o[["a", "b", "c", "d"][rnd(4)]] = value(1);
    return o;
  };
  for (let i = 0; i < 2000; i++) {
    const before = obj();
    const after = rnd(3) === 0 ? structuredClone(before) : obj();
    const patch = mergePatchFor(before, after);
    assert.ok(jsonEqual(applyMergePatch(before, patch), after), JSON.stringify({ before, after }));
    if (jsonEqual(before, after)) assert.ok(isEmptyPatch(patch));
  }
});

/** A KubeClient stand-in recording patch calls (only `patch` and `apply` are used). */
function recordingClient() {
  const calls: Array<{ name: string; body: unknown; opts: PatchOptions }> = [];
  const client = {
    patch(_ref: ResourceRef, name: string, body: unknown, opts: PatchOptions) {
      calls.push({ name, body, opts });
      return Promise.resolve({ metadata: { name } } as KubeObject);
    },
    apply(
      _ref: ResourceRef,
      obj: KubeObject,
      opts: { fieldManager: string; force?: boolean; dryRun?: boolean },
    ) {
      calls.push({ name: obj.metadata.name ?? "", body: obj, opts: { ...opts, type: "apply" } });
      return Promise.resolve(obj);
    },
  } as unknown as KubeClient;
  return { client, calls };
}

const REF: ResourceRef = { group: "example.com", version: "v1", plural: "widgets" };

Deno.test("patchStatus: merge patch of the status diff on the status subresource", async () => {
  const { client, calls } = recordingClient();
  const before = { metadata: { name: "w" }, spec: { a: 1 }, status: { phase: "A", n: 1 } };
  const after = { metadata: { name: "w" }, spec: { a: 2 }, status: { phase: "B", n: 1 } };
  await patchStatus(client, REF, "w", before, after);
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0].body, { status: { phase: "B" } });
  assert.equal(calls[0].opts.type, "merge");
  assert.equal(calls[0].opts.subresource, "status");
});

Deno.test("patchStatus: no change, no request", async () => {
  const { client, calls } = recordingClient();
  const o = { metadata: { name: "w" }, status: { phase: "A" } };
  assert.equal(await patchStatus(client, REF, "w", o, structuredClone(o)), undefined);
  assert.equal(calls.length, 0);
});

Deno.test("applyObject: SSA with dco's field manager and force", async () => {
  const { client, calls } = recordingClient();
  await applyObject(client, REF, { metadata: { name: "w" } });
  await applyObject(client, REF, { metadata: { name: "v" } }, "other");
  assert.equal(FIELD_MANAGER, "declarative-conversion-operator");
  assert.deepEqual(calls.map((c) => [c.opts.fieldManager, c.opts.force]), [
    ["declarative-conversion-operator", true],
    ["other", true],
  ]);
});
