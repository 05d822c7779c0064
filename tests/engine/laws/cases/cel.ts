/** Law cases: CEL. */
import { int, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "cel";

registerLawCase({
  family,
  name: "CEL: a packed integer split into two bytes (dotted and nested results)",
  strategy: "CEL",
  hub: root({ packed: int({ minimum: 0, maximum: 65535 }), name: str() }, { requireSpec: true }),
  spoke: root({
    bitHigh: int({ minimum: 0, maximum: 255 }),
    bitLow: int({ minimum: 0, maximum: 255 }),
    name: str(),
  }, { requireSpec: true }),
  rules: [{
    strategy: "CEL",
    cel: {
      hubPaths: ["spec.packed"],
      spokePaths: ["spec.bitHigh", "spec.bitLow"],
      hubToSpoke: 'has(object.spec.packed) ? {"spec.bitHigh": int(object.spec.packed) / 256, ' +
        '"spec.bitLow": int(object.spec.packed) % 256} : {}',
      // No guard: an object without both fields fails, as evaluation is unconditional.
      spokeToHub: '{"spec": {"packed": int(object.spec.bitHigh) * 256 + int(object.spec.bitLow)}}',
    },
    acknowledgeLossy: true,
    reason: "CEL is never provably lossless",
  }],
  lossless: { hubToSpoke: false, spokeToHub: false },
});
