/**
 * The two config kinds, `XRDConversionConfig` and `CRDConversionConfig` (`terasky.com/v1alpha1`):
 * their zod schemas and types. A config names its target (an XRD or a CRD), the hub version, and
 * per spoke version the rules (./rules.ts) that convert between hub and spoke.
 *
 * The schemas decode strictly: an unknown key anywhere in the typed shape is an error, including
 * inside nested `forEach.rules`. Decoding with messages that name the offending path is
 * ./parse.ts.
 *
 * They are also the source for the CRDs' OpenAPI schemas (`z.toJSONSchema(schema, {io: "input",
 * target: "openapi-3.0"})`, see ./crds.ts), hence: no unions of objects, no recursion, free-form
 * JSON marked `x-kubernetes-preserve-unknown-fields`, and CRD-only defaults/limits expressed as
 * `.meta()` (emitted into the JSON schema but not applied by the offline decode, as in the
 * reference).
 */
import { z } from "zod";
import type { ConversionConfigSpec } from "../engine/mod.ts";
import { manifestMeta, optionalStrings } from "./meta.ts";
import { ConversionRuleSchema, jsonMap } from "./rules.ts";

export const CONFIG_GROUP = "terasky.com";
export const CONFIG_VERSION = "v1alpha1";
export const CONFIG_API_VERSION = `${CONFIG_GROUP}/${CONFIG_VERSION}`;
export const XRD_CONFIG_KIND = "XRDConversionConfig";
export const CRD_CONFIG_KIND = "CRDConversionConfig";
export const CONFIG_KINDS = [XRD_CONFIG_KIND, CRD_CONFIG_KIND] as const;
export type ConfigKind = typeof CONFIG_KINDS[number];

const spoke = z.strictObject({
  version: z.string().describe(
    "Name of the spoke version (a version of the target other than the hub).",
  ),
  // null is what `rules:` with no value decodes to; the engine treats it as an empty list.
  rules: z.array(ConversionRuleSchema).nullable().default([]).describe(
    "Rules converting between this spoke and the hub, applied in order. Fields no rule names " +
      "are copied when both versions declare them; null or empty means identical schemas.",
  ),
});

/** The ConversionReview versions the apiserver knows (and dco answers). */
export const CONVERSION_REVIEW_VERSIONS = ["v1", "v1beta1"] as const;

/** The rule on `spec.conversionReviewVersions`, as both the decode and the CRD say it. */
export const REVIEW_VERSIONS_RULE =
  'must contain "v1" (an empty list means ["v1"]); the ConversionReview versions are "v1" and ' +
  '"v1beta1"';

/**
 * `spec.conversionReviewVersions`: a set of the known versions that contains `v1` (empty ⇒ the
 * default `["v1"]`, as the manager applies it). Offline the refine checks it; the CRD says the same
 * as a CEL rule on a list of at most two.
 */
function conversionReviewVersions() {
  return z.array(z.enum(CONVERSION_REVIEW_VERSIONS))
    .refine((l) => new Set(l).size === l.length, { message: "must not list a version twice" })
    .refine((l) => l.length === 0 || l.includes("v1"), { message: REVIEW_VERSIONS_RULE })
    .meta({
      maxItems: CONVERSION_REVIEW_VERSIONS.length,
      "x-kubernetes-list-type": "set",
      "x-kubernetes-validations": [{
        rule: "size(self) == 0 || 'v1' in self",
        message: REVIEW_VERSIONS_RULE,
      }],
    })
    .default(["v1"])
    .describe(
      "ConversionReview versions written into the target's conversion webhook stanza, most " +
        'preferred first; must contain "v1".',
    );
}

const commonSpec = {
  hubVersion: z.string().describe(
    "The version every spoke converts through: the target's storage version (CRD) or its " +
      "referenceable version (XRD).",
  ),
  // minItems is the structural stage's check offline ("spokes non-empty"); the CRD enforces it.
  spokes: z.array(spoke).meta({ minItems: 1 }).describe(
    "One entry per version other than the hub, each version at most once.",
  ),
  webhookServerRef: z.strictObject({
    name: z.string().describe("Name of the ConversionWebhookServer."),
  }).optional().describe(
    "Pins this config to one ConversionWebhookServer. Unset: the shard pool, else the default " +
      "server, serves it.",
  ),
  conversionReviewVersions: conversionReviewVersions(),
  unmappedFieldPolicy: z.enum(["Error", "Warn"]).default("Error").describe(
    "A field no rule covers and the other version does not declare: Error fails validation; " +
      "Warn accepts the config and drops the field when converting (needs unmappedFieldReason).",
  ),
  unmappedFieldReason: z.string().optional().describe(
    "Why dropping unmapped fields is acceptable; required (non-blank) with " +
      "unmappedFieldPolicy Warn.",
  ),
  driftPolicy: z.enum(["KeepServingStale", "FailClosed"]).default("KeepServingStale").describe(
    "When the target's schema changes so that an applied config no longer validates: " +
      "KeepServingStale keeps the last applied conversion serving (phase Stale); FailClosed " +
      "reverts the target's conversion to None (held while objects are stored at another " +
      "version).",
  ),
};

function targetRef(kind: "XRD" | "CRD") {
  const what = kind === "XRD" ? "CompositeResourceDefinition" : "CustomResourceDefinition";
  const example = kind === "XRD" ? "xpostgres.demo.example.com" : "widgets.example.com";
  return z.strictObject({
    name: z.string().describe(`Name of the ${what}, e.g. ${example}.`),
  }).describe(`The ${what} whose versions this config converts.`);
}

const SPEC_DESCRIPTION = "The desired conversion: the target, its hub version and the rules " +
  "per spoke version.";

export const XRDConversionConfigSpecSchema = z.strictObject({
  targetXRD: targetRef("XRD"),
  ...commonSpec,
}).describe(SPEC_DESCRIPTION);
export const CRDConversionConfigSpecSchema = z.strictObject({
  targetCRD: targetRef("CRD"),
  ...commonSpec,
}).describe(SPEC_DESCRIPTION);

const condition = z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  observedGeneration: z.number().optional(),
});

/**
 * Written by the controller, never by users: typed loosely so that an older or newer operator's
 * status never makes a config unreadable (the CRD's typed status is ./config_status.ts).
 */
const configStatus = z.looseObject({
  observedGeneration: z.number().optional(),
  observedXRDGeneration: z.number().optional(),
  observedCRDGeneration: z.number().optional(),
  schemaHash: z.string().optional(),
  phase: z.string().optional(),
  conditions: z.array(condition).optional(),
  ...optionalStrings("assignedWebhookServer", "webhookPath", "webhookURL"),
  webhookPort: z.number().optional(),
  generatedCRDs: z.array(jsonMap).optional(),
  overallLossless: z.boolean().optional(),
  spokeStatuses: z.array(jsonMap).optional(),
  lastAppliedPlanHash: z.string().optional(),
  message: z.string().optional(),
});

/** The top-level fields of a `terasky.com/v1alpha1` object of `kind` (server.ts uses it too). */
export function kindShape<
  const K extends string,
  Meta extends z.ZodType,
  Spec extends z.ZodType,
  Status extends z.ZodType,
>(kind: K, metadata: Meta, spec: Spec, status: Status) {
  return {
    apiVersion: z.literal(CONFIG_API_VERSION),
    kind: z.literal(kind),
    metadata: metadata.optional(),
    spec,
    status: status.optional(),
  };
}

export const XRDConversionConfigSchema = z.strictObject(
  kindShape(XRD_CONFIG_KIND, manifestMeta, XRDConversionConfigSpecSchema, configStatus),
);

export const CRDConversionConfigSchema = z.strictObject(
  kindShape(CRD_CONFIG_KIND, manifestMeta, CRDConversionConfigSpecSchema, configStatus),
);

export type XRDConversionConfigSpec = z.infer<typeof XRDConversionConfigSpecSchema>;
export type CRDConversionConfigSpec = z.infer<typeof CRDConversionConfigSpecSchema>;
export type SpokeConfig = z.infer<typeof spoke>;
export type XRDConversionConfig = z.infer<typeof XRDConversionConfigSchema>;
export type CRDConversionConfig = z.infer<typeof CRDConversionConfigSchema>;
export type ConversionConfig = XRDConversionConfig | CRDConversionConfig;
export type ConversionConfigStatus = z.infer<typeof configStatus>;

/**
 * The engine reads the parsed spec directly. This function is also the compile-time proof that a
 * parsed spec is assignable to the engine's `ConversionConfigSpec`.
 */
export function engineSpecOf(config: ConversionConfig): ConversionConfigSpec {
  return config.spec;
}

/** `spec.targetXRD.name` or `spec.targetCRD.name`. */
export function targetNameOf(config: ConversionConfig): string {
  return config.kind === XRD_CONFIG_KIND ? config.spec.targetXRD.name : config.spec.targetCRD.name;
}
