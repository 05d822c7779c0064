/** ScalarToObject / ObjectToScalar conformance. */
import assert from "node:assert/strict";
import { describe, resource, single } from "./_checks.ts";
import { analyzePair, h2s, pairPlan, s2h } from "./_helpers.ts";
import { bool, int, map, obj, root, str } from "./_schemas.ts";

const replicas = obj({ count: int(), mode: str() });
const s2o = (extra: Record<string, unknown> = {}) => ({
  strategy: "ScalarToObject",
  scalarToObject: {
    hubPath: "spec.replicaCount",
    spokePath: "spec.replicas",
    key: "count",
    defaultsForOtherKeys: { mode: "auto" },
  },
  ...extra,
});

Deno.test("ScalarToObject with defaultsForOtherKeys: wrap with defaults, unwrap the key", () => {
  const plan = pairPlan(root({ replicaCount: int() }), root({ replicas }), [
    s2o({ acknowledgeLossy: true }),
  ]);
  assert.deepEqual(
    h2s(plan, resource({ spec: { replicaCount: 3 } })),
    resource({ spec: { replicas: { count: 3, mode: "auto" } } }),
  );
  assert.deepEqual(
    s2h(plan, resource({ spec: { replicas: { count: 3, mode: "manual" } } })),
    resource({ spec: { replicaCount: 3 } }),
  );
});

Deno.test("ScalarToObject: another declared spoke property without ack is unacknowledged-lossy spoke→hub", () => {
  const { report } = analyzePair(root({ replicaCount: int() }), root({ replicas }), [s2o()]);
  const d = single(report.errors, "unacknowledged-lossy");
  assert.match(d.message, /spoke→hub/);
  assert.equal(report.errors.length, 1, describe(report.errors));
  assert.deepEqual(report.lossless, { hubToSpoke: true, spokeToHub: false });
  // defaultsForOtherKeys does not make it lossless; only the declared properties count.
  assert.deepEqual(report.ruleResults[0].lossless, { hubToSpoke: true, spokeToHub: false });
});

Deno.test("ScalarToObject: the value wins over a same-named default; defaults are copies", () => {
  const plan = pairPlan(root({ n: int() }), root({ o: obj({ count: int() }) }), [{
    strategy: "ScalarToObject",
    scalarToObject: {
      hubPath: "spec.n",
      spokePath: "spec.o",
      key: "count",
      defaultsForOtherKeys: { count: 0 },
    },
  }]);
  assert.deepEqual(h2s(plan, resource({ spec: { n: 7 } })).spec, { o: { count: 7 } });
});

Deno.test("ScalarToObject unwrap: only a map holding the key unwraps, never an error", () => {
  const plan = pairPlan(root({ n: int() }), root({ o: obj({ count: int() }) }), [{
    strategy: "ScalarToObject",
    scalarToObject: { hubPath: "spec.n", spokePath: "spec.o", key: "count" },
  }]);
  for (const o of [{}, "text", [1], null]) {
    assert.deepEqual(s2h(plan, resource({ spec: { o: o as never } })), resource({}), String(o));
  }
  assert.deepEqual(s2h(plan, resource({ spec: { o: { count: null } } })).spec, { n: null });
  // Undeclared keys inside the (declared) spoke object are nested passthrough.
  assert.deepEqual(s2h(plan, resource({ spec: { o: { other: 1 } } })).spec, { o: { other: 1 } });
});

Deno.test("ScalarToObject into a free-form map: no declared properties, so declared lossless", () => {
  // A free-form spoke map has no declared properties; the verdict ignores the
  // keys such a map may hold at runtime (they are dropped by spoke→hub).
  const { report } = analyzePair(root({ n: int() }), root({ o: map(int()) }), [{
    strategy: "ScalarToObject",
    scalarToObject: { hubPath: "spec.n", spokePath: "spec.o", key: "count" },
  }]);
  assert.deepEqual(report.errors, [], describe(report.errors));
  assert.deepEqual(report.lossless, { hubToSpoke: true, spokeToHub: true });
});

Deno.test("ObjectToScalar: a hub object without the key writes nothing, no error", () => {
  const network = obj({ cidr: str(), ipv6: bool() });
  const { report } = analyzePair(root({ network }), root({ networkCIDR: str() }), [{
    strategy: "ObjectToScalar",
    objectToScalar: { hubPath: "spec.network", spokePath: "spec.networkCIDR", key: "cidr" },
    acknowledgeLossy: true,
  }]);
  assert.deepEqual(report.lossless, { hubToSpoke: false, spokeToHub: true });
  const plan = pairPlan(root({ network }), root({ networkCIDR: str() }), [{
    strategy: "ObjectToScalar",
    objectToScalar: { hubPath: "spec.network", spokePath: "spec.networkCIDR", key: "cidr" },
    acknowledgeLossy: true,
  }]);
  assert.deepEqual(h2s(plan, resource({ spec: { network: { ipv6: true } } })), resource({}));
  assert.deepEqual(
    h2s(plan, resource({ spec: { network: { cidr: "10.0.0.0/8", ipv6: true } } })),
    resource({ spec: { networkCIDR: "10.0.0.0/8" } }),
  );
  assert.deepEqual(
    s2h(plan, resource({ spec: { networkCIDR: "10.0.0.0/8" } })),
    resource({ spec: { network: { cidr: "10.0.0.0/8" } } }),
  );
});

Deno.test("ObjectToScalar claims the hub object's subtree; ScalarToObject the spoke's", () => {
  const network = obj({ cidr: str(), ipv6: bool() });
  const { report } = analyzePair(root({ network }), root({ networkCIDR: str() }), [{
    strategy: "ObjectToScalar",
    objectToScalar: { hubPath: "spec.network", spokePath: "spec.networkCIDR", key: "cidr" },
    acknowledgeLossy: true,
  }]);
  assert.deepEqual(report.uncoveredHub, []);
  assert.deepEqual(report.uncoveredSpoke, []);
});
