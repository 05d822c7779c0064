/**
 * The target's conversion patch lives in src/api/conversion_patch.ts, so convctl's
 * `patch-preview` renders the very object the manager applies; the manager imports it from here.
 */
export * from "../api/conversion_patch.ts";
