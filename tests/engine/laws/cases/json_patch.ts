/** Law cases: JSONPatch. */
import { bool, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "json_patch";

registerLawCase({
  family,
  name: "JSONPatch: a required flag moved both ways, lossless by override",
  strategy: "JSONPatch",
  // Moving an absent field fails the conversion, so the override is honest
  // only for objects that carry the flag: generate it always. (Marking it `required` instead would
  // be a RequiredFieldUnsatisfiable error: JSONPatch declares no written paths.)
  hub: root({ legacyFlag: bool(), name: str() }, { requireSpec: true }),
  spoke: root({ legacyFlagV2: bool(), name: str() }, { requireSpec: true }),
  generate: { optionalProbability: 1 },
  rules: [{
    strategy: "JSONPatch",
    jsonPatch: {
      hubToSpoke: [{ op: "move", from: "/spec/legacyFlag", path: "/spec/legacyFlagV2" }],
      spokeToHub: [{ op: "move", from: "/spec/legacyFlagV2", path: "/spec/legacyFlag" }],
      losslessOverride: true,
    },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "JSONPatch: a constant added on the way out, removed on the way back",
  strategy: "JSONPatch",
  hub: root({ name: str() }, { requireSpec: true }),
  spoke: root({ name: str(), tier: str() }, { requireSpec: true }),
  rules: [{
    strategy: "JSONPatch",
    jsonPatch: {
      hubToSpoke: [
        { op: "add", path: "/spec/tier", value: "gold" },
        { op: "test", path: "/spec/tier", value: "gold" },
      ],
      spokeToHub: [{ op: "remove", path: "/spec/tier" }],
    },
    acknowledgeLossy: true,
    reason: "tier exists only on v1; an absent tier fails the way back",
  }],
  lossless: { hubToSpoke: false, spokeToHub: false },
});
