/**
 * The manager's admission webhooks: validation of configs and servers, the XRD conversion guard,
 * and the AdmissionReview endpoint that serves them (docs/design/server-children.md#admission).
 */
export * from "./context.ts";
export * from "./config.ts";
export * from "./server.ts";
export * from "./server_policy.ts";
export * from "./xrd_guard.ts";
export * from "./http.ts";
