/**
 * The soak run's result JSON (`hack/e2e_soak.ts --out`): the traffic counts, the restarts, every
 * metrics sample of the webhook-server replicas, their summary and the leak verdict. Documented in
 * docs/operations.md ("Soak").
 */
import { z } from "zod";
import { bytes, count, millis, resultHeader, seconds } from "../_result.ts";

export const SOAK_RESULT_SCHEMA_VERSION = 1;

/** Inputs that change what the run measures. */
export const SoakEnvelopeSchema = z.object({
  durationSeconds: seconds,
  restarts: count,
  /** Seconds of the same traffic after `durationSeconds`, with no restart (the leak rule's). */
  holdSeconds: seconds,
  replicas: count,
  workers: count,
  objects: count,
  sampleIntervalSeconds: seconds,
});
export type SoakEnvelope = z.infer<typeof SoakEnvelopeSchema>;

/** Request counters of the load (the self-check's and the soak's are kept apart). */
export const TrafficSchema = z.object({
  /** GETs and LISTs (at the converted version v2 and the storage version v1). */
  reads: count,
  /** Creates and merge patches at v2. */
  writes: count,
  /** Of the reads: LISTs at v2. */
  lists: count,
  failedReads: count,
  failedWrites: count,
  /** A value read or written back that is not exactly the last value written. */
  wrongValues: count,
  /** 409 answers to a write (benign: reported, not a failure). */
  conflicts: count,
  /** 429 + Retry-After answers retried, as client-go does (not failures). */
  retried429: count,
  /** Nearest-rank latency of every request, ms. */
  p50Ms: millis,
  p99Ms: millis,
  /** The first distinct failure and wrong-value messages (at most 10). */
  errorSamples: z.array(z.string()),
});
export type Traffic = z.infer<typeof TrafficSchema>;

/** One `kubectl rollout restart` of the webhook-server Deployment. */
export const RestartSchema = z.object({
  /** Seconds since the soak started, when the restart was issued. */
  at: seconds,
  /** Until `kubectl rollout status` returned. */
  rolloutSeconds: seconds,
});

/** One scrape of one Ready, non-terminating replica. */
export const SampleSchema = z.object({
  /** Seconds since the soak started (the self-check's samples are negative). */
  t: z.number(),
  pod: z.string(),
  /** The replica's own /metrics. */
  rssBytes: bytes,
  heapUsedBytes: bytes,
  heapTotalBytes: bytes,
  externalBytes: bytes,
  /** `deno_event_loop_lag_seconds`: the largest timer drift over the server's last 10 s. */
  eventLoopLagSeconds: seconds,
  /** Entries of /proc/<pid>/fd of the replica's process; null when it could not be read. */
  openFds: count.nullable(),
});
export type Sample = z.infer<typeof SampleSchema>;

const Spread = z.object({ min: z.number(), p50: z.number(), p99: z.number(), max: z.number() });
export type Spread = z.infer<typeof Spread>;

export const LeakVerdictSchema = z.object({
  rule: z.object({
    warmupSeconds: seconds,
    windowSeconds: seconds,
    dropFraction: z.number(),
    minSpanSeconds: seconds,
    maxSlopeBytesPerSecond: z.number(),
  }),
  replicas: z.array(z.object({
    pod: z.string(),
    samples: count,
    windows: count,
    fullCollections: count,
    judged: z.boolean(),
    slopeBytesPerSecond: z.number(),
    firstMinBytes: bytes,
    postGCBytes: bytes,
    leaking: z.boolean(),
  })),
  judged: count,
  maxSlopeBytesPerSecond: z.number(),
  pass: z.boolean(),
});

export const SoakResultSchema = z.object({
  ...resultHeader(SOAK_RESULT_SCHEMA_VERSION),
  envelope: SoakEnvelopeSchema,
  /** Wall-clock seconds of the soak (after the self-check). */
  elapsedSeconds: seconds,
  selfCheck: TrafficSchema,
  traffic: TrafficSchema,
  restarts: z.array(RestartSchema),
  samples: z.array(SampleSchema),
  /** Scrapes that failed (a replica going away between listing and scraping, mostly). */
  scrapeErrors: count,
  /** Over every sample of the soak (t ≥ 0). */
  summary: z.object({
    replicasSampled: count,
    samples: count,
    rssBytes: Spread,
    heapUsedBytes: Spread,
    openFds: Spread,
    eventLoopLagSeconds: Spread,
    /** The same without each replica's first 10 s sampled (its start: the lag gauge's window). */
    eventLoopLagSteadySeconds: Spread,
  }),
  leak: LeakVerdictSchema,
  /** Whether a run without a judged replica fails (`--require-leak-verdict`). */
  leakVerdictRequired: z.boolean(),
  /** Why the run failed; empty when it passed. */
  problems: z.array(z.string()),
});
export type SoakResult = z.infer<typeof SoakResultSchema>;
