/** Law cases: ScalarToObject (ObjectToScalar's are their mirrors, laws/mirror.ts). */
import { int, obj, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "scalar_object";

registerLawCase({
  family,
  name: "ScalarToObject: the object declares only the key",
  strategy: "ScalarToObject",
  hub: root({ replicaCount: int({ nullable: true }), name: str() }, { requireSpec: true }),
  spoke: root({ replicas: obj({ count: int({ nullable: true }) }), name: str() }, {
    requireSpec: true,
  }),
  rules: [{
    strategy: "ScalarToObject",
    scalarToObject: { hubPath: "spec.replicaCount", spokePath: "spec.replicas", key: "count" },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "ScalarToObject: other declared keys get defaults and are lost on the way back",
  strategy: "ScalarToObject",
  hub: root({ replicaCount: int() }, { requireSpec: true }),
  spoke: root({ replicas: obj({ count: int(), mode: str({ enum: ["auto", "manual"] }) }) }, {
    requireSpec: true,
  }),
  rules: [{
    strategy: "ScalarToObject",
    scalarToObject: {
      hubPath: "spec.replicaCount",
      spokePath: "spec.replicas",
      key: "count",
      defaultsForOtherKeys: { mode: "auto" },
    },
    acknowledgeLossy: true,
    reason: "mode only exists on v1",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
});
