/**
 * A target whose conversion is deliberately slow: `spec.items[*]` converted by a `ForEach` whose
 * rule is a `CEL` expression that runs a comprehension of {@link SLOW_INNER}² steps per element
 * (within the CEL cost bound), so a review's conversion time grows with the element count.
 */
import type { JsonObject } from "../../../src/engine/mod.ts";
import { compileConfig, type ConfigObject } from "../../../src/webhook/compile.ts";
import type { CompiledTarget } from "../../../src/webhook/compiled.ts";

export const SLOW_GROUP = "slow.example.com";
export const SLOW_TARGET = `gadgets.${SLOW_GROUP}`;
/** Side of the per-element comprehension. */
export const SLOW_INNER = 300;

const items = {
  type: "array",
  items: { type: "object", properties: { n: { type: "integer" } } },
};

/** The CRD manifest (v1 and v2, `spec.items[*].n`). */
export function slowCRD(): JsonObject {
  const version = (name: string, storage: boolean) => ({
    name,
    served: true,
    storage,
    schema: {
      openAPIV3Schema: {
        type: "object",
        properties: {
          metadata: { type: "object" },
          spec: { type: "object", properties: { items } },
        },
      },
    },
  });
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: SLOW_TARGET, generation: 1 },
    spec: {
      group: SLOW_GROUP,
      scope: "Namespaced",
      names: { kind: "Gadget", plural: "gadgets", singular: "gadget" },
      versions: [version("v1", false), version("v2", true)],
    },
  } as unknown as JsonObject;
}

/** The CRDConversionConfig (the parts compile reads). */
export function slowConfig(): ConfigObject {
  const range = `[${Array.from({ length: SLOW_INNER }, (_, i) => i).join(",")}]`;
  // Adds 0 (the count of pairs with a > b+SLOW_INNER is 0) after SLOW_INNER² steps.
  const busy = `size(${range}.filter(a, ${range}.exists(b, a > b + ${SLOW_INNER})))`;
  return {
    metadata: { name: "gadgets-conversion", generation: 1 },
    spec: {
      targetCRD: { name: SLOW_TARGET },
      hubVersion: "v2",
      spokes: [{
        version: "v1",
        rules: [{
          strategy: "ForEach",
          forEach: {
            hubItemsPath: "spec.items",
            spokeItemsPath: "spec.items",
            rules: [{
              strategy: "CEL",
              cel: {
                hubPaths: ["n"],
                spokePaths: ["n"],
                hubToSpoke: `{"n": int(object.n) + ${busy}}`,
                spokeToHub: `{"n": int(object.n) + ${busy}}`,
              },
              acknowledgeLossy: true,
              reason: "deliberately slow",
            }],
          },
          acknowledgeLossy: true,
          reason: "deliberately slow",
        }],
      }],
    },
  } as unknown as ConfigObject;
}

export function slowCompiled(): CompiledTarget {
  const r = compileConfig("crd", slowConfig(), slowCRD());
  if (!r.ok) throw new Error(`slow target does not compile: ${r.message}`);
  return r;
}

/** A review of one Gadget at v1 with `elements` items, to v2. */
export function slowReview(uid: string, elements: number): JsonObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: {
      uid,
      desiredAPIVersion: `${SLOW_GROUP}/v2`,
      objects: [{
        apiVersion: `${SLOW_GROUP}/v1`,
        kind: "Gadget",
        metadata: { name: "g", namespace: "default" },
        spec: { items: Array.from({ length: elements }, (_, i) => ({ n: i })) },
      }],
    },
  };
}
