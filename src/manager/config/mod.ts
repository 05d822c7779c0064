/**
 * A config's reconcile (docs/design/config-reconcile.md): the driver, its ordered gates, the
 * status vocabulary, the pure helpers tests and other controllers use, and the real adapter.
 */
export * from "./types.ts";
export { reconcileConfig } from "./reconcile.ts";
export { CONFIG_GATES } from "./gates.ts";
export type { Gate } from "./gate.ts";
export { schemaHash, sha256Hex } from "./hashes.ts";
export { isMove, isServerReady, serverNamespace } from "./gates/server.ts";
export { spokeStatusesOf } from "./gates/validation.ts";
export { isOurConversion, packageRevisionOwner } from "./xrd_ownership.ts";
export {
  type AppliedConversion,
  type GeneratedCRDVerdict,
  type PropagationReason,
  verifyGeneratedCRD,
} from "./xrd_propagation.ts";
export {
  migrationSteps,
  readStorageGuard,
  type StorageBlockReason,
  type StorageGuardInput,
  type StorageVerdict,
  storageVerdict,
  type VersionedObject,
  versionedObject,
} from "./storage_guard.ts";
export { configReconcileDeps, readCABundle } from "./adapter.ts";
