/**
 * The operator's own API (`terasky.com/v1alpha1`): config kinds, rule vocabulary, strict parsing,
 * the typed status the CRDs carry, and the ConversionWebhookServer kind.
 */
export { type Condition, conditionList, ConditionSchema } from "./meta.ts";
export * from "./rules.ts";
export * from "./config.ts";
export * from "./config_status.ts";
export * from "./parse.ts";
export * from "./server.ts";
