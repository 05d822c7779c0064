/**
 * The storage guard (docs/design/config-reconcile.md#the-storage-guard): whether taking a target's
 * conversion back to strategy `None` is safe for the objects already stored. It is safe only when
 * no CRD of the target serves more than one version and every CRD that stores the target's objects
 * lists nothing but its storage version in `status.storedVersions`: otherwise objects stored at
 * another version would be decoded as the storage version, served wrong and pruned on their next
 * write. Every path that reverts (the delete, the `FailClosed` drift revert) asks it first.
 *
 * {@link storageVerdict} is the pure decision; {@link readStorageGuard} gathers its input live
 * (never from a cache: a cache that has not seen a storage-version change would answer "safe").
 */
import { generatedCRDNames } from "../../engine/mod.ts";
import { isJsonObject, type JsonObject } from "../../lib/json.ts";
import type { TargetKind } from "../conversion_patch.ts";
import type { ConfigReconcileDeps } from "./types.ts";

/** Why a revert is held. */
export type StorageBlockReason = "MultipleServedVersions" | "StoredVersionsPending";

/** What the guard reads off one CRD or XRD. */
export interface VersionedObject {
  /** `CRD "name"` or `XRD "name"`, for messages. */
  label: string;
  /** The object's name (a CRD's is also its resource name for kubectl). */
  name: string;
  /** `spec.versions[].name` with `served: true`, in order. */
  served: string[];
  /** The storage version (a CRD's `storage: true`, an XRD's `referenceable: true`). */
  storage: string | undefined;
  /** `status.storedVersions`; undefined when absent or not a list of strings. */
  stored: string[] | undefined;
}

/** The guard's input: the target's served versions and the CRDs that store its objects. */
export interface StorageGuardInput {
  /** The target itself (a CRD, or an XRD) and, for an XRD, its generated CRDs. */
  servedBy: VersionedObject[];
  /** The CRDs whose `status.storedVersions` count: the CRD itself, or an XRD's generated CRDs. */
  storedIn: VersionedObject[];
}

/** The verdict. `problem` and `remedy` are "" when safe. */
export interface StorageVerdict {
  safe: boolean;
  reason?: StorageBlockReason;
  /** What is still served or stored, naming the versions. */
  problem: string;
  /** What to run before the revert can go on. */
  remedy: string;
}

const list = (xs: readonly string[]) => xs.length === 0 ? "(none)" : xs.join(", ");

/** A CRD's or XRD's versions and storedVersions as the guard reads them. */
export function versionedObject(kind: "CRD" | "XRD", obj: JsonObject): VersionedObject {
  const name = isJsonObject(obj.metadata) && typeof obj.metadata.name === "string"
    ? obj.metadata.name
    : "";
  const spec = isJsonObject(obj.spec) ? obj.spec : {};
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
  const flag = kind === "CRD" ? "storage" : "referenceable";
  const named = (v: JsonObject) => typeof v.name === "string" ? v.name : "";
  const storage = versions.find((v) => v[flag] === true);
  const raw = isJsonObject(obj.status) ? obj.status.storedVersions : undefined;
  const stored = Array.isArray(raw) && raw.every((v) => typeof v === "string")
    ? raw as string[]
    : undefined;
  return {
    label: `${kind} ${JSON.stringify(name)}`,
    name,
    served: versions.filter((v) => v.served === true).map(named),
    storage: storage === undefined ? undefined : named(storage),
    stored,
  };
}

/** The steps that migrate one CRD's stored objects to its storage version: convctl, or kubectl. */
export function migrationSteps(crd: VersionedObject): string {
  const storage = crd.storage ?? "<storage version>";
  return `run convctl migrate-storage --crd ${crd.name} --prune-stored-versions, or ` +
    `rewrite every ${crd.name} object at ${storage} ` +
    `(kubectl get ${crd.name} --all-namespaces -o json | kubectl replace -f -), then ` +
    `kubectl patch crd ${crd.name} --subresource=status --type=merge -p ` +
    `'{"status":{"storedVersions":["${storage}"]}}'`;
}

/**
 * Safe only when nothing serves more than one version and every storing CRD's
 * `status.storedVersions` is exactly its storage version. Several served versions win the reason
 * (`MultipleServedVersions`); the message names every problem either way.
 */
export function storageVerdict(input: StorageGuardInput): StorageVerdict {
  const problems: string[] = [];
  const remedies: string[] = [];
  let reason: StorageBlockReason | undefined;
  for (const o of input.servedBy) {
    if (o.served.length <= 1) continue;
    reason = "MultipleServedVersions";
    problems.push(`${o.label} serves ${o.served.length} versions (${list(o.served)})`);
  }
  if (reason !== undefined) {
    remedies.push("stop serving every version but the storage version (served: false)");
  }
  for (const crd of input.storedIn) {
    const stored = crd.stored ?? [];
    const pending = stored.filter((v) => v !== crd.storage);
    if (stored.length > 0 && pending.length === 0) continue;
    reason ??= "StoredVersionsPending";
    problems.push(
      stored.length === 0
        ? `${crd.label} has an empty or unreadable status.storedVersions`
        : `${crd.label} still lists ${list(pending)} in status.storedVersions [${list(stored)}] ` +
          `(storage version ${crd.storage ?? "unknown"}): objects may still be stored at ` +
          list(pending),
    );
    remedies.push(migrationSteps(crd));
  }
  if (reason === undefined) return { safe: true, problem: "", remedy: "" };
  return {
    safe: false,
    reason,
    problem: problems.join("; "),
    remedy: remedies.join("; "),
  };
}

/**
 * Reads the guard's input live and decides. A CRD target: the CRD itself. An XRD target: the XRD
 * in hand for its served versions, and each CRD Crossplane generates from it that exists (one not
 * rendered yet stores nothing). A generated set that cannot be determined holds the revert; a
 * failed read throws (backoff retry), it is never turned into a verdict.
 */
export async function readStorageGuard(
  deps: ConfigReconcileDeps,
  targetKind: TargetKind,
  target: JsonObject,
): Promise<StorageVerdict> {
  const crdsOf = async (names: string[]) => {
    const out: VersionedObject[] = [];
    for (const n of names) {
      const crd = await deps.getCRDLive(n);
      if (crd !== undefined) out.push(versionedObject("CRD", crd));
    }
    return out;
  };
  if (targetKind === "CRD") {
    const crds = await crdsOf([versionedObject("CRD", target).name]);
    return storageVerdict({ servedBy: crds, storedIn: crds });
  }
  const xrd = versionedObject("XRD", target);
  let names: string[];
  try {
    names = generatedCRDNames(target).map((g) => g.name);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return {
      safe: false,
      reason: "StoredVersionsPending",
      problem: `the CRDs generated from ${xrd.label} cannot be determined (${why}), so their ` +
        `status.storedVersions cannot be checked`,
      remedy: `fix ${xrd.label}`,
    };
  }
  const crds = await crdsOf(names);
  return storageVerdict({ servedBy: [xrd, ...crds], storedIn: crds });
}
