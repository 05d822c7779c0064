/**
 * The scale run's result JSON: what a scale run writes (the measuring run is not built yet;
 * `hack/scalegen.ts` generates its fleet) and `hack/scale_report.ts` compares. schemaVersion 2: `throughputPerSecond` is requests divided by
 * the wall-clock time of the whole phase (version 1 used 1/p50, so the two are not comparable).
 */
import { z } from "zod";
import { bytes, count, millis, resultHeader, seconds } from "../_result.ts";

export const SCALE_RESULT_SCHEMA_VERSION = 2;

/** The four benchmark phases, in report order. */
export const MEASUREMENT_KEYS = ["listV1", "listV2", "getV1", "getV2"] as const;
export type MeasurementKey = typeof MEASUREMENT_KEYS[number];

/** Every input that changes what is measured, as strings (`reset` is not one: it changes setup). */
export const ENVELOPE_KEYS = [
  "targets",
  "instances",
  "parallel",
  "listRepeats",
  "getRepeats",
  "strategiesMin",
  "strategiesMax",
  "seed",
  "qps",
  "burst",
] as const;

export const MeasurementSchema = z.object({
  n: count,
  errors: count,
  p50Ms: millis,
  p99Ms: millis,
  maxMs: millis,
  /** Requests per second of wall-clock time over the phase (n / elapsedMs × 1000). */
  throughputPerSecond: z.number().nonnegative(),
  elapsedMs: millis,
});
export type Measurement = z.infer<typeof MeasurementSchema>;

export const EnvelopeSchema = z.object(
  Object.fromEntries(ENVELOPE_KEYS.map((k) => [k, z.string()])) as Record<
    typeof ENVELOPE_KEYS[number],
    z.ZodString
  >,
);
export type Envelope = z.infer<typeof EnvelopeSchema>;

/** Figures read from the webhook-server replicas after the run; each may be missing. */
export const ObservedSchema = z.object({
  webhookInitialSyncSeconds: seconds.optional(),
  webhookInitialSyncTargets: count.optional(),
  webhookWorkingSetBytes: bytes.optional(),
  webhookReplicas: count.optional(),
});
export type Observed = z.infer<typeof ObservedSchema>;

export const ScaleResultSchema = z.object({
  ...resultHeader(SCALE_RESULT_SCHEMA_VERSION),
  targets: count,
  instances: count,
  totalObjects: count,
  envelope: EnvelopeSchema,
  createMs: millis,
  measurements: z.object({
    listV1: MeasurementSchema,
    listV2: MeasurementSchema,
    getV1: MeasurementSchema,
    getV2: MeasurementSchema,
  }),
  /** Strategy name → number of rule slots of the fleet that use it. */
  strategyCoverage: z.record(z.string(), count),
  observed: ObservedSchema.optional(),
});
export type ScaleResult = z.infer<typeof ScaleResultSchema>;

/** A result file that is not a schemaVersion-2 scale result; `message` says why. */
export class ScaleResultError extends Error {
  override name = "ScaleResultError";
}

/**
 * Parses a result document. Another schemaVersion is refused by name (its numbers mean something
 * else), before any field is looked at; other defects list the offending paths.
 */
export function parseScaleResult(doc: unknown, source = "result"): ScaleResult {
  const version = typeof doc === "object" && doc !== null && !Array.isArray(doc)
    ? (doc as Record<string, unknown>).schemaVersion
    : undefined;
  if (version !== SCALE_RESULT_SCHEMA_VERSION) {
    throw new ScaleResultError(
      `${source}: schemaVersion ${JSON.stringify(version)} is not supported ` +
        `(this tool reads schemaVersion ${SCALE_RESULT_SCHEMA_VERSION})`,
    );
  }
  const parsed = ScaleResultSchema.safeParse(doc);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) =>
      `${i.path.join(".") || "(root)"}: ${i.message}`
    );
    throw new ScaleResultError(`${source}: not a scale result: ${problems.join("; ")}`);
  }
  return parsed.data;
}
