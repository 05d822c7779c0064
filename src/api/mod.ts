/**
 * The operator's own API (`terasky.com/v1alpha1`): config kinds, rule vocabulary, strict parsing.
 */
export * from "./config.ts";
export * from "./server.ts";
