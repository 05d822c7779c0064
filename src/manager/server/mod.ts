/**
 * A ConversionWebhookServer and its children (docs/design/server-children.md): names and labels,
 * the Kubernetes objects it owns and their pure builders, readiness, and the reconcile with its
 * delete guard, status pieces, watch predicates and cluster adapter.
 */
export * from "./names.ts";
export * from "./settings.ts";
export * from "./types.ts";
export * from "./container_args.ts";
export * from "./container_env.ts";
export * from "./certificate.ts";
export * from "./service.ts";
export * from "./deployment.ts";
export * from "./hpa.ts";
export * from "./pdb.ts";
export * from "./children.ts";
export * from "./prune.ts";
export * from "./readiness.ts";
export * from "./status.ts";
export * from "./watch.ts";
export * from "./delete_guard.ts";
export * from "./reconcile.ts";
export * from "./reconcile_deps.ts";
