/** The soak's figures: spreads of samples and the summary a person reads. */
import { nearestRank } from "../scale/measure.ts";
import type { SoakResult, Spread } from "./result.ts";

/** min / p50 / p99 / max (nearest rank) of `values`; zeros when empty. */
export function spread(values: readonly number[]): Spread {
  const s = [...values].sort((a, b) => a - b);
  return { min: s[0] ?? 0, p50: nearestRank(s, 50), p99: nearestRank(s, 99), max: s.at(-1) ?? 0 };
}

/** The gauge's window: a sample this long after a replica's first still shows its start's lag. */
export const LAG_WINDOW_SECONDS = 10;

/** `samples` without each replica's first {@link LAG_WINDOW_SECONDS} of samples. */
export function steadySamples<T extends { t: number; pod: string }>(samples: readonly T[]): T[] {
  const first = new Map<string, number>();
  for (const s of samples) first.set(s.pod, Math.min(first.get(s.pod) ?? Infinity, s.t));
  return samples.filter((s) => s.t - first.get(s.pod)! >= LAG_WINDOW_SECONDS);
}

const MiB = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const ms = (seconds: number) => `${(seconds * 1000).toFixed(1)} ms`;

/** The summary a person reads (and the job summary shows). */
export function renderSummary(r: SoakResult): string {
  const { traffic: t, summary: s, leak } = r;
  const lag = s.eventLoopLagSeconds;
  return [
    `soak: ${r.envelope.durationSeconds} s + ${r.envelope.holdSeconds} s hold, ` +
    `${r.restarts.length}/${r.envelope.restarts} restarts, ` +
    `${r.envelope.replicas} replicas, ${r.envelope.workers} workers`,
    `traffic: ${t.reads} reads (${t.lists} lists), ${t.writes} writes; failed ${t.failedReads} reads, ` +
    `${t.failedWrites} writes; wrong values ${t.wrongValues}; conflicts ${t.conflicts}; ` +
    `429 retried ${t.retried429}; latency p50 ${t.p50Ms.toFixed(1)} ms, p99 ${
      t.p99Ms.toFixed(1)
    } ms`,
    `rollouts: ${r.restarts.map((x) => `${x.rolloutSeconds.toFixed(1)} s`).join(", ") || "none"}`,
    `replicas sampled: ${s.replicasSampled} (${s.samples} samples, ${r.scrapeErrors} scrape errors)`,
    `RSS: p50 ${MiB(s.rssBytes.p50)}, max ${MiB(s.rssBytes.max)}; heap used: min ` +
    `${MiB(s.heapUsedBytes.min)}, p50 ${MiB(s.heapUsedBytes.p50)}, max ${MiB(s.heapUsedBytes.max)}`,
    `open fds: min ${s.openFds.min}, p50 ${s.openFds.p50}, max ${s.openFds.max}`,
    `event-loop lag: p50 ${ms(lag.p50)}, p99 ${ms(lag.p99)}, max ${ms(lag.max)}; after each ` +
    `replica's first ${LAG_WINDOW_SECONDS} s: p50 ${ms(s.eventLoopLagSteadySeconds.p50)}, ` +
    `p99 ${ms(s.eventLoopLagSteadySeconds.p99)}, max ${ms(s.eventLoopLagSteadySeconds.max)}`,
    `leak rule (post-GC heap vs the first ${leak.rule.windowSeconds} s floor after ` +
    `${leak.rule.warmupSeconds} s; ≤ ${
      (leak.rule.maxSlopeBytesPerSecond / 1024).toFixed(1)
    } KiB/s): ` +
    `${leak.judged} of ${leak.replicas.length} replicas judged, max slope ` +
    `${(leak.maxSlopeBytesPerSecond / 1024).toFixed(2)} KiB/s, ` +
    `${leak.pass ? "no leak" : leak.judged ? "LEAK" : "no verdict"}`,
    ...leak.replicas.map((x) =>
      `  ${x.pod}: ${x.windows} windows, ${x.fullCollections} full collections, ` +
      (x.judged
        ? `slope ${(x.slopeBytesPerSecond / 1024).toFixed(2)} KiB/s, ` +
          `floor ${MiB(x.firstMinBytes)} → post-GC ${MiB(x.postGCBytes)}`
        : "not judged")
    ),
    r.problems.length ? `FAILED:\n- ${r.problems.join("\n- ")}` : "ok",
  ].join("\n");
}
