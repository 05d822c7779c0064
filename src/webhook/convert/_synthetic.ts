/**
 * A synthetic conversion target for benchmarks, the load generator's `--self` server and tests:
 * `widgets.bench.example.com`, hub `v2` and two spokes.
 *
 * - `v1`: `spec.storageGB` ↔ `spec.storageSize` (FieldRename) plus 40 identical spec fields
 *   (auto-covered); lossless both ways.
 * - `v1alpha1`: as v1, plus `spec.legacyNote` that exists only on the spoke and is dropped on
 *   the way to the hub (an acknowledged Delete), so v1alpha1→v2 is statically lossy.
 *
 * Objects look like what the apiserver sends: metadata with labels, annotations and one
 * managedFields entry, a spec and a status with one condition (~2 KB); `annotationBytes` adds
 * a kubectl last-applied-configuration style annotation (8 KB gives the ~10 KB variant).
 */
import type { JsonObject, SchemaNode } from "../../engine/mod.ts";
import { compileConfig, type ConfigObject } from "../compile.ts";
import type { CompiledTarget } from "../compiled.ts";

export const SYNTHETIC_GROUP = "bench.example.com";
export const SYNTHETIC_TARGET = `widgets.${SYNTHETIC_GROUP}`;
export const SYNTHETIC_HUB = "v2";
export const SYNTHETIC_FIELDS = 40;

const str: SchemaNode = { type: "string" };
const int: SchemaNode = { type: "integer" };

function schema(extraSpec: Record<string, SchemaNode>): SchemaNode {
  const spec: Record<string, SchemaNode> = { region: str, ...extraSpec };
  for (let k = 0; k < SYNTHETIC_FIELDS; k++) spec[`field${k}`] = k % 2 === 0 ? int : str;
  return {
    type: "object",
    properties: {
      metadata: { type: "object" },
      spec: { type: "object", properties: spec },
      status: {
        type: "object",
        properties: {
          phase: str,
          conditions: {
            type: "array",
            items: {
              type: "object",
              properties: {
                type: str,
                status: str,
                reason: str,
                message: str,
                lastTransitionTime: str,
              },
            },
          },
        },
      },
    },
  };
}

/** The CRD manifest. */
export function syntheticCRD(): JsonObject {
  const version = (name: string, storage: boolean, s: SchemaNode) => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: s },
  });
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: SYNTHETIC_TARGET, generation: 1 },
    spec: {
      group: SYNTHETIC_GROUP,
      scope: "Namespaced",
      names: { kind: "Widget", plural: "widgets", singular: "widget" },
      versions: [
        version("v1alpha1", false, schema({ storageSize: int, legacyNote: str })),
        version("v1", false, schema({ storageSize: int })),
        version(SYNTHETIC_HUB, true, schema({ storageGB: int })),
      ],
    },
  } as unknown as JsonObject;
}

/** The CRDConversionConfig (the parts compile reads). */
export function syntheticConfig(): ConfigObject {
  const rename = {
    strategy: "FieldRename",
    fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.storageSize" },
  };
  return {
    metadata: { name: "widgets-conversion", generation: 1 },
    spec: {
      targetCRD: { name: SYNTHETIC_TARGET },
      hubVersion: SYNTHETIC_HUB,
      spokes: [
        { version: "v1", rules: [rename] },
        {
          version: "v1alpha1",
          rules: [rename, {
            strategy: "Delete",
            delete: { path: "spec.legacyNote", existsOn: "Spoke" },
            acknowledgeLossy: true,
            reason: "synthetic lossy spoke",
          }],
        },
      ],
    },
  };
}

/** The compiled target (throws if the synthetic config stopped compiling). */
export function syntheticCompiled(): CompiledTarget {
  const result = compileConfig("crd", syntheticConfig(), syntheticCRD());
  if (!result.ok) throw new Error(`synthetic config does not compile: ${result.message}`);
  return result;
}

export interface SyntheticObjectOptions {
  /** Size of an extra annotation value (0 = none). */
  annotationBytes?: number;
}

/** One Widget at `version`. */
export function syntheticObject(
  i: number,
  version: string,
  opts: SyntheticObjectOptions = {},
): JsonObject {
  const spec: JsonObject = { region: "eu-west-1" };
  if (version === SYNTHETIC_HUB) spec.storageGB = 10 + i;
  else spec.storageSize = 10 + i;
  if (version === "v1alpha1") spec.legacyNote = `note ${i}`;
  for (let k = 0; k < SYNTHETIC_FIELDS; k++) {
    spec[`field${k}`] = k % 2 === 0 ? k * 1000 + i : `value-${k}-${i}-lorem-ipsum`;
  }
  const annotations: JsonObject = {
    "example.com/owner": "team-storage",
    "example.com/ticket": `OPS-${1000 + i}`,
  };
  if ((opts.annotationBytes ?? 0) > 0) {
    annotations["kubectl.kubernetes.io/last-applied-configuration"] = "x".repeat(
      opts.annotationBytes ?? 0,
    );
  }
  return {
    apiVersion: `${SYNTHETIC_GROUP}/${version}`,
    kind: "Widget",
    metadata: {
      name: `widget-${i}`,
      namespace: "default",
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      resourceVersion: String(100000 + i),
      generation: 3,
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { app: "widgets", tier: "storage", "app.kubernetes.io/name": "widget" },
      annotations,
      managedFields: [{
        manager: "kubectl-client-side-apply",
        operation: "Update",
        apiVersion: `${SYNTHETIC_GROUP}/${version}`,
        time: "2026-01-01T00:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:spec": { "f:region": {}, "f:storageSize": {} } },
      }],
    },
    spec,
    status: {
      phase: "Ready",
      conditions: [{
        type: "Ready",
        status: "True",
        reason: "Provisioned",
        message: "volume provisioned and attached",
        lastTransitionTime: "2026-01-01T00:00:00Z",
      }],
    },
  };
}

export interface SyntheticReviewOptions extends SyntheticObjectOptions {
  uid?: string;
  /** Versions of the objects, cycled (default ["v1"]). */
  from?: string[];
  /** Desired version (default the hub). */
  to?: string;
}

/** A ConversionReview request of `n` Widgets. */
export function syntheticReview(n: number, opts: SyntheticReviewOptions = {}): JsonObject {
  const from = opts.from ?? ["v1"];
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: {
      uid: opts.uid ?? "3f1e3c2a-0000-4000-8000-000000000001",
      desiredAPIVersion: `${SYNTHETIC_GROUP}/${opts.to ?? SYNTHETIC_HUB}`,
      objects: Array.from({ length: n }, (_, i) => syntheticObject(i, from[i % from.length], opts)),
    },
  };
}
