/** The runtime: convert, link, route, stamp apiVersion. */
import assert from "node:assert/strict";
import {
  convertObject,
  convertWithPlan,
  createRouter,
  type JsonObject,
  linkPlan,
  type PlanData,
  versionOf,
} from "../../src/engine/mod.ts";
import { assertConversionError, deepFreeze, resource } from "./_checks.ts";
import { analyzePair, pairPlan } from "./_helpers.ts";
import { apiVersion, HUB, int, KIND, root, SPOKE, str } from "./_schemas.ts";

const rename = {
  strategy: "FieldRename",
  fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.storageSize" },
};
const hub = root({ storageGB: str(), n: int() });
const spoke = root({ storageSize: str(), n: int() });

function router() {
  return createRouter(analyzePair(hub, spoke, [rename]).result);
}

Deno.test("convert: kind only if present, metadata deep-copied or {}", () => {
  const plan = pairPlan(hub, spoke, [rename]);
  assert.deepEqual(convertWithPlan(plan, "hubToSpoke", {}), { metadata: {} });
  assert.deepEqual(convertWithPlan(plan, "hubToSpoke", { kind: 7 as never }), {
    kind: 7,
    metadata: {},
  });
  const meta = { name: "g", annotations: { a: "b" } };
  const out = convertWithPlan(plan, "spokeToHub", {
    kind: KIND,
    metadata: meta,
    spec: { storageSize: "1" },
  });
  assert.deepEqual(out, { kind: KIND, metadata: meta, spec: { storageGB: "1" } });
  assert.notEqual(out.metadata, meta);
  assert.notEqual((out.metadata as JsonObject).annotations, meta.annotations);
});

Deno.test("errors name the direction and the versions; no partial output", () => {
  const plan = pairPlan(
    hub,
    spoke,
    [
      { strategy: "EnumRemap", enumRemap: { path: "spec.n", mapping: [{ hub: 1, spoke: 2 }] } },
      rename,
    ],
  );
  const e = assertConversionError(
    () => convertWithPlan(plan, "hubToSpoke", resource({ spec: { storageGB: "1", n: 5 } })),
    "hub→spoke (v2↔v1): spec.n",
  );
  assert.equal(e.name, "ConversionError");
  assertConversionError(
    () => convertWithPlan(plan, "spokeToHub", resource({ spec: { n: 1 } })),
    "spoke→hub (v2↔v1)",
  );
});

Deno.test("linkPlan: an unknown op code fails at link time, not at conversion", () => {
  const bad: PlanData = {
    hubVersion: HUB,
    spokeVersion: SPOKE,
    hubToSpoke: [{ op: "teleport" }],
    spokeToHub: [],
  };
  assert.throws(() => linkPlan(bad), /unknown op code "teleport"/);
  const nested: PlanData = {
    hubVersion: HUB,
    spokeVersion: SPOKE,
    hubToSpoke: [{ op: "when", path: ["spec"], equals: 1, inner: { op: "nope" } }],
    spokeToHub: [],
  };
  assert.throws(() => linkPlan(nested), /unknown op code "nope"/);
});

Deno.test("createRouter(hubVersion, plans) links plan data directly", () => {
  const plan = analyzePair(hub, spoke, [rename]).report.plan!;
  const r = createRouter(HUB, [plan]);
  assert.deepEqual(r.versions(), [HUB, SPOKE]);
  assert.deepEqual(
    r.route(resource({ spec: { storageGB: "5" } }), HUB, SPOKE),
    resource({ spec: { storageSize: "5" } }),
  );
});

Deno.test("versionOf: the text after the last slash", () => {
  assert.equal(versionOf("demo.example.com/v1"), "v1");
  assert.equal(versionOf("v1"), "v1");
  assert.equal(versionOf("a/b/c"), "c");
  assert.equal(versionOf(""), "");
});

Deno.test("convertObject: routes by version, stamps the desired apiVersion first", () => {
  const input = deepFreeze({
    apiVersion: apiVersion(HUB),
    ...resource({ spec: { storageGB: "9" } }),
  });
  const out = convertObject(router(), input, apiVersion(SPOKE));
  assert.deepEqual(out, {
    apiVersion: apiVersion(SPOKE),
    ...resource({ spec: { storageSize: "9" } }),
  });
  assert.equal(Object.keys(out)[0], "apiVersion");
  const back = convertObject(router(), out, apiVersion(HUB));
  assert.deepEqual(back, input);
});

Deno.test("convertObject within one version: a new top-level object, the desired apiVersion, a metadata map", () => {
  const input = deepFreeze({ apiVersion: "old.example.com/v1", kind: KIND, spec: { anything: 1 } });
  const out = convertObject(router(), input, "new.example.com/v1");
  assert.notEqual(out, input);
  assert.deepEqual(out, {
    apiVersion: "new.example.com/v1",
    kind: KIND,
    spec: { anything: 1 },
    metadata: {},
  });
  const nullMeta = convertObject(
    router(),
    { apiVersion: apiVersion(HUB), metadata: null },
    apiVersion(HUB),
  );
  assert.deepEqual(nullMeta, { apiVersion: apiVersion(HUB), metadata: {} });
});

Deno.test("convertObject: missing or empty apiVersion is a ConversionError", () => {
  assertConversionError(
    () => convertObject(router(), { kind: KIND }, apiVersion(SPOKE)),
    "no apiVersion",
  );
  assertConversionError(
    () => convertObject(router(), { apiVersion: "" }, apiVersion(SPOKE)),
    "no apiVersion",
  );
  assertConversionError(
    () => convertObject(router(), { apiVersion: 2 as never }, apiVersion(SPOKE)),
    "no apiVersion",
  );
});

Deno.test("conversions never mutate their input (deep-frozen) and repeated runs agree", () => {
  const r = router();
  const input = deepFreeze({
    apiVersion: apiVersion(SPOKE),
    kind: KIND,
    metadata: { name: "g", labels: { a: "b" } },
    spec: { storageSize: "1", n: 2, extra: { deep: [1, { x: null }] } },
    status: { dropped: true },
  });
  const snapshot = JSON.stringify(input);
  const a = convertObject(r, input, apiVersion(HUB));
  const b = convertObject(r, input, apiVersion(HUB));
  assert.equal(JSON.stringify(input), snapshot);
  assert.deepEqual(a, b);
  assert.deepEqual(a, {
    apiVersion: apiVersion(HUB),
    kind: KIND,
    metadata: { name: "g", labels: { a: "b" } },
    spec: { storageGB: "1", n: 2, extra: { deep: [1, { x: null }] } },
  });
});
