/** Law cases: ForEach. */
import { arr, int, map, obj, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "for_each";

registerLawCase({
  family,
  name: "ForEach: element renames and an enum remap",
  strategy: "ForEach",
  hub: root({
    volumes: arr(
      obj({ name: str(), sizeGB: int(), type: str({ enum: ["ssd", "hdd"] }), tags: map() }),
    ),
  }, { requireSpec: true }),
  spoke: root({
    disks: arr(
      obj({ name: str(), size: int(), type: str({ enum: ["fast", "slow"] }), tags: map() }),
    ),
  }, { requireSpec: true }),
  rules: [{
    strategy: "ForEach",
    forEach: {
      hubItemsPath: "spec.volumes",
      spokeItemsPath: "spec.disks",
      rules: [
        { strategy: "FieldRename", fieldRename: { hubPath: "sizeGB", spokePath: "size" } },
        {
          strategy: "EnumRemap",
          enumRemap: {
            path: "type",
            mapping: [{ hub: "ssd", spoke: "fast" }, { hub: "hdd", spoke: "slow" }],
          },
        },
      ],
    },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "ForEach: two levels",
  strategy: "ForEach",
  hub: root({
    volumes: arr(obj({ name: str(), disks: arr(obj({ sizeGB: int(), label: str() })) })),
  }, { requireSpec: true }),
  spoke: root({
    volumes: arr(obj({ name: str(), disks: arr(obj({ size: int(), label: str() })) })),
  }, { requireSpec: true }),
  rules: [{
    strategy: "ForEach",
    forEach: {
      hubItemsPath: "spec.volumes",
      spokeItemsPath: "spec.volumes",
      rules: [{
        strategy: "ForEach",
        forEach: {
          hubItemsPath: "disks",
          spokeItemsPath: "disks",
          rules: [{
            strategy: "FieldRename",
            fieldRename: { hubPath: "sizeGB", spokePath: "size" },
          }],
        },
      }],
    },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "ForEach: a lossy nested rule, acknowledged at both levels",
  strategy: "ForEach",
  hub: root({ ports: arr(obj({ port: int(), name: str() })) }, { requireSpec: true }),
  spoke: root({ ports: arr(obj({ port: int(), name: str(), protocol: str() })) }, {
    requireSpec: true,
  }),
  rules: [{
    strategy: "ForEach",
    forEach: {
      hubItemsPath: "spec.ports",
      spokeItemsPath: "spec.ports",
      rules: [{
        strategy: "DefaultValue",
        defaultValue: { path: "protocol", existsOn: "Spoke", default: "TCP" },
        acknowledgeLossy: true,
        reason: "protocol is v1 only",
      }],
    },
    acknowledgeLossy: true,
    reason: "see nested rule",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
});
