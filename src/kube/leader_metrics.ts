/**
 * client-go's leader-election gauge, as controller-runtime exposes it:
 * `leader_election_master_status{name}` is 1 while this process holds the Lease `name`, else 0.
 * Registered once per registry and shared by every elector on it.
 */
import { Gauge, type Registry } from "prom-client";

const byRegistry = new WeakMap<Registry, Gauge<"name">>();

/** The gauge of `registry` (registered on first use). */
export function leaderStatusGauge(registry: Registry): Gauge<"name"> {
  let g = byRegistry.get(registry);
  if (g === undefined) {
    g = new Gauge({
      name: "leader_election_master_status",
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates " +
        "backup, 1 indicates master. 'name' is the string used to identify the lease. Please " +
        "make sure to group by name.",
      labelNames: ["name"] as const,
      registers: [registry],
    });
    byRegistry.set(registry, g);
  }
  return g;
}
