/** Law cases: Quantity, Duration. */
import type { JsonValue } from "../../../../src/engine/mod.ts";
import type { Rng } from "../../../../src/engine/generate.ts";
import { int, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "units";

/** Canonical decimal-SI quantities: a mantissa of 1–999 and a suffix. */
function quantity(rng: Rng): JsonValue {
  if (rng.chance(0.05)) return "0";
  const sign = rng.chance(0.1) ? "-" : "";
  return `${sign}${rng.int(1, 999)}${rng.pick(["m", "", "k", "M", "G"])}`;
}

/** Canonical Go durations of whole seconds. */
function duration(rng: Rng): JsonValue {
  const total = rng.pick([0, rng.int(1, 59), rng.int(60, 3599), rng.int(3600, 400000)]);
  const sign = total !== 0 && rng.chance(0.1) ? "-" : "";
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (total === 0) return "0s";
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

const at = (path: string, make: (rng: Rng) => JsonValue) =>
(
  _: unknown,
  p: readonly string[],
  rng: Rng,
) => (p.join(".") === path ? make(rng) : undefined);

const CANONICAL = 'only the canonical spelling comes back ("0.5" and "500m" are both 500): ' +
  "Quantity and Duration declare integer→string lossy";

registerLawCase({
  family,
  name: "Quantity: a canonical string on the hub, milli-units on the spoke",
  strategy: "Quantity",
  hub: root({ cpu: str() }, { requireSpec: true }),
  spoke: root({ cpuMillis: int() }, { requireSpec: true }),
  rules: [{
    strategy: "Quantity",
    quantity: { hubPath: "spec.cpu", spokePath: "spec.cpuMillis" },
    acknowledgeLossy: true,
    reason: CANONICAL,
  }],
  lossless: { hubToSpoke: true, spokeToHub: false },
  generate: { custom: at("spec.cpu", quantity) },
});

registerLawCase({
  family,
  name: "Duration: seconds on the hub, a canonical Go duration on the spoke",
  strategy: "Duration",
  hub: root({ timeoutSeconds: int({ minimum: -400000, maximum: 400000 }) }, { requireSpec: true }),
  spoke: root({ timeout: str() }, { requireSpec: true }),
  rules: [{
    strategy: "Duration",
    duration: { hubPath: "spec.timeoutSeconds", spokePath: "spec.timeout" },
    acknowledgeLossy: true,
    reason: CANONICAL,
  }],
  lossless: { hubToSpoke: false, spokeToHub: true },
  generate: { custom: at("spec.timeout", duration) },
});
