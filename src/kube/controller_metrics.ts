/**
 * The reconcile metric families of every controller, with controller-runtime's names, help texts
 * and buckets (so dashboards written for Go operators work unchanged), registered once per
 * registry and shared by all controllers on it.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** controller-runtime's reconcile-time buckets (seconds). */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.15,
  0.2,
  0.25,
  0.3,
  0.35,
  0.4,
  0.45,
  0.5,
  0.6,
  0.7,
  0.8,
  0.9,
  1.0,
  1.25,
  1.5,
  1.75,
  2.0,
  2.5,
  3.0,
  3.5,
  4.0,
  4.5,
  5,
  6,
  7,
  8,
  9,
  10,
  15,
  20,
  25,
  30,
  40,
  50,
  60,
];

export const RESULTS = ["success", "error", "requeue", "requeue_after"] as const;
export type ReconcileLabel = typeof RESULTS[number];

export interface ControllerMetrics {
  total: Counter<"controller" | "result">;
  errors: Counter<"controller">;
  terminal: Counter<"controller">;
  panics: Counter<"controller">;
  time: Histogram<"controller">;
  maxConcurrent: Gauge<"controller">;
  active: Gauge<"controller">;
}

const metricsByRegistry = new WeakMap<Registry, ControllerMetrics>();

export function controllerMetrics(registry: Registry): ControllerMetrics {
  let m = metricsByRegistry.get(registry);
  if (m) return m;
  const registers = [registry];
  const labelNames = ["controller"] as const;
  m = {
    total: new Counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller",
      labelNames: ["controller", "result"] as const,
      registers,
    }),
    errors: new Counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames,
      registers,
    }),
    terminal: new Counter({
      name: "controller_runtime_terminal_reconcile_errors_total",
      help: "Total number of terminal reconciliation errors per controller",
      labelNames,
      registers,
    }),
    panics: new Counter({
      name: "controller_runtime_reconcile_panics_total",
      help: "Total number of reconciliation panics per controller",
      labelNames,
      registers,
    }),
    time: new Histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames,
      buckets: [...RECONCILE_TIME_BUCKETS],
      registers,
    }),
    maxConcurrent: new Gauge({
      name: "controller_runtime_max_concurrent_reconciles",
      help: "Maximum number of concurrent reconciles per controller",
      labelNames,
      registers,
    }),
    active: new Gauge({
      name: "controller_runtime_active_workers",
      help: "Number of currently used workers per controller",
      labelNames,
      registers,
    }),
  };
  metricsByRegistry.set(registry, m);
  return m;
}
