/** Law cases: FieldRename, plus the core features around it (identity coverage, `when`). */
import { arr, bool, free, int, map, obj, root, str } from "../../_schemas.ts";
import type { JsonObject } from "../../../../src/engine/mod.ts";
import { registerLawCase } from "../registry.ts";

const family = "rename";

registerLawCase({
  family,
  name: "FieldRename: scalar in spec and status, identity around it",
  strategy: "FieldRename",
  hub: root(
    { storageGB: str(), region: str({ enum: ["eu", "us"] }), replicas: int({ minimum: 0 }) },
    { requireSpec: true, status: { phase: str(), observedGeneration: int() } },
  ),
  spoke: root(
    { storageSize: str(), region: str({ enum: ["eu", "us"] }), replicas: int({ minimum: 0 }) },
    { requireSpec: true, status: { state: str(), observedGeneration: int() } },
  ),
  rules: [
    {
      strategy: "FieldRename",
      fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.storageSize" },
    },
    {
      strategy: "FieldRename",
      fieldRename: { hubPath: "status.phase", spokePath: "status.state" },
    },
  ],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "FieldRename: arrays, free-form maps and preserve-unknown objects move whole",
  strategy: "FieldRename",
  hub: root({
    tags: map(str()),
    volumes: arr(obj({ name: str(), sizeGB: int() }), { maxItems: 3 }),
    extra: free(),
    nested: obj({ deep: obj({ flag: bool() }) }),
  }, { requireSpec: true }),
  spoke: root({
    labels: map(str()),
    disks: arr(obj({ name: str(), sizeGB: int() }), { maxItems: 3 }),
    blob: free(),
    nested: obj({ deep: obj({ flag: bool() }) }),
  }, { requireSpec: true }),
  rules: [
    { strategy: "FieldRename", fieldRename: { hubPath: "spec.tags", spokePath: "spec.labels" } },
    { strategy: "FieldRename", fieldRename: { hubPath: "spec.volumes", spokePath: "spec.disks" } },
    { strategy: "FieldRename", fieldRename: { hubPath: "spec.extra", spokePath: "spec.blob" } },
  ],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "core: a when-gated FieldRename whose gate always holds",
  strategy: "core",
  hub: root(
    { mode: str({ enum: ["advanced"] }), tuningLevel: int(), other: str() },
    { requireSpec: true, specRequired: ["mode"] },
  ),
  spoke: root(
    { mode: str({ enum: ["advanced"] }), level: int(), other: str() },
    { requireSpec: true, specRequired: ["mode"] },
  ),
  rules: [{
    strategy: "FieldRename",
    fieldRename: { hubPath: "spec.tuningLevel", spokePath: "spec.level" },
    when: { path: "spec.mode", equals: "advanced" },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "core: no rules, identical schemas with undeclared nested keys passed through",
  strategy: "core",
  hub: root(
    { size: int(), settings: free({ known: str() }), crossplane: free() },
    { requireSpec: true, status: { conditions: arr(free()) } },
  ),
  spoke: root(
    { size: int(), settings: free({ known: str() }), crossplane: free() },
    { requireSpec: true, status: { conditions: arr(free()) } },
  ),
  rules: [],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

/** Built with JSON.parse so `__proto__` is an own property, as in a decoded CRD. */
const prototypeKeys = (leaf: string) =>
  JSON.parse(`{
    "__proto__": {"type": "object", "properties": {"constructor": {"type": "string"}, "${leaf}": {"type": "integer"}}},
    "toString": {"type": "string"},
    "hasOwnProperty": {"type": "object", "additionalProperties": {"type": "string"}}
  }`);

registerLawCase({
  family,
  name: "core: property names that are JavaScript prototype keys",
  strategy: "core",
  hub: root(prototypeKeys("x"), { requireSpec: true }),
  spoke: root(prototypeKeys("y"), { requireSpec: true }),
  rules: [{
    strategy: "FieldRename",
    fieldRename: { hubPath: "spec.__proto__.x", spokePath: "spec.__proto__.y" },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "core: an XRD without status, Crossplane's status.conditions passed through",
  strategy: "core",
  target: "XRD",
  hub: root({ size: int(), color: str() }, { requireSpec: true }),
  spoke: root({ capacity: int(), color: str() }, { requireSpec: true }),
  rules: [{
    strategy: "FieldRename",
    fieldRename: { hubPath: "spec.size", spokePath: "spec.capacity" },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
  // What Crossplane writes into every version of the generated CRD.
  prepare: (o, _side, rng) => {
    if (rng.chance(0.2)) return;
    const conditions = ["Synced", "Ready"].slice(0, rng.int(1, 2)).map((type) => ({
      type,
      status: rng.pick(["True", "False"]),
      reason: rng.pick(["ReconcileSuccess", "Creating"]),
    }));
    o.status = { conditions };
    (o.spec as JsonObject).crossplane = { compositionRef: { name: rng.pick(["a", "b"]) } };
  },
});
