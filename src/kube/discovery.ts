/**
 * API discovery of one group-version: which resources the apiserver serves under
 * `/apis/<group>/<version>`. A group-version that is not served at all answers 404, which is an
 * answer ("not served"), not a failure; every other failure (an unreachable apiserver, 403, 5xx)
 * is retried a few times and then thrown as it is, so a caller never mistakes an outage for an
 * absent API.
 */
import type { KubeClient } from "./client.ts";
import { isNotFound } from "./errors.ts";

/** One entry of a group-version's discovery document (the fields dco reads). */
export interface DiscoveredResource {
  name: string;
  kind?: string;
}

/** Options of {@link discoverGroupVersion}. */
export interface DiscoveryOptions {
  signal?: AbortSignal;
  /** Attempts before a non-404 failure is thrown; default 5. */
  attempts?: number;
  /** Pause between attempts, milliseconds; default 2 s. */
  retryMs?: number;
}

const DEFAULT_ATTEMPTS = 5;
const DEFAULT_RETRY_MS = 2_000;

/**
 * The resources served under `groupVersion` (`<group>/<version>`), or undefined when the
 * apiserver does not serve that group-version (404).
 */
export async function discoverGroupVersion(
  client: KubeClient,
  groupVersion: string,
  opts: DiscoveryOptions = {},
): Promise<DiscoveredResource[] | undefined> {
  const { signal } = opts;
  const attempts = opts.attempts ?? DEFAULT_ATTEMPTS;
  let last: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, opts.retryMs ?? DEFAULT_RETRY_MS));
    if (signal?.aborted) throw signal.reason;
    try {
      const list = await client.call<{ resources?: Array<{ name?: unknown; kind?: unknown }> }>(
        "GET",
        `/apis/${groupVersion}`,
        signal === undefined ? {} : { signal },
      );
      return (list?.resources ?? []).flatMap((r) =>
        typeof r.name === "string"
          ? [{ name: r.name, ...(typeof r.kind === "string" ? { kind: r.kind } : {}) }]
          : []
      );
    } catch (e) {
      if (isNotFound(e)) return undefined;
      last = e;
    }
  }
  throw last;
}
