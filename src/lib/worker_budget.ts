/**
 * How many Workers a webhook server runs of each kind by default (listener Workers, conversion
 * pool, compile pool): one per CPU it may use, but at most one per {@link HEAP_MIB_PER_WORKER} of
 * its V8 heap ceiling, and at least one. Every Worker is a V8 isolate of its own — about 25 MiB
 * idle, and a busy one grows its old generation up to V8's first limit before it collects — so a
 * pod without a CPU limit on a large node must not start one per core. The manager derives the
 * garbage collector's sizing from the same count (src/manager/server/container_env.ts).
 */

/** Heap ceiling (MiB, `--max-old-space-size`) per Worker of one kind. */
export const HEAP_MIB_PER_WORKER = 96;

/**
 * The default number of Workers for `cpus` CPUs (undefined: not known, e.g. no CPU limit seen by
 * the manager) and a heap ceiling of `heapMiB` (undefined: none set).
 */
export function defaultWorkers(cpus: number | undefined, heapMiB: number | undefined): number {
  const byHeap = heapMiB === undefined
    ? Number.POSITIVE_INFINITY
    : Math.floor(heapMiB / HEAP_MIB_PER_WORKER);
  const byCpus = cpus === undefined ? Number.POSITIVE_INFINITY : Math.ceil(cpus);
  const n = Math.min(byHeap, byCpus);
  return Number.isFinite(n) ? Math.max(1, n) : 1;
}
