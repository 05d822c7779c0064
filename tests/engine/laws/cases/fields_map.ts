/** Law cases: FieldsToMap (MapToFields' are their mirrors, laws/mirror.ts). */
import { int, map, obj, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "fields_map";

registerLawCase({
  family,
  name: "FieldsToMap: keyNames, unknown keys are errors",
  strategy: "FieldsToMap",
  hub: root({ cpuLimit: str(), memoryLimit: str(), gpus: int({ nullable: true }) }, {
    requireSpec: true,
  }),
  // The map declares its keys, so generated spoke maps never carry unknown ones.
  spoke: root({ limits: obj({ cpu: str(), memory: str(), gpus: int({ nullable: true }) }) }, {
    requireSpec: true,
  }),
  rules: [{
    strategy: "FieldsToMap",
    fieldsToMap: {
      hubPaths: ["spec.cpuLimit", "spec.memoryLimit", "spec.gpus"],
      spokeMapPath: "spec.limits",
      keyNames: { "spec.cpuLimit": "cpu", "spec.memoryLimit": "memory" },
    },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "FieldsToMap: a free-form map under Drop loses unknown keys",
  strategy: "FieldsToMap",
  hub: root({ cpu: str(), memory: str() }, { requireSpec: true }),
  spoke: root({ limits: map(str()) }, { requireSpec: true }),
  rules: [{
    strategy: "FieldsToMap",
    fieldsToMap: {
      hubPaths: ["spec.cpu", "spec.memory"],
      spokeMapPath: "spec.limits",
      onUnknownSpokeKey: "Drop",
    },
    acknowledgeLossy: true,
    reason: "only cpu and memory exist on the hub",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
});
