/**
 * The reconcile's gates in the order they run (docs/design/config-reconcile.md#reconcile-order-and-gates).
 * The order is a safety guarantee: the target is patched only after the config validated against
 * the *current* live schema, the target is Established and the server is ready (and, for a move,
 * serves the target).
 */
import type { Gate } from "./gate.ts";
import { appliedGate, applyGate, propagationGate } from "./gates/apply.ts";
import { caBundleGate, handoverGate, serverReadyGate, serverResolvedGate } from "./gates/server.ts";
import { targetEstablishedGate, targetGate } from "./gates/target.ts";
import { analyzedGate, translatedGate, validatedGate } from "./gates/validation.ts";

export const CONFIG_GATES: readonly Gate[] = [
  targetGate,
  translatedGate,
  analyzedGate,
  validatedGate,
  serverResolvedGate,
  targetEstablishedGate,
  serverReadyGate,
  handoverGate,
  caBundleGate,
  applyGate,
  appliedGate,
  propagationGate,
];
