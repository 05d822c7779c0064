/** The project's small standard library: JSON values, timestamps, base64, SHA-256, flag parsing. */
export * from "./json.ts";
export * from "./time.ts";
export * from "./base64.ts";
export * from "./sha256.ts";
export * from "./flags.ts";
export * from "./build_info.ts";
