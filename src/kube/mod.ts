/**
 * The small controller framework (replacing controller-runtime; runtime.md §1 "[Deno] framework
 * obligations"): connection + REST client, informer cache, rate-limited delaying workqueue,
 * reconciler runner with controller-runtime's metric families, wake-cause accounting, status /
 * condition / server-side-apply helpers, and Lease leader election.
 * Stages compose like kube-rs's: client → informer (watcher + store) → queue → controller.
 * No conversion knowledge lives here; this folder imports only `obs`.
 */
export * from "./clock.ts";
export * from "./client.ts";
export * from "./informer.ts";
export * from "./workqueue.ts";
export * from "./wake.ts";
export * from "./controller.ts";
export * from "./status.ts";
export * from "./leader.ts";
