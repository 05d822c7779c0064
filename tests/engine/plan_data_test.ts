/**
 * Plans are data (docs/design/engine.md#plan-shape): structured-cloneable, JSON-like, never
 * mutated by linking, and a clone linked elsewhere converts exactly like the original.
 */
import assert from "node:assert/strict";
import {
  convertWithPlan,
  type Direction,
  type JsonObject,
  linkPlan,
  type PlanData,
  type SchemaNode,
} from "../../src/engine/mod.ts";
import { generateResource } from "../../src/engine/generate.ts";
import { deepFreeze, describe } from "./_checks.ts";
import { analyzePair } from "./_helpers.ts";
import { apiVersion, arr, bool, HUB, int, KIND, map, obj, root, SPOKE, str } from "./_schemas.ts";

const ack = { acknowledgeLossy: true };

/** One pair of schemas and a rule list using every core strategy (and `when`). */
/** The kitchen sink's hub and spoke `spec` properties. */
const hubFields = (): Record<string, SchemaNode> => ({
  storageGB: str(),
  replicaCount: int(),
  network: obj({ cidr: str() }),
  zones: arr(obj({ name: str() }), { maxItems: 1 }),
  primary: obj({ name: str() }),
  cpu: str(),
  tags: obj({ env: str() }),
  description: str(),
  tier: str({ enum: ["gold", "silver"] }),
  size: str({ enum: ["Small", "Large"] }),
  apiLevel: int(),
  telemetry: bool(),
  volumes: arr(obj({ name: str(), sizeGB: int() })),
  mode: str(),
  gated: int(),
});
const spokeFields = (): Record<string, SchemaNode> => ({
  storageSize: str(),
  replicas: obj({ count: int() }),
  networkCIDR: str(),
  zone: obj({ name: str() }),
  regions: arr(obj({ name: str() }), { maxItems: 1 }),
  limits: map(),
  env: str(),
  size: str({ enum: ["S", "L"] }),
  zoneName: str(),
  operatorNote: str(),
  operatorTier: str(),
  debug: bool(),
  volumes: arr(obj({ name: str(), size: int() })),
  mode: str(),
  gatedLevel: int(),
});

function kitchenSink(): PlanData {
  const hub = root(hubFields(), { status: { phase: str() } });
  const spoke = root(spokeFields(), { status: { state: str() } });
  const { report } = analyzePair(hub, spoke, [
    {
      strategy: "FieldRename",
      fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.storageSize" },
    },
    {
      strategy: "FieldRename",
      fieldRename: { hubPath: "status.phase", spokePath: "status.state" },
    },
    {
      strategy: "ScalarToObject",
      scalarToObject: { hubPath: "spec.replicaCount", spokePath: "spec.replicas", key: "count" },
    },
    {
      strategy: "ObjectToScalar",
      objectToScalar: { hubPath: "spec.network", spokePath: "spec.networkCIDR", key: "cidr" },
    },
    {
      strategy: "SingletonArrayToObject",
      singletonArrayToObject: { hubPath: "spec.zones", spokePath: "spec.zone" },
    },
    {
      strategy: "ObjectToSingletonArray",
      objectToSingletonArray: { hubPath: "spec.primary", spokePath: "spec.regions" },
    },
    {
      strategy: "FieldsToMap",
      fieldsToMap: { hubPaths: ["spec.cpu"], spokeMapPath: "spec.limits" },
    },
    { strategy: "MapToFields", mapToFields: { hubMapPath: "spec.tags", spokePaths: ["spec.env"] } },
    {
      strategy: "ToAnnotation",
      toAnnotation: { hubPath: "spec.description", key: "d", restoreOnReverse: true },
    },
    {
      strategy: "ToLabel",
      toLabel: {
        hubPath: "spec.tier",
        key: "tier",
        serialization: "String",
        restoreOnReverse: true,
      },
    },
    {
      strategy: "FromAnnotation",
      fromAnnotation: { spokePath: "spec.operatorNote", key: "note", stashOnReverse: true },
    },
    {
      strategy: "FromLabel",
      fromLabel: { spokePath: "spec.operatorTier", key: "op-tier", stashOnReverse: true },
    },
    {
      strategy: "EnumRemap",
      enumRemap: {
        path: "spec.size",
        mapping: [{ hub: "Small", spoke: "S" }, { hub: "Large", spoke: "L" }],
      },
    },
    {
      strategy: "DefaultValue",
      defaultValue: { path: "spec.zoneName", existsOn: "Spoke", default: "a" },
      ...ack,
    },
    {
      strategy: "Constant",
      constant: { path: "spec.apiLevel", existsOn: "Hub", value: 2 },
      ...ack,
    },
    { strategy: "Delete", delete: { path: "spec.telemetry", existsOn: "Hub" }, ...ack },
    { strategy: "Delete", delete: { path: "spec.debug", existsOn: "Spoke" }, ...ack },
    {
      strategy: "ForEach",
      forEach: {
        hubItemsPath: "spec.volumes",
        spokeItemsPath: "spec.volumes",
        rules: [{ strategy: "FieldRename", fieldRename: { hubPath: "sizeGB", spokePath: "size" } }],
      },
    },
    {
      strategy: "FieldRename",
      fieldRename: { hubPath: "spec.gated", spokePath: "spec.gatedLevel" },
      when: { path: "spec.mode", equals: "on" },
    },
  ]);
  assert.deepEqual(report.errors, [], describe(report.errors));
  return report.plan!;
}

function assertPlainData(v: unknown, at = "plan"): void {
  if (v === null || ["string", "number", "boolean"].includes(typeof v)) return;
  if (Array.isArray(v)) return v.forEach((x, i) => assertPlainData(x, `${at}[${i}]`));
  assert.equal(typeof v, "object", `${at} is ${typeof v}`);
  assert.equal(Object.getPrototypeOf(v), Object.prototype, `${at} is a plain object`);
  for (const [k, x] of Object.entries(v as object)) assertPlainData(x, `${at}.${k}`);
}

Deno.test("a plan uses every core op and is plain JSON-like data", () => {
  const plan = kitchenSink();
  assertPlainData(plan);
  const codes = new Set<string>();
  const collect = (ops: unknown[]) =>
    ops.forEach((op) => {
      const o = op as { op: string; ops?: unknown[]; inner?: unknown };
      codes.add(o.op);
      if (o.ops) collect(o.ops);
      if (o.inner) collect([o.inner]);
    });
  collect([...plan.hubToSpoke, ...plan.spokeToHub]);
  assert.deepEqual([...codes].sort(), [
    "carry",
    "collapse",
    "copy",
    "expand",
    "firstElement",
    "forEach",
    "remap",
    "restore",
    "set",
    "stash",
    "unwrap",
    "when",
    "wrap",
    "wrapInArray",
  ]);
  assert.equal(plan.hubToSpoke.at(-1)!.op, "carry");
  assert.equal(plan.spokeToHub.at(-1)!.op, "carry");
  assert.deepEqual(JSON.parse(JSON.stringify(plan)), plan);
});

Deno.test("structuredClone(plan) equals the plan; the clone, linked, converts identically", () => {
  const plan = kitchenSink();
  const clone = structuredClone(plan);
  assert.deepEqual(clone, plan);
  const original = linkPlan(plan);
  const linked = linkPlan(deepFreeze(clone));
  let converted = 0;
  for (const direction of ["hubToSpoke", "spokeToHub"] as Direction[]) {
    for (let seed = 0; seed < 100; seed++) {
      const input = deepFreeze(sample(direction, seed));
      let a: JsonObject | Error;
      let b: JsonObject | Error;
      try {
        a = convertWithPlan(original, direction, input);
      } catch (e) {
        a = e as Error;
      }
      try {
        b = convertWithPlan(linked, direction, input);
      } catch (e) {
        b = e as Error;
      }
      if (a instanceof Error) {
        assert.ok(b instanceof Error);
        assert.equal(b.message, a.message);
      } else {
        assert.deepEqual(b, a);
        converted++;
      }
    }
  }
  assert.ok(converted > 150, `most samples convert (${converted})`);
});

Deno.test("a plan survives postMessage (the Worker hand-off) and still links", async () => {
  const plan = kitchenSink();
  const { port1, port2 } = new MessageChannel();
  const received = new Promise<PlanData>((resolve) => (port2.onmessage = (e) => resolve(e.data)));
  port1.postMessage(plan);
  const copy = await received;
  port1.close();
  port2.close();
  assert.deepEqual(copy, plan);
  const input = deepFreeze({
    kind: KIND,
    metadata: {},
    spec: { storageGB: "1", volumes: [{ sizeGB: 2 }] },
  });
  assert.deepEqual(
    convertWithPlan(linkPlan(copy), "hubToSpoke", input),
    convertWithPlan(linkPlan(plan), "hubToSpoke", input),
  );
});

/** Objects of the source side of `direction`, generated from the kitchen-sink schemas' shapes. */
function sample(direction: Direction, seed: number): JsonObject {
  // The shapes generated from: no fields the rules do not read back, enums where a rule maps values.
  const { apiLevel: _apiLevel, telemetry: _telemetry, ...hub } = hubFields();
  const { limits: _limits, zoneName: _zoneName, ...spoke } = spokeFields();
  const mode = str({ enum: ["on", "off"] });
  const hubShape = root({ ...hub, mode }, { status: { phase: str() } });
  const spokeShape = root(
    { ...spoke, operatorTier: str({ enum: ["gold", "silver"] }), mode },
    { status: { state: str() } },
  );
  const hubSide = direction === "hubToSpoke";
  return generateResource(hubSide ? hubShape : spokeShape, {
    seed,
    apiVersion: apiVersion(hubSide ? HUB : SPOKE),
    kind: KIND,
  });
}
