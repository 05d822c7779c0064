/**
 * Schema sources: turn a CRD or a Crossplane XRD manifest into the engine's `SchemaSource`
 * , including the XRD scope rules and Crossplane's injected paths.
 */
import type {
  InjectedPathSet,
  JsonObject,
  JsonValue,
  SchemaNode,
  SchemaSource,
  VersionSchema,
} from "./types.ts";

function obj(v: JsonValue | undefined): JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};
}

function str(v: JsonValue | undefined): string {
  return typeof v === "string" ? v : "";
}

function versionsOf(spec: JsonObject, storageField: "storage" | "referenceable"): VersionSchema[] {
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  return versions.map((raw) => {
    const v = obj(raw);
    const schema = obj(v.schema).openAPIV3Schema;
    return {
      name: str(v.name),
      served: v.served === true,
      storage: v[storageField] === true,
      schema: schema === undefined || schema === null ? undefined : (schema as SchemaNode),
    };
  });
}

/** A CRD (`apiextensions.k8s.io/v1`) manifest. */
export function schemaSourceFromCRD(crd: JsonObject): SchemaSource {
  return { kind: "CRD", ...commonSource(crd, "storage") };
}

/** What a CRD and an XRD manifest say alike; `hubFlag` is the version field marking storage. */
function commonSource(manifest: JsonObject, hubFlag: "storage" | "referenceable") {
  const spec = obj(manifest.spec);
  return {
    name: str(obj(manifest.metadata).name),
    group: str(spec.group),
    targetKind: str(obj(spec.names).kind),
    versions: versionsOf(spec, hubFlag),
  };
}

export type XRDScope = "Namespaced" | "Cluster" | "LegacyCluster" | "Indeterminate";

export interface ScopeResolution {
  scope: XRDScope;
  /** How the scope was found: explicit spec.scope, inferred from legacy fields or apiVersion. */
  confidence: "explicit" | "inferred";
  reason: string;
}

/** `ResolveScope`: the only reader of `spec.scope`. */
export function resolveXRDScope(xrd: JsonObject): ScopeResolution {
  const spec = obj(xrd.spec);
  if (spec.claimNames !== undefined || spec.connectionSecretKeys !== undefined) {
    return {
      scope: "LegacyCluster",
      confidence: "inferred",
      reason:
        "spec.claimNames or spec.connectionSecretKeys only exist on legacy cluster-scoped XRDs",
    };
  }
  const scope = spec.scope;
  if (scope === "Namespaced" || scope === "Cluster" || scope === "LegacyCluster") {
    return { scope, confidence: "explicit", reason: `spec.scope is ${scope}` };
  }
  if (scope !== undefined) {
    return {
      scope: "Indeterminate",
      confidence: "inferred",
      reason: `unrecognised spec.scope ${JSON.stringify(scope)}`,
    };
  }
  const apiVersion = str(xrd.apiVersion);
  if (apiVersion === "apiextensions.crossplane.io/v1") {
    return { scope: "LegacyCluster", confidence: "inferred", reason: "no spec.scope on a v1 XRD" };
  }
  if (apiVersion === "apiextensions.crossplane.io/v2") {
    return {
      scope: "Namespaced",
      confidence: "inferred",
      reason: "no spec.scope on a v2 XRD (default Namespaced)",
    };
  }
  return {
    scope: "Indeterminate",
    confidence: "inferred",
    reason: `no spec.scope and unrecognised apiVersion ${JSON.stringify(apiVersion)}`,
  };
}

const MODERN_ROOTS = ["spec.crossplane", "status.conditions"];
const LEGACY_ROOTS = [
  "spec.compositionRef",
  "spec.compositionSelector",
  "spec.compositionRevisionRef",
  "spec.compositionRevisionSelector",
  "spec.compositionUpdatePolicy",
  "spec.resourceRefs",
  "spec.claimRef",
  "spec.writeConnectionSecretToRef",
  "status.conditions",
  "status.connectionDetails",
  "status.claimConditionTypes",
];
const CLAIM_ROOTS = ["spec.compositeDeletePolicy", "spec.resourceRef"];

/** Crossplane's injected path set for an XRD. */
export function injectedPathsForXRD(xrd: JsonObject): InjectedPathSet {
  const { scope, reason } = resolveXRDScope(xrd);
  const offersClaims = obj(xrd.spec).claimNames !== undefined;
  let roots: string[];
  switch (scope) {
    case "Namespaced":
    case "Cluster":
      roots = MODERN_ROOTS;
      break;
    case "LegacyCluster":
      roots = offersClaims ? [...LEGACY_ROOTS, ...CLAIM_ROOTS] : LEGACY_ROOTS;
      break;
    default:
      roots = [...new Set([...MODERN_ROOTS, ...LEGACY_ROOTS, ...CLAIM_ROOTS])];
  }
  return {
    platform: "Crossplane",
    roots: [...roots].sort(),
    uncertain: scope === "Indeterminate",
    reason,
  };
}

/** A Crossplane CompositeResourceDefinition manifest. */
export function schemaSourceFromXRD(xrd: JsonObject): SchemaSource {
  return {
    kind: "XRD",
    ...commonSource(xrd, "referenceable"),
    injected: injectedPathsForXRD(xrd),
  };
}

export interface GeneratedCRD {
  name: string;
  role: "composite" | "claim";
  namespaced: boolean;
}

/** `GeneratedCRDNames`: the CRDs Crossplane renders from an XRD, composite first. */
export function generatedCRDNames(xrd: JsonObject): GeneratedCRD[] {
  const spec = obj(xrd.spec);
  const group = str(spec.group);
  const names = obj(spec.names);
  if (group === "") throw new Error("XRD has no spec.group");
  if (str(names.plural) === "") throw new Error("XRD has no spec.names.plural");
  if (str(names.kind) === "") throw new Error("XRD has no spec.names.kind");
  const out: GeneratedCRD[] = [{
    name: `${str(names.plural)}.${group}`,
    role: "composite",
    namespaced: resolveXRDScope(xrd).scope === "Namespaced",
  }];
  const claim = obj(spec.claimNames);
  if (str(claim.plural) !== "") {
    if (str(claim.kind) === "") {
      throw new Error("XRD has spec.claimNames.plural but no spec.claimNames.kind");
    }
    out.push({ name: `${str(claim.plural)}.${group}`, role: "claim", namespaced: true });
  }
  return out;
}
