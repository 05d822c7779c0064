/** Law cases: ArrayToMapByKey (MapToArrayByKey's is its mirror, laws/mirror.ts). */
import { arr, int, map, obj, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "array_map";
const ORDER = "map→array sorts by key, so an array that was not sorted comes " +
  "back reordered although the array→map leg itself loses nothing";

const port = obj({
  port: int({ minimum: 1, maximum: 65535 }),
  protocol: str({ enum: ["TCP", "UDP"] }),
});
const namedPorts = arr(
  obj({
    name: str({ minLength: 1 }),
    port: port.properties!.port,
    protocol: port.properties!.protocol,
  }, {
    required: ["name"],
  }),
  { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] },
);

registerLawCase({
  family,
  name: "ArrayToMapByKey: named ports become a map keyed by name",
  strategy: "ArrayToMapByKey",
  hub: root({ ports: namedPorts }, { requireSpec: true }),
  spoke: root({ ports: map(port) }, { requireSpec: true }),
  rules: [{
    strategy: "ArrayToMapByKey",
    arrayToMapByKey: { hubPath: "spec.ports", spokePath: "spec.ports", keyField: "name" },
    acknowledgeLossy: true,
    reason: "order is not kept",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
  roundTripExemptions: [{ direction: "hubToSpoke", reason: ORDER }],
});
