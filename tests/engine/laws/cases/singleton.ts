/** Law cases: SingletonArrayToObject (ObjectToSingletonArray's are their mirrors, laws/mirror.ts). */
import { arr, int, obj, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "singleton";
const zone = obj({ name: str(), weight: int() });
const EMPTY_ARRAY = "an empty array writes nothing on the other side";

registerLawCase({
  family,
  name: "SingletonArrayToObject: maxItems 1",
  strategy: "SingletonArrayToObject",
  hub: root({ zones: arr(zone, { maxItems: 1 }) }, { requireSpec: true }),
  spoke: root({ zone }, { requireSpec: true }),
  rules: [{
    strategy: "SingletonArrayToObject",
    singletonArrayToObject: { hubPath: "spec.zones", spokePath: "spec.zone" },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
  vanishing: { hubToSpoke: [{ path: "spec.zones", reason: EMPTY_ARRAY }] },
});

registerLawCase({
  family,
  name: "SingletonArrayToObject: no maxItems, later elements are lost",
  strategy: "SingletonArrayToObject",
  hub: root({ zones: arr(zone) }, { requireSpec: true }),
  spoke: root({ zone }, { requireSpec: true }),
  rules: [{
    strategy: "SingletonArrayToObject",
    singletonArrayToObject: { hubPath: "spec.zones", spokePath: "spec.zone" },
    acknowledgeLossy: true,
    reason: "v1 supports one zone",
  }],
  lossless: { hubToSpoke: false, spokeToHub: true },
});
