/**
 * The typed status of the config kinds as their CRDs declare it (hence what the apiserver
 * validates and prunes status writes against). Decoding stays loose (./config.ts); these are the
 * schemas the generated CRDs carry, and the vocabularies the controller writes: phases, condition
 * types, handover reasons.
 */
import { z } from "zod";
import { conditionList } from "./meta.ts";

/** The values of a config's `status.phase`. */
export const CONFIG_PHASES = [
  "Pending",
  "Validating",
  "Validated",
  "Invalid",
  "Applied",
  "Stale",
  "Reverting",
  "Failed",
] as const;

/** Condition types written on the config kinds (Ready, Reconciling, Stalled: the summary). */
export const CONFIG_CONDITION_TYPES = [
  "Ready",
  "Reconciling",
  "Stalled",
  "Validated",
  "XRDHealthy",
  "CRDHealthy",
  "WebhookServerReady",
  "Applied",
  "Stale",
  "DeletionBlocked",
  "RevertBlocked",
  "HandoverReady",
  "ConversionPropagated",
  "PackageManaged",
] as const;

/** The reasons of the `HandoverReady` condition; the first two are successes. */
export const HANDOVER_REASONS = [
  "HandoverReady",
  "HandoverUnverified",
  "HandoverPending",
  "HandoverAwaitingReports",
  "HandoverUnknown",
] as const;

const losslessPair = z.object({
  hubToSpoke: z.boolean().describe("Whether hub → spoke keeps all information."),
  spokeToHub: z.boolean().describe("Whether spoke → hub keeps all information."),
});
const strings = (description: string) => z.array(z.string()).describe(description);

const ruleResult = z.object({
  index: z.int32().describe("Position of the rule in the spoke's rules."),
  strategy: z.string().describe("The rule's strategy."),
  hubPaths: strings("Hub fields the rule covers.").optional(),
  spokePaths: strings("Spoke fields the rule covers.").optional(),
  lossless: losslessPair.optional().describe("The rule's lossless verdict per direction."),
  errors: strings("What makes the rule invalid.").optional(),
  warnings: strings("What to review about the rule.").optional(),
});

/** Per spoke: always the last analysis attempt, even a failed one. */
export const SpokeStatusSchema = z.object({
  version: z.string().describe("The spoke version."),
  lossless: losslessPair.optional().describe("The spoke's lossless verdict per direction."),
  fieldsUncoveredHub: strings("Hub fields no rule covers and the spoke does not declare.")
    .optional(),
  fieldsUncoveredSpoke: strings("Spoke fields no rule covers and the hub does not declare.")
    .optional(),
  ruleResults: z.array(ruleResult).optional().describe("The analysis of each rule."),
  errors: strings("Validation errors of this spoke.").optional(),
  warnings: strings("Validation warnings of this spoke.").optional(),
});

/** One CRD Crossplane renders from the target XRD (XRD kind only). */
export const GeneratedCRDStatusSchema = z.object({
  name: z.string().describe("Name of the CRD Crossplane generated from the XRD."),
  role: z.enum(["composite", "claim"]).optional().describe("composite or claim."),
  propagated: z.boolean().optional().describe(
    "Whether the CRD carries the conversion webhook this config applied.",
  ),
  observedCABundleHash: z.string().optional().describe(
    "Hash of the CA bundle found in the CRD's conversion stanza.",
  ),
  observedAt: z.string().meta({ format: "date-time" }).optional().describe(
    "When the CRD was last checked.",
  ),
  message: z.string().optional().describe("Details of the propagation state."),
});

const STATUS_DESCRIPTION = "The observed state, written by the operator.";

const commonStatus = {
  observedGeneration: z.int().optional().describe(
    "The metadata.generation of the config the status describes.",
  ),
  schemaHash: z.string().optional().describe("Hash of the target schema last validated against."),
  phase: z.enum(CONFIG_PHASES).optional().describe(
    "Summary of the lifecycle: Pending (waiting on a gate), Applied, Stale (the last applied " +
      "conversion keeps serving an outdated config), Invalid, Failed (reverted or revert " +
      "failing).",
  ),
  conditions: conditionList.optional(),
  assignedWebhookServer: z.string().optional().describe(
    "The ConversionWebhookServer assigned to this config.",
  ),
  webhookPath: z.string().optional().describe("Path of this config's conversion endpoint."),
  webhookURL: z.string().optional().describe(
    "URL the apiserver calls to convert the target's objects.",
  ),
  overallLossless: z.boolean().optional().describe(
    "True when every direction of every spoke is lossless.",
  ),
  spokeStatuses: z.array(SpokeStatusSchema).optional().describe(
    "Per spoke, the result of the last analysis (even a failed one).",
  ),
  lastAppliedPlanHash: z.string().optional().describe(
    "schemaHash of the conversion last applied to the target.",
  ),
  message: z.string().optional().describe("Human-readable summary of the phase."),
};

/** `status` of an XRDConversionConfig as the CRD declares it. */
export const XRDConversionConfigStatusSchema = z.object({
  ...commonStatus,
  observedXRDGeneration: z.int().optional().describe(
    "The XRD's metadata.generation last validated against.",
  ),
  webhookPort: z.int32().optional().describe("Service port of the conversion endpoint."),
  generatedCRDs: z.array(GeneratedCRDStatusSchema).meta({
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["name"],
  }).optional().describe(
    "The CRDs Crossplane generated from the XRD, and whether the conversion reached them.",
  ),
}).describe(STATUS_DESCRIPTION);

/** `status` of a CRDConversionConfig as the CRD declares it. */
export const CRDConversionConfigStatusSchema = z.object({
  ...commonStatus,
  observedCRDGeneration: z.int().optional().describe(
    "The CRD's metadata.generation last validated against.",
  ),
}).describe(STATUS_DESCRIPTION);

export type XRDConversionConfigStatus = z.infer<typeof XRDConversionConfigStatusSchema>;
export type CRDConversionConfigStatus = z.infer<typeof CRDConversionConfigStatusSchema>;
