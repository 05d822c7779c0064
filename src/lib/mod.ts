/** The project's small standard library: JSON values, Kubernetes timestamps, base64, flag parsing. */
export * from "./json.ts";
export * from "./time.ts";
export * from "./base64.ts";
export * from "./flags.ts";
