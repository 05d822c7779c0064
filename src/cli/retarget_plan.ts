/**
 * What `retarget` plans for each object, offline or live: the report's shape, the canary prefix,
 * the one merge patch per object (Composition pins nulled, the selector set to exactly
 * `{<label-key>: <to>}`), where an object keeps its Composition fields by scope and role, and the
 * checks on `--to` and the XRD's scope.
 */
import { jsonEqual, type JsonObject, type JsonValue, resolveXRDScope } from "../engine/mod.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError } from "./args.ts";
import type { InventoryObject } from "./inventory.ts";
import type { LoadedSchema } from "./load.ts";
import { declaredVersions } from "./schema_versions.ts";

export type RetargetAction = "patch" | "already-on-target";

export interface RetargetObject {
  namespace?: string;
  name: string;
  kind: string;
  crdRole: "composite" | "claim";
  action: RetargetAction;
  /** The merge patch (absent when already on target). */
  patch?: JsonObject;
  /** Live only: whether the apiserver took the patch (absent when nothing was sent). */
  result?: "patched" | "failed";
  /** Live only: the apiserver's refusal of a failed patch. */
  error?: string;
}

export interface RetargetReport {
  xrd: string;
  to: string;
  scope: string;
  labelKey: string;
  fieldManager: string;
  dryRun: boolean;
  /** Live only: the cluster the patches went to. */
  cluster?: string;
  /** Objects found, and how many the canary selected. */
  total: number;
  selected: number;
  objects: RetargetObject[];
}

/** `N` or `N%`: how many of `total` objects, as a prefix of the list order. */
export function canaryCount(value: string | undefined, total: number): number {
  if (value === undefined) return total;
  const m = /^(\d+)(%?)$/.exec(value);
  if (m === null) {
    throw new CliError(`invalid value ${JSON.stringify(value)} for --canary: must be N or N%`);
  }
  const n = Number(m[1]);
  if (m[2] === "") return Math.min(n, total);
  if (n > 100) {
    throw new CliError(`invalid value ${JSON.stringify(value)} for --canary: above 100%`);
  }
  if (n === 0 || total === 0) return 0;
  // A non-zero share of a non-empty set selects at least one object.
  return Math.max(1, Math.floor((total * n) / 100));
}

const metadataOf = (o: JsonObject) => isJsonObject(o.metadata) ? o.metadata : {};

/**
 * Where an object keeps its Composition fields: `spec.crossplane` (`underCrossplane`: a
 * Namespaced or Cluster composite) or `spec` (a LegacyCluster composite, any claim).
 */
function machineryOf(object: JsonObject, underCrossplane: boolean): JsonObject {
  const spec = isJsonObject(object.spec) ? object.spec : {};
  return underCrossplane ? (isJsonObject(spec.crossplane) ? spec.crossplane : {}) : spec;
}

/** Whether an object's Composition fields sit under `spec.crossplane` (see {@link machineryOf}). */
export function underCrossplaneOf(role: "composite" | "claim", scope: string): boolean {
  return role === "composite" && scope !== "LegacyCluster";
}

/** The name of the Composition an object pins (`compositionRef.name`), if any. */
export function pinOf(object: JsonObject, underCrossplane: boolean): string | undefined {
  const ref = machineryOf(object, underCrossplane).compositionRef;
  return isJsonObject(ref) && typeof ref.name === "string" ? ref.name : undefined;
}

/** The patch for one object, or undefined when it already selects `to` with no pin. */
export function retargetPatch(
  object: JsonObject,
  underCrossplane: boolean,
  labelKey: string,
  to: string,
): JsonObject | undefined {
  const machinery = machineryOf(object, underCrossplane);
  const selector = isJsonObject(machinery.compositionSelector) ? machinery.compositionSelector : {};
  const labels = isJsonObject(selector.matchLabels) ? selector.matchLabels : {};
  const wanted: JsonObject = { [labelKey]: to };
  const pinned = machinery.compositionRef !== undefined ||
    machinery.compositionRevisionRef !== undefined;
  if (!pinned && jsonEqual(labels, wanted)) return undefined;
  // A merge patch merges maps: other selector labels must be removed explicitly.
  const matchLabels: Record<string, JsonValue> = {};
  for (const key of Object.keys(labels)) if (key !== labelKey) matchLabels[key] = null;
  matchLabels[labelKey] = to;
  const fields: JsonObject = {
    compositionRef: null,
    compositionRevisionRef: null,
    compositionSelector: { matchLabels },
  };
  return { spec: underCrossplane ? { crossplane: fields } : fields };
}

/** Composites first, then claims; each by namespace and name (a stable, re-runnable order). */
export const order = (a: Pick<InventoryObject, "crd" | "object">, b: typeof a) => {
  const key = (o: typeof a) =>
    [
      o.crd.role === "composite" ? "0" : "1",
      metadataOf(o.object).namespace ?? "",
      metadataOf(o.object).name ?? "",
    ]
      .join("\u0000");
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
};

/** One object's line of the report, its patch planned (nothing sent yet). */
export function plannedObject(
  { crd, object }: Pick<InventoryObject, "crd" | "object">,
  scope: string,
  labelKey: string,
  to: string,
): RetargetObject {
  const metadata = metadataOf(object);
  const patch = retargetPatch(object, underCrossplaneOf(crd.role, scope), labelKey, to);
  const out: RetargetObject = {
    ...(typeof metadata.namespace === "string" ? { namespace: metadata.namespace } : {}),
    name: String(metadata.name ?? ""),
    kind: String(object.kind),
    crdRole: crd.role,
    action: patch === undefined ? "already-on-target" : "patch",
  };
  if (patch !== undefined) out.patch = patch;
  return out;
}

/** `--to` must be a version of the XRD, and the XRD's scope must say where the fields are. */
export function checkRetarget(schema: LoadedSchema, to: string): string {
  const versions = declaredVersions(schema).map((v) => v.name);
  if (!versions.includes(to)) {
    throw new CliError(
      `--to ${to}: not a version of XRD ${schema.source.name} (versions: ${versions.join(", ")})`,
    );
  }
  const { scope, reason } = resolveXRDScope(schema.raw);
  if (scope === "Indeterminate") {
    throw new CliError(
      `cannot tell where XRD ${schema.source.name} keeps its Composition fields: ${reason}`,
    );
  }
  return scope;
}
