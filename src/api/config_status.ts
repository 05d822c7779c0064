/**
 * The typed status of the config kinds as their CRDs declare it (hence what the apiserver
 * validates and prunes status writes against). Decoding stays loose (./config.ts); these are the
 * schemas the generated CRDs carry, and the vocabularies the controller writes: phases, condition
 * types, handover reasons.
 */
import { z } from "zod";
import { conditionList, optionalStrings } from "./meta.ts";

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

/** Condition types written on the config kinds. */
export const CONFIG_CONDITION_TYPES = [
  "Validated",
  "XRDHealthy",
  "CRDHealthy",
  "WebhookServerReady",
  "Applied",
  "Stale",
  "DeletionBlocked",
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

const losslessPair = z.object({ hubToSpoke: z.boolean(), spokeToHub: z.boolean() });
const stringList = z.array(z.string());

const ruleResult = z.object({
  index: z.int32(),
  strategy: z.string(),
  hubPaths: stringList.optional(),
  spokePaths: stringList.optional(),
  lossless: losslessPair.optional(),
  errors: stringList.optional(),
  warnings: stringList.optional(),
});

/** Per spoke: always the last analysis attempt, even a failed one. */
export const SpokeStatusSchema = z.object({
  version: z.string(),
  lossless: losslessPair.optional(),
  fieldsUncoveredHub: stringList.optional(),
  fieldsUncoveredSpoke: stringList.optional(),
  ruleResults: z.array(ruleResult).optional(),
  errors: stringList.optional(),
  warnings: stringList.optional(),
});

/** One CRD Crossplane renders from the target XRD (XRD kind only). */
export const GeneratedCRDStatusSchema = z.object({
  name: z.string(),
  role: z.enum(["composite", "claim"]).optional(),
  propagated: z.boolean().optional(),
  observedCABundleHash: z.string().optional(),
  observedAt: z.string().meta({ format: "date-time" }).optional(),
  message: z.string().optional(),
});

const commonStatus = {
  observedGeneration: z.int().optional(),
  schemaHash: z.string().optional(),
  phase: z.enum(CONFIG_PHASES).optional(),
  conditions: conditionList.optional(),
  ...optionalStrings("assignedWebhookServer", "webhookPath", "webhookURL"),
  overallLossless: z.boolean().optional(),
  spokeStatuses: z.array(SpokeStatusSchema).optional(),
  lastAppliedPlanHash: z.string().optional(),
  message: z.string().optional(),
};

/** `status` of an XRDConversionConfig as the CRD declares it. */
export const XRDConversionConfigStatusSchema = z.object({
  ...commonStatus,
  observedXRDGeneration: z.int().optional(),
  webhookPort: z.int32().optional(),
  generatedCRDs: z.array(GeneratedCRDStatusSchema).meta({
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["name"],
  }).optional(),
});

/** `status` of a CRDConversionConfig as the CRD declares it. */
export const CRDConversionConfigStatusSchema = z.object({
  ...commonStatus,
  observedCRDGeneration: z.int().optional(),
});

export type XRDConversionConfigStatus = z.infer<typeof XRDConversionConfigStatusSchema>;
export type CRDConversionConfigStatus = z.infer<typeof CRDConversionConfigStatusSchema>;
