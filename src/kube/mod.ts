/**
 * The small controller framework (in place of Go's controller-runtime): connection + REST client,
 * informer cache, rate-limited delaying workqueue, reconciler runner with controller-runtime's
 * metric families, wake-cause accounting, status / condition / server-side-apply helpers, and
 * Lease leader election (docs/design/kube.md). Stages compose like kube-rs's: client → informer
 * (watcher + store) → queue → controller. No conversion knowledge lives here; this folder imports
 * only `obs` and `lib`.
 */
export * from "./clock.ts";
export * from "./objects.ts";
export * from "./errors.ts";
export * from "./config.ts";
export * from "./client.ts";
export * from "./watch.ts";
export * from "./store.ts";
export * from "./backoff.ts";
export * from "./informer_status.ts";
export * from "./informer.ts";
export * from "./informer_metrics.ts";
export * from "./workqueue.ts";
export * from "./wake.ts";
export { RECONCILE_TIME_BUCKETS } from "./controller_metrics.ts";
export * from "./controller.ts";
export * from "./enqueue.ts";
export * from "./watch_map_metrics.ts";
export * from "./status.ts";
export * from "./leader.ts";
export * from "./delegated_auth.ts";
export * from "./discovery.ts";
