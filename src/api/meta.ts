/**
 * Kubernetes shapes every dco kind shares: the `metadata` fields the operator and convctl read
 * (everything else is kept as is) and `metav1.Condition` with its list-map.
 */
import { z } from "zod";

/** A map of strings (labels, annotations, key renames, ...). */
export const stringMap = z.record(z.string(), z.string());

/** `{name: optional string}` for each name, in the order given (the CRD keeps it). */
export function optionalStrings<const K extends string>(
  ...names: K[]
): { [N in K]: z.ZodOptional<z.ZodString> } {
  return Object.fromEntries(names.map((n) => [n, z.string().optional()])) as {
    [N in K]: z.ZodOptional<z.ZodString>;
  };
}

/**
 * The ObjectMeta fields convctl and the operator read from a config (a manifest may carry
 * `generateName` and `namespace`); everything else is kept as is.
 */
export const manifestMeta = z.looseObject({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().optional(),
  creationTimestamp: z.string().nullable().optional(),
  deletionTimestamp: z.string().nullable().optional(),
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
  finalizers: z.array(z.string()).optional(),
});

/** The ObjectMeta fields the operator reads from a cluster-scoped object it owns. */
export const objectMeta = manifestMeta.omit({ generateName: true, namespace: true });

/**
 * A standard `metav1.Condition`, with the apiserver's own limits (type ≤ 316 characters, reason
 * ≤ 1024, message ≤ 32768). The list it lives in is a list-map keyed by `type`.
 * `lastTransitionTime` is only restamped when `status` flips.
 */
export const ConditionSchema = z.object({
  type: z.string().min(1).max(316).describe("Type of the condition, e.g. Ready."),
  status: z.enum(["True", "False", "Unknown"]).describe("True, False or Unknown."),
  observedGeneration: z.int().min(0).optional().describe(
    "The metadata.generation the condition was set for.",
  ),
  lastTransitionTime: z.string().meta({ format: "date-time" }).describe(
    "When the status last changed.",
  ),
  reason: z.string().max(1024).describe(
    "Machine-readable CamelCase reason for the condition's last transition.",
  ),
  message: z.string().max(32768).describe("Human-readable details."),
});
export type Condition = z.infer<typeof ConditionSchema>;

/** `conditions[]`, a list-map keyed by `type`. */
export const conditionList = z.array(ConditionSchema).meta({
  "x-kubernetes-list-type": "map",
  "x-kubernetes-list-map-keys": ["type"],
}).describe(
  "The latest observations of the object's state; Ready is the summary (with Reconciling or " +
    "Stalled while it is False).",
);
