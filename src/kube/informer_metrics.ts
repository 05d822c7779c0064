/**
 * The informer families (docs/observability.md#informer-metrics), registered once per registry
 * and shared by every informer on it, and the per-informer recorder ./informer.ts feeds:
 *
 * - `dco_informer_watch_errors_total{resource, reason}` — every failed LIST or WATCH, before and
 *   after the first sync (a 403 after an RBAC change must not reach only the logs). `reason` is
 *   the Kubernetes Status reason of an API answer (`Forbidden`, `Expired`, `TooManyRequests`,
 *   `InternalError`, …), `NetworkError` for a transport failure or a dropped/empty stream, else
 *   `Unknown`.
 * - `dco_informer_last_sync_timestamp_seconds{resource}` — when the cache was last known current:
 *   a completed LIST, a delivered watch event or bookmark, or a watch that ran to its server
 *   timeout. Set to the creation time first, so a cache that never syncs ages as well.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { type Clock, realClock } from "./clock.ts";
import { KubeApiError, KubeNetworkError } from "./errors.ts";

interface InformerFamilies {
  errors: Counter<"resource" | "reason">;
  lastSync: Gauge<"resource">;
}

const familiesByRegistry = new WeakMap<Registry, InformerFamilies>();

function families(registry: Registry): InformerFamilies {
  let f = familiesByRegistry.get(registry);
  if (f) return f;
  const registers = [registry];
  f = {
    errors: new Counter({
      name: "dco_informer_watch_errors_total",
      help: "Failed LIST and WATCH requests of an informer (before and after its first sync).",
      labelNames: ["resource", "reason"] as const,
      registers,
    }),
    lastSync: new Gauge({
      name: "dco_informer_last_sync_timestamp_seconds",
      help: "Unix time an informer's cache was last known current " +
        "(a completed LIST, a watch event or bookmark, a watch ended by its server timeout).",
      labelNames: ["resource"] as const,
      registers,
    }),
  };
  familiesByRegistry.set(registry, f);
  return f;
}

/** The `reason` label of a failure. */
export function watchErrorReason(e: unknown): string {
  if (e instanceof KubeApiError) return e.reason;
  if (e instanceof KubeNetworkError) return "NetworkError";
  return "Unknown";
}

/** What an informer reports to its metrics. */
export interface InformerRecorder {
  /** A failed LIST or WATCH. */
  failed(e: unknown): void;
  /** The cache is known current now. */
  progressed(): void;
}

const NOOP: InformerRecorder = { failed() {}, progressed() {} };

/**
 * The recorder of informer `resource` on `registry` (a no-op without one). Sets the timestamp to
 * now at once.
 */
export function informerRecorder(
  resource: string,
  registry: Registry | undefined,
  clock: Clock = realClock,
): InformerRecorder {
  if (!registry) return NOOP;
  const f = families(registry);
  const gauge = f.lastSync.labels({ resource });
  const rec: InformerRecorder = {
    failed: (e) => f.errors.inc({ resource, reason: watchErrorReason(e) }),
    progressed: () => gauge.set(clock.now() / 1000),
  };
  rec.progressed();
  return rec;
}
