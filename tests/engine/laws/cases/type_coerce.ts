/** Law cases: TypeCoerce. */
import { bool, int, num, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "type_coerce";

registerLawCase({
  family,
  name: 'TypeCoerce: integer ↔ canonical decimal string, boolean ↔ "true"/"false"',
  strategy: "TypeCoerce",
  hub: root({ replicas: int(), enabled: bool() }, { requireSpec: true }),
  // Only canonical spellings: " 42 " or "T" are valid input but come back as "42" / "true".
  spoke: root({
    replicas: str({ pattern: "^(0|[1-9][0-9]{0,5})$", maxLength: 6 }),
    enabled: str({ enum: ["true", "false"] }),
  }, { requireSpec: true }),
  rules: [
    { strategy: "TypeCoerce", typeCoerce: { path: "spec.replicas" } },
    { strategy: "TypeCoerce", typeCoerce: { path: "spec.enabled" } },
  ],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "TypeCoerce: number → integer with Round is lossy; integers survive the way back",
  strategy: "TypeCoerce",
  hub: root({ ratio: num() }, { requireSpec: true }),
  spoke: root({ ratio: int({ minimum: -1000000, maximum: 1000000 }) }, { requireSpec: true }),
  rules: [{
    strategy: "TypeCoerce",
    typeCoerce: { path: "spec.ratio", onFractionalInteger: "Round" },
    acknowledgeLossy: true,
    reason: "v1 only stores whole ratios",
  }],
  lossless: { hubToSpoke: false, spokeToHub: true },
});
