/** The project's small standard library: JSON values, Kubernetes timestamps, base64, SHA-256. */
export * from "./json.ts";
export * from "./time.ts";
export * from "./base64.ts";
export * from "./sha256.ts";
