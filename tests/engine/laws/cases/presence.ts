/** Law cases: DefaultValue, Constant, Delete. */
import { bool, int, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "presence";
const base = { name: str(), size: int() };

registerLawCase({
  family,
  name: "DefaultValue: existsOn Spoke",
  strategy: "DefaultValue",
  hub: root(base, { requireSpec: true }),
  spoke: root({ ...base, zone: str() }, { requireSpec: true }),
  rules: [{
    strategy: "DefaultValue",
    defaultValue: { path: "spec.zone", existsOn: "Spoke", default: "a" },
    acknowledgeLossy: true,
    reason: "zone only exists on v1",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
});

registerLawCase({
  family,
  name: "DefaultValue: existsOn Hub, an object default",
  strategy: "DefaultValue",
  hub: root({
    ...base,
    scheduling: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
  }, {
    requireSpec: true,
  }),
  spoke: root(base, { requireSpec: true }),
  rules: [{
    strategy: "DefaultValue",
    defaultValue: {
      path: "spec.scheduling",
      existsOn: "Hub",
      default: { priority: 1, zones: ["a"] },
    },
    acknowledgeLossy: true,
    reason: "scheduling is new in v2",
  }],
  lossless: { hubToSpoke: false, spokeToHub: true },
});

registerLawCase({
  family,
  name: "Constant: existsOn Hub",
  strategy: "Constant",
  hub: root({ ...base, apiLevel: int() }, { requireSpec: true }),
  spoke: root(base, { requireSpec: true }),
  rules: [{
    strategy: "Constant",
    constant: { path: "spec.apiLevel", existsOn: "Hub", value: 2 },
    acknowledgeLossy: true,
    reason: "marker",
  }],
  lossless: { hubToSpoke: false, spokeToHub: true },
});

registerLawCase({
  family,
  name: "Constant: existsOn Spoke",
  strategy: "Constant",
  hub: root(base, { requireSpec: true }),
  spoke: root({ ...base, legacy: bool() }, { requireSpec: true }),
  rules: [{
    strategy: "Constant",
    constant: { path: "spec.legacy", existsOn: "Spoke", value: true },
    acknowledgeLossy: true,
    reason: "marker",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
});

registerLawCase({
  family,
  name: "Delete: existsOn Spoke",
  strategy: "Delete",
  hub: root(base, { requireSpec: true }),
  spoke: root({ ...base, debugMode: bool() }, { requireSpec: true }),
  rules: [{
    strategy: "Delete",
    delete: { path: "spec.debugMode", existsOn: "Spoke" },
    acknowledgeLossy: true,
    reason: "debugging was removed",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
});

registerLawCase({
  family,
  name: "Delete: existsOn Hub",
  strategy: "Delete",
  hub: root({ ...base, telemetry: str() }, { requireSpec: true }),
  spoke: root(base, { requireSpec: true }),
  rules: [{
    strategy: "Delete",
    delete: { path: "spec.telemetry", existsOn: "Hub" },
    acknowledgeLossy: true,
    reason: "not in v1",
  }],
  lossless: { hubToSpoke: false, spokeToHub: true },
});
