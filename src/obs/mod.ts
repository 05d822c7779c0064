/**
 * Observability basics shared by every long-running role: a JSON-lines logger configured from
 * controller-runtime's zap flags, and a prom-client registry with Deno-safe process/runtime
 * collectors plus the `/metrics` response.
 */
export * from "./log.ts";
export * from "./metrics.ts";
export * from "./build_info.ts";
export * from "./rest_client_metrics.ts";
