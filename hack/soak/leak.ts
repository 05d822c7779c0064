/**
 * The soak's leak rule: does a replica's heap *after garbage collection* keep rising while the
 * load stays the same?
 *
 * A replica's `deno_v8_heap_used_bytes` is a sawtooth: allocation raises it, every scavenge (young
 * generation, many times a second under load) and every mark-compact drops it. The peaks say how
 * much garbage was waiting; the floor is what survived a collection. So the rule looks at the floor:
 *
 * 1. Per replica, drop the samples of its first `warmupSeconds` (caches filling, plans compiling,
 *    the first conversions linking).
 * 2. Cut the rest into windows of `windowSeconds`; each window's **minimum** sample is the post-GC
 *    heap of that window (a window always spans several scavenges at the soak's request rate).
 * 3. Fit a least-squares line through the window minima; its slope (bytes per second) is the
 *    replica's steady-heap slope. A replica with fewer than `minWindows` windows is not judged (it
 *    lived too short for a slope to mean anything).
 * 4. The run leaks iff some judged replica's slope exceeds `maxSlopeBytesPerSecond`. A run with no
 *    judged replica has no verdict (`judged: 0`), which the soak reports as a failure.
 *
 * Pure: no clock, no I/O.
 */

/** One heap sample of one replica: seconds since the soak started, V8 heap in use. */
export interface HeapSample {
  t: number;
  heapUsedBytes: number;
}

/** The rule's parameters. */
export interface LeakRule {
  warmupSeconds: number;
  windowSeconds: number;
  minWindows: number;
  maxSlopeBytesPerSecond: number;
}

/**
 * The defaults: 20 s warm-up, 10 s windows, at least 4 windows, and at most 32 KiB/s of steady
 * growth (≈ 1.9 MiB per minute: a replica that grows that fast under a flat load reaches a 192 MiB
 * heap limit within two hours).
 */
export const DEFAULT_LEAK_RULE: LeakRule = {
  warmupSeconds: 20,
  windowSeconds: 10,
  minWindows: 4,
  maxSlopeBytesPerSecond: 32 * 1024,
};

/** One window's floor: the time and value of its smallest sample. */
export interface WindowMinimum {
  t: number;
  heapUsedBytes: number;
}

/** The verdict on one replica. */
export interface ReplicaLeakVerdict {
  pod: string;
  samples: number;
  windows: number;
  /** Whether the replica lived long enough to be judged (`windows ≥ minWindows`). */
  judged: boolean;
  /** Least-squares slope of the window minima, bytes per second (0 when not judged). */
  slopeBytesPerSecond: number;
  /** First and last window minimum (0 when there is none). */
  firstMinBytes: number;
  lastMinBytes: number;
  leaking: boolean;
}

/** The verdict on a run. */
export interface LeakVerdict {
  rule: LeakRule;
  replicas: ReplicaLeakVerdict[];
  /** Replicas judged. */
  judged: number;
  /** The largest judged slope (0 when none was judged). */
  maxSlopeBytesPerSecond: number;
  /** True iff at least one replica was judged and none leaks. */
  pass: boolean;
}

/** The minimum of each `windowSeconds` window after `warmupSeconds` from the first sample. */
export function windowMinima(
  samples: readonly HeapSample[],
  rule: Pick<LeakRule, "warmupSeconds" | "windowSeconds">,
): WindowMinimum[] {
  if (samples.length === 0) return [];
  const sorted = [...samples].sort((a, b) => a.t - b.t);
  const start = sorted[0].t + rule.warmupSeconds;
  const windows = new Map<number, WindowMinimum>();
  for (const s of sorted) {
    if (s.t < start) continue;
    const w = Math.floor((s.t - start) / rule.windowSeconds);
    const cur = windows.get(w);
    if (!cur || s.heapUsedBytes < cur.heapUsedBytes) {
      windows.set(w, { t: s.t, heapUsedBytes: s.heapUsedBytes });
    }
  }
  return [...windows.entries()].sort((a, b) => a[0] - b[0]).map(([, m]) => m);
}

/** The least-squares slope of `points` (y per unit of t); 0 for fewer than two distinct t. */
export function slope(points: readonly WindowMinimum[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const my = points.reduce((s, p) => s + p.heapUsedBytes, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.heapUsedBytes - my);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Applies the rule to each replica's series (pod name → samples). */
export function judgeLeak(
  series: ReadonlyMap<string, readonly HeapSample[]>,
  rule: LeakRule = DEFAULT_LEAK_RULE,
): LeakVerdict {
  const replicas: ReplicaLeakVerdict[] = [];
  for (const [pod, samples] of series) {
    const minima = windowMinima(samples, rule);
    const judged = minima.length >= rule.minWindows;
    const s = judged ? slope(minima) : 0;
    replicas.push({
      pod,
      samples: samples.length,
      windows: minima.length,
      judged,
      slopeBytesPerSecond: s,
      firstMinBytes: minima[0]?.heapUsedBytes ?? 0,
      lastMinBytes: minima.at(-1)?.heapUsedBytes ?? 0,
      leaking: judged && s > rule.maxSlopeBytesPerSecond,
    });
  }
  const judgedReplicas = replicas.filter((r) => r.judged);
  return {
    rule,
    replicas,
    judged: judgedReplicas.length,
    maxSlopeBytesPerSecond: judgedReplicas.reduce(
      (m, r) => Math.max(m, r.slopeBytesPerSecond),
      judgedReplicas.length ? -Infinity : 0,
    ),
    pass: judgedReplicas.length > 0 && judgedReplicas.every((r) => !r.leaking),
  };
}
