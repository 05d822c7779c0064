/** Law cases: NumericScale. */
import { int, num, root } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "numeric_scale";

registerLawCase({
  family,
  // A power of two keeps every division exact; with factor 1000 double rounding can differ.
  name: "NumericScale: number ↔ number, factor 1024",
  strategy: "NumericScale",
  hub: root({ memoryBytes: num() }, { requireSpec: true }),
  spoke: root({ memoryKiB: num() }, { requireSpec: true }),
  rules: [{
    strategy: "NumericScale",
    numericScale: { hubPath: "spec.memoryBytes", spokePath: "spec.memoryKiB", factor: 1024 },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "NumericScale: integer hub, number spoke, factor 1000",
  strategy: "NumericScale",
  hub: root({ millis: int({ minimum: -1000000000, maximum: 1000000000 }) }, { requireSpec: true }),
  spoke: root({ seconds: num() }, { requireSpec: true }),
  rules: [{
    strategy: "NumericScale",
    numericScale: { hubPath: "spec.millis", spokePath: "spec.seconds", factor: 1000 },
    acknowledgeLossy: true,
    reason: "fractions of a millisecond are rounded",
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
});
