/** Law cases: ToAnnotation, ToLabel, FromAnnotation, FromLabel. */
import { generateValue } from "../../../../src/engine/generate.ts";
import { goJSON } from "../../../../src/engine/go.ts";
import { arr, bool, int, map, num, obj, root, str } from "../../_schemas.ts";
import { putMetadata, registerLawCase } from "../registry.ts";

const family = "annotations";
const STRIPPED = "the reverse leg strips the stash instead of restoring it, so the " +
  "value kept in metadata by this leg is dropped on the way back";

const description = str();
const notes = obj({
  note: str(),
  level: int(),
  ratio: num(),
  tags: arr(str()),
  extra: map(bool()),
});

registerLawCase({
  family,
  name: "ToAnnotation: JSON of strings and objects, restored",
  strategy: "ToAnnotation",
  hub: root({ description, notes, size: int() }, { requireSpec: true }),
  spoke: root({ size: int() }, { requireSpec: true }),
  rules: [
    {
      strategy: "ToAnnotation",
      toAnnotation: {
        hubPath: "spec.description",
        key: "demo.example.com/description",
        restoreOnReverse: true,
      },
    },
    {
      strategy: "ToAnnotation",
      toAnnotation: {
        hubPath: "spec.notes",
        key: "demo.example.com/notes",
        restoreOnReverse: true,
      },
    },
  ],
  lossless: { hubToSpoke: true, spokeToHub: true },
  prepare(o, version, rng) {
    if (version !== "spoke") return;
    // A spoke object that went through hub→spoke carries canonical (Go) JSON stashes.
    if (rng.chance(0.6)) {
      putMetadata(
        o,
        "annotations",
        "demo.example.com/description",
        goJSON(generateValue(description, { rng })),
      );
    }
    if (rng.chance(0.6)) {
      putMetadata(
        o,
        "annotations",
        "demo.example.com/notes",
        goJSON(generateValue(notes, { rng })),
      );
    }
  },
});

registerLawCase({
  family,
  name: "ToAnnotation: String serialization without restore",
  strategy: "ToAnnotation",
  hub: root({ owner: str(), size: int() }, { requireSpec: true }),
  spoke: root({ size: int() }, { requireSpec: true }),
  rules: [{
    strategy: "ToAnnotation",
    toAnnotation: { hubPath: "spec.owner", key: "demo.example.com/owner", serialization: "String" },
    acknowledgeLossy: true,
    reason: "v1 clients never send it back",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
  roundTripExemptions: [{ direction: "hubToSpoke", reason: STRIPPED }],
});

const tier = str({ enum: ["gold", "silver", "bronze"] });

registerLawCase({
  family,
  name: "ToLabel: String and JSON (non-negative integers) restored",
  strategy: "ToLabel",
  hub: root({ tier, shards: int({ minimum: 0, maximum: 100000 }), size: int() }, {
    requireSpec: true,
  }),
  spoke: root({ size: int() }, { requireSpec: true }),
  rules: [
    {
      strategy: "ToLabel",
      toLabel: {
        hubPath: "spec.tier",
        key: "demo.example.com/tier",
        serialization: "String",
        restoreOnReverse: true,
      },
    },
    {
      strategy: "ToLabel",
      toLabel: { hubPath: "spec.shards", key: "shards", restoreOnReverse: true },
    },
  ],
  lossless: { hubToSpoke: true, spokeToHub: true },
  prepare(o, version, rng) {
    if (version !== "spoke") return;
    if (rng.chance(0.6)) {
      putMetadata(o, "labels", "demo.example.com/tier", rng.pick(["gold", "silver", "bronze"]));
    }
    if (rng.chance(0.6)) putMetadata(o, "labels", "shards", String(rng.int(0, 100000)));
  },
});

const operatorNote = str();

registerLawCase({
  family,
  name: "FromAnnotation: JSON, stashed on the way back",
  strategy: "FromAnnotation",
  hub: root({ size: int() }, { requireSpec: true }),
  spoke: root({ size: int(), operatorNote }, { requireSpec: true }),
  rules: [{
    strategy: "FromAnnotation",
    fromAnnotation: {
      spokePath: "spec.operatorNote",
      key: "demo.example.com/operator-note",
      stashOnReverse: true,
    },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
  prepare(o, version, rng) {
    if (version === "hub" && rng.chance(0.7)) {
      putMetadata(
        o,
        "annotations",
        "demo.example.com/operator-note",
        goJSON(generateValue(operatorNote, { rng })),
      );
    }
  },
});

registerLawCase({
  family,
  name: "FromAnnotation: without stash",
  strategy: "FromAnnotation",
  hub: root({ size: int() }, { requireSpec: true }),
  spoke: root({ size: int(), operatorNote }, { requireSpec: true }),
  rules: [{
    strategy: "FromAnnotation",
    fromAnnotation: { spokePath: "spec.operatorNote", key: "note", serialization: "String" },
    acknowledgeLossy: true,
    reason: "the hub has no place for the note",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
  roundTripExemptions: [{ direction: "hubToSpoke", reason: STRIPPED }],
  prepare(o, version, rng) {
    if (version === "hub" && rng.chance(0.7)) {
      putMetadata(o, "annotations", "note", "handle with care");
    }
  },
});

registerLawCase({
  family,
  name: "FromLabel: String, stashed on the way back",
  strategy: "FromLabel",
  hub: root({ size: int() }, { requireSpec: true }),
  spoke: root({ size: int(), operatorTier: tier }, { requireSpec: true }),
  rules: [{
    strategy: "FromLabel",
    fromLabel: { spokePath: "spec.operatorTier", key: "operator-tier", stashOnReverse: true },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
  prepare(o, version, rng) {
    if (version === "hub" && rng.chance(0.7)) {
      putMetadata(o, "labels", "operator-tier", rng.pick(["gold", "silver", "bronze"]));
    }
  },
});
