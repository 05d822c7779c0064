/**
 * `dco_watch_map_list_errors_total{map_func}`
 * (docs/observability.md#manager-metrics-plain-port-8080-metrics): a watch-map function
 * (./enqueue.ts) that failed to read the caches it maps through, so an event woke none of the keys
 * it should have (they wait for their backstop requeue). Registered once per registry; each named
 * map function's series is created at 0 when it is wired.
 */
import { Counter, type Registry } from "prom-client";

const counterByRegistry = new WeakMap<Registry, Counter<"map_func">>();

/** The counter of `registry` (registered on first use). */
export function watchMapErrors(registry: Registry): Counter<"map_func"> {
  let c = counterByRegistry.get(registry);
  if (c) return c;
  c = new Counter({
    name: "dco_watch_map_list_errors_total",
    help: "Watch-map functions that failed to list the caches they map an event through.",
    labelNames: ["map_func"] as const,
    registers: [registry],
  });
  counterByRegistry.set(registry, c);
  return c;
}
