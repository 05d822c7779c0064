/** Law cases: ListJoin, ListSplit. */
import type { JsonValue } from "../../../../src/engine/mod.ts";
import type { Rng } from "../../../../src/engine/generate.ts";
import { arr, int, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "list_join";
// Elements containing the separator, or empty ones, are bad data, not loss.
const element = str({ pattern: "^[^,]+$", minLength: 1, maxLength: 8 });

/** `n` integers joined by ";" — what a valid integer list looks like on the string side. */
const intList = (rng: Rng): JsonValue =>
  Array.from({ length: rng.int(0, 4) }, () => rng.int(-5000, 70000)).join(";");
const customFor = (path: string) => (_: unknown, at: readonly string[], rng: Rng) =>
  at.join(".") === path ? intList(rng) : undefined;

registerLawCase({
  family,
  name: "ListJoin: strings joined by a comma",
  strategy: "ListJoin",
  hub: root({ servers: arr(element) }, { requireSpec: true }),
  spoke: root({ servers: str() }, { requireSpec: true }),
  rules: [{
    strategy: "ListJoin",
    listJoin: { hubPath: "spec.servers", spokePath: "spec.servers", separator: "," },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "ListJoin: integers joined by a semicolon",
  strategy: "ListJoin",
  hub: root({ ports: arr(int({ minimum: -5000, maximum: 70000 })) }, { requireSpec: true }),
  spoke: root({ portsText: str() }, { requireSpec: true }),
  rules: [{
    strategy: "ListJoin",
    listJoin: { hubPath: "spec.ports", spokePath: "spec.portsText", separator: ";" },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
  generate: { custom: customFor("spec.portsText") },
});

registerLawCase({
  family,
  name: "ListSplit: a string split on every character (empty separator)",
  strategy: "ListSplit",
  hub: root({ letters: str() }, { requireSpec: true }),
  spoke: root({ letters: arr(str({ minLength: 1, maxLength: 1 })) }, { requireSpec: true }),
  rules: [{
    strategy: "ListSplit",
    listSplit: { hubPath: "spec.letters", spokePath: "spec.letters", separator: "" },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});
