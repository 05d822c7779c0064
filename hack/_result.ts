/**
 * The pieces the result JSONs of hack/ (the soak's, hack/soak/result.ts; the scale run's,
 * hack/scale/result.ts) are made of: the number kinds they record, and the header every result
 * starts with.
 */
import { z } from "zod";

/** A whole number of things: requests, replicas, samples. */
export const count = z.number().int().nonnegative();
/** A duration in seconds. */
export const seconds = z.number().nonnegative();
/** A duration in milliseconds. */
export const millis = z.number().nonnegative();
/** A size in bytes. */
export const bytes = z.number().nonnegative();

/** The fields a result starts with: its schema version (a literal), and when it was recorded. */
export function resultHeader<V extends number>(schemaVersion: V) {
  return {
    schemaVersion: z.literal(schemaVersion),
    recordedAt: z.iso.datetime({ offset: true }),
  };
}
