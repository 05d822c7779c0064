/**
 * The soak's leak rule: is a replica's heap *after a full garbage collection* higher, at the end
 * of its life, than when its steady phase began?
 *
 * A replica's `deno_v8_heap_used_bytes` is a double sawtooth. Scavenges (young generation, many a
 * second under load) make a fine one; each window's minimum sample sits just after one. But the
 * floor that leaves still climbs for a minute or two, because garbage promoted to the old
 * generation stays until the next mark-compact, which then drops the floor at once (measured on
 * the soak: 26 → 36 MiB over ~90 s, back to 25 MiB in one window). A slope fitted through every
 * window minimum therefore calls any replica younger than one full-collection cycle a leak. So the
 * rule compares the heap right after a full collection with the start of the steady phase:
 *
 * 1. Per replica, drop the samples of its first `warmupSeconds` (caches filling, plans compiling,
 *    the first conversions linking).
 * 2. Cut the rest into windows of `windowSeconds`; each window's **minimum** is its post-scavenge
 *    floor.
 * 3. A window whose floor is more than `dropFraction` below the previous window's is a **full
 *    collection** (no scavenge drops the floor itself). The floor of the last such window is the
 *    replica's **post-GC heap**.
 * 4. The replica's slope is (post-GC heap − first window's floor) / (time between them), in bytes
 *    per second. A replica is judged only when it went through a full collection at least
 *    `minSpanSeconds` after its first window (a shorter span makes the slope noise).
 * 5. The run leaks iff some judged replica's slope exceeds `maxSlopeBytesPerSecond`. A run with no
 *    judged replica has no verdict (`judged: 0`, `pass: false`).
 *
 * A leak of L bytes per second raises the post-GC heap by L per second (what survives a full
 * collection is what is still referenced), so the slope estimates L; without one it is about 0 or
 * negative (the first floor still holds some promoted garbage). Pure: no clock, no I/O.
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
  /** How far one window's floor must fall below the previous one's to count as a full collection. */
  dropFraction: number;
  minSpanSeconds: number;
  maxSlopeBytesPerSecond: number;
}

/**
 * The defaults: 20 s warm-up, 10 s windows, a 15 % drop, judged over at least 60 s, and at most
 * 16 KiB/s of growth of the post-GC heap (≈ 1 MiB a minute). The slope is biased low: the first
 * floor still holds the garbage promoted so far, which the full collection frees (recorded flat
 * runs: −10 to −36 KiB/s), so a leak is certain to be caught from about 52 KiB/s in the nightly
 * shape; a longer hold narrows that.
 */
export const DEFAULT_LEAK_RULE: LeakRule = {
  warmupSeconds: 20,
  windowSeconds: 10,
  dropFraction: 0.15,
  minSpanSeconds: 60,
  maxSlopeBytesPerSecond: 16 * 1024,
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
  /** Windows whose floor fell by more than `dropFraction` (full collections). */
  fullCollections: number;
  /** Whether the replica had a full collection `minSpanSeconds` or more after its first window. */
  judged: boolean;
  /** (post-GC heap − first floor) / span, bytes per second (0 when not judged). */
  slopeBytesPerSecond: number;
  /** The first window's floor, and the floor after the last full collection (0 when none). */
  firstMinBytes: number;
  postGCBytes: number;
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

/** The indices of the windows whose floor fell by more than `dropFraction` from the previous. */
export function fullCollections(minima: readonly WindowMinimum[], dropFraction: number): number[] {
  const out: number[] = [];
  for (let i = 1; i < minima.length; i++) {
    if (minima[i].heapUsedBytes < minima[i - 1].heapUsedBytes * (1 - dropFraction)) out.push(i);
  }
  return out;
}

/** The verdict on one replica's samples. */
export function judgeReplica(
  pod: string,
  samples: readonly HeapSample[],
  rule: LeakRule,
): ReplicaLeakVerdict {
  const minima = windowMinima(samples, rule);
  const drops = fullCollections(minima, rule.dropFraction);
  const first = minima[0];
  const last = drops.length ? minima[drops[drops.length - 1]] : undefined;
  const span = first && last ? last.t - first.t : 0;
  const judged = last !== undefined && span >= rule.minSpanSeconds;
  const slope = judged ? (last.heapUsedBytes - first.heapUsedBytes) / span : 0;
  return {
    pod,
    samples: samples.length,
    windows: minima.length,
    fullCollections: drops.length,
    judged,
    slopeBytesPerSecond: slope,
    firstMinBytes: first?.heapUsedBytes ?? 0,
    postGCBytes: last?.heapUsedBytes ?? 0,
    leaking: judged && slope > rule.maxSlopeBytesPerSecond,
  };
}

/** Applies the rule to each replica's series (pod name → samples). */
export function judgeLeak(
  series: ReadonlyMap<string, readonly HeapSample[]>,
  rule: LeakRule = DEFAULT_LEAK_RULE,
): LeakVerdict {
  const replicas = [...series].map(([pod, samples]) => judgeReplica(pod, samples, rule));
  const judged = replicas.filter((r) => r.judged);
  return {
    rule,
    replicas,
    judged: judged.length,
    maxSlopeBytesPerSecond: judged.length
      ? Math.max(...judged.map((r) => r.slopeBytesPerSecond))
      : 0,
    pass: judged.length > 0 && judged.every((r) => !r.leaking),
  };
}
