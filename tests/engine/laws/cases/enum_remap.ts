/** Law cases: EnumRemap. */
import { bool, int, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "enum_remap";

registerLawCase({
  family,
  name: "EnumRemap: strings, integers and boolean↔string, injective",
  strategy: "EnumRemap",
  hub: root({
    size: str({ enum: ["Small", "Large"] }),
    code: int({ enum: [200, 404] }),
    enabled: bool(),
  }, { requireSpec: true }),
  spoke: root({
    size: str({ enum: ["S", "L"] }),
    code: int({ enum: [2, 4] }),
    enabled: str({ enum: ["on", "off"] }),
  }, { requireSpec: true }),
  rules: [
    {
      strategy: "EnumRemap",
      enumRemap: {
        path: "spec.size",
        mapping: [{ hub: "Small", spoke: "S" }, { hub: "Large", spoke: "L" }],
      },
    },
    {
      strategy: "EnumRemap",
      enumRemap: { path: "spec.code", mapping: [{ hub: 200, spoke: 2 }, { hub: 404, spoke: 4 }] },
    },
    {
      strategy: "EnumRemap",
      enumRemap: {
        path: "spec.enabled",
        mapping: [{ hub: true, spoke: "on" }, { hub: false, spoke: "off" }],
      },
    },
  ],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "EnumRemap: unmapped hub values dropped",
  strategy: "EnumRemap",
  hub: root({ size: str({ enum: ["Small", "Large", "XL"] }) }, { requireSpec: true }),
  spoke: root({ size: str({ enum: ["S", "L"] }) }, { requireSpec: true }),
  rules: [{
    strategy: "EnumRemap",
    enumRemap: {
      path: "spec.size",
      mapping: [{ hub: "Small", spoke: "S" }, { hub: "Large", spoke: "L" }],
      onUnmappedHubValue: "Drop",
    },
    acknowledgeLossy: true,
    reason: "v1 has no XL",
  }],
  lossless: { hubToSpoke: false, spokeToHub: true },
});

registerLawCase({
  family,
  name: "EnumRemap: non-injective mapping",
  strategy: "EnumRemap",
  hub: root({ size: str({ enum: ["Small", "Medium", "Large"] }) }, { requireSpec: true }),
  spoke: root({ size: str({ enum: ["S", "L"] }) }, { requireSpec: true }),
  rules: [{
    strategy: "EnumRemap",
    enumRemap: {
      path: "spec.size",
      mapping: [{ hub: "Small", spoke: "S" }, { hub: "Medium", spoke: "S" }, {
        hub: "Large",
        spoke: "L",
      }],
    },
    acknowledgeLossy: true,
    reason: "Medium folds into S",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
  roundTripExemptions: [{
    direction: "hubToSpoke",
    reason: "EnumRemap charges a repeated spoke value to spoke→hub, but it is hub→spoke " +
      "that merges Small and Medium; a hub round trip turns Small into Medium",
  }],
});
