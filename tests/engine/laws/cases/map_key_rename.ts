/** Law cases: MapKeyRename. */
import type { JsonObject } from "../../../../src/engine/mod.ts";
import type { Rng } from "../../../../src/engine/generate.ts";
import { map, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "map_key_rename";

/** Keys drawn from a list, so renamed keys occur and a map never holds both app and application. */
function labels(keys: readonly string[], rng: Rng): JsonObject {
  const out: JsonObject = {};
  for (const k of keys) if (rng.chance(0.6)) out[k] = `v${rng.int(0, 99)}`;
  return out;
}
const HUB_KEYS = ["app", "tier", "region", "owner.example.com/team"];
const SPOKE_KEYS = ["application", "level", "region", "owner.example.com/team"];

registerLawCase({
  family,
  name: "MapKeyRename: app → application, tier → level, the map moving path",
  strategy: "MapKeyRename",
  hub: root({ labels: map(str()) }, { requireSpec: true }),
  spoke: root({ tags: map(str()) }, { requireSpec: true }),
  rules: [{
    strategy: "MapKeyRename",
    mapKeyRename: {
      hubPath: "spec.labels",
      spokePath: "spec.tags",
      renames: { app: "application", tier: "level" },
    },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
  generate: {
    custom(_node, path, rng) {
      const at = path.join(".");
      if (at === "spec.labels") return labels(HUB_KEYS, rng);
      if (at === "spec.tags") return labels(SPOKE_KEYS, rng);
      return undefined;
    },
  },
});
