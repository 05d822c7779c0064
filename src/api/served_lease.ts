/**
 * The served-target Lease wire format (docs/design/kube.md#served-target-lease-report-format), shared by the webhook-server (publisher)
 * and the manager (aggregator), so both read one definition of names, labels, annotations,
 * sizes and timing bounds.
 *
 * Each webhook-server replica owns one `coordination.k8s.io/v1` Lease named
 * `dco-served-<pod name>` in its namespace. The set of targets it can serve is carried in the
 * annotation `conversion.terasky.com/served-targets` as: sort → dedupe → join with `\n` → gzip →
 * standard base64 (the empty set is the empty string). Both directions are bounded:
 *
 * - encoding checks the joined (decoded) text against {@link MAX_DECODED_BYTES} and the base64
 *   text against {@link MAX_ENCODED_BYTES}; either overflow throws {@link ServedTargetsTooLarge}
 *   (the publisher then writes the `…-truncated: "true"` annotation instead — never a partial
 *   list);
 * - decoding refuses base64 text over {@link MAX_ENCODED_BYTES} and decompressed output over
 *   {@link MAX_DECODED_BYTES} (the gunzip reads at most one byte past the cap, and reaching it is
 *   an error), as well as bad base64, bad gzip, invalid UTF-8 and empty names: the result is
 *   "unreadable", never a prefix that would read as a complete report.
 *
 * Pure apart from `node:zlib` (synchronous gzip); no Kubernetes client here, so both binaries can
 * import it (docs/architecture.md layering).
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { base64ToBytes, bytesToBase64 } from "../lib/base64.ts";

/** Prefix of the per-pod Lease name (keeps them apart from leader-election Leases). */
export const SERVED_LEASE_PREFIX = "dco-served-";
/** Annotation carrying the encoded target set. */
export const SERVED_TARGETS_ANNOTATION = "conversion.terasky.com/served-targets";
/** Annotation set (to `"true"`) instead of the targets annotation when the set is too large. */
export const SERVED_TARGETS_TRUNCATED_ANNOTATION =
  "conversion.terasky.com/served-targets-truncated";
/**
 * Annotation carrying the serial number (lower-case hex, no leading zeros) of the certificate the
 * replica's conversion listener serves now; absent before it serves one. The manager's CA
 * rotation reads it to know every replica moved to a re-issued pair.
 */
export const SERVING_SERIAL_ANNOTATION = "conversion.terasky.com/serving-certificate-serial";

/** A certificate serial as the Lease carries it: lower-case hex without separators or leading 0s. */
export function normalizeSerial(serial: string): string {
  return serial.replace(/[^0-9a-fA-F]/g, "").toLowerCase().replace(/^0+(?=.)/, "");
}

/** Label naming the ConversionWebhookServer instance (what the manager selects on). */
export const WEBHOOK_SERVER_LABEL = "conversion.terasky.com/webhook-server";
/** Label scoping the manager's Lease cache (it caches only Leases dco wrote). */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
/** Value of {@link MANAGED_BY_LABEL}. */
export const MANAGED_BY_VALUE = "declarative-conversion-operator";

/** Largest base64 text of the targets annotation: 192 KiB (annotations may total 256 KiB). */
export const MAX_ENCODED_BYTES = 192 * 1024;
/** Largest decompressed payload: 8 × {@link MAX_ENCODED_BYTES} = 1.5 MiB. */
export const MAX_DECODED_BYTES = 8 * MAX_ENCODED_BYTES;

/** Publisher heartbeat: `renewTime` is rewritten at least this often. */
export const HEARTBEAT_MS = 30_000;
/** `spec.leaseDurationSeconds` of the Lease (3 × heartbeat). */
export const LEASE_DURATION_SECONDS = 90;
/** A report is live while `now − renewTime ≤` this (3 × heartbeat = 90 s). */
export const STALE_AFTER_MS = 3 * HEARTBEAT_MS;
/** A report whose `renewTime` is further ahead of `now` than this is not live (5 min). */
export const MAX_FUTURE_SKEW_MS = 5 * 60_000;

/** Size bounds of the codec (tests shrink them; production uses the defaults). */
export interface ServedTargetLimits {
  /** Bound on the base64 text; default {@link MAX_ENCODED_BYTES}. */
  readonly maxEncodedBytes?: number;
  /** Bound on the joined/decompressed text; default {@link MAX_DECODED_BYTES}. */
  readonly maxDecodedBytes?: number;
}

/** The encoded set exceeds a bound; never written partially. */
export class ServedTargetsTooLarge extends Error {
  override readonly name = "ServedTargetsTooLarge";
}

/** Name of the Lease of pod `podName`. */
export function servedLeaseName(podName: string): string {
  return SERVED_LEASE_PREFIX + podName;
}

/** The labels of a replica's Lease for instance `serverName`. */
export function servedLeaseLabels(serverName: string): Record<string, string> {
  return { [WEBHOOK_SERVER_LABEL]: serverName, [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
}

/** Label selector listing the Leases of instance `serverName`. */
export function servedLeaseSelector(serverName: string): string {
  return `${WEBHOOK_SERVER_LABEL}=${serverName}`;
}

/** Sorted (by UTF-16 code units, like Go's byte order for ASCII names), deduplicated copy. */
export function normalizeTargets(targets: Iterable<string>): string[] {
  return [...new Set(targets)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

const utf8 = new TextEncoder();

/**
 * Encodes a target set for the annotation. Throws {@link ServedTargetsTooLarge} when the joined
 * text or the base64 text exceeds its bound, and a plain Error for a name that is empty or
 * contains a newline (it could not round-trip).
 */
export function encodeServedTargets(
  targets: Iterable<string>,
  limits: ServedTargetLimits = {},
): string {
  const maxEncoded = limits.maxEncodedBytes ?? MAX_ENCODED_BYTES;
  const maxDecoded = limits.maxDecodedBytes ?? MAX_DECODED_BYTES;
  const sorted = normalizeTargets(targets);
  if (sorted.length === 0) return "";
  for (const t of sorted) {
    if (t === "" || t.includes("\n")) {
      throw new Error(`invalid served target name ${JSON.stringify(t)}`);
    }
  }
  const text = utf8.encode(sorted.join("\n"));
  if (text.length > maxDecoded) {
    throw new ServedTargetsTooLarge(
      `served-target list is ${text.length} bytes, more than the ${maxDecoded}-byte limit`,
    );
  }
  const encoded = bytesToBase64(gzipSync(text));
  if (encoded.length > maxEncoded) {
    throw new ServedTargetsTooLarge(
      `encoded served-target list is ${encoded.length} bytes, more than the ${maxEncoded}-byte limit`,
    );
  }
  return encoded;
}

/** Result of decoding a report: the sorted set, or why it cannot be read. */
export type DecodedServedTargets =
  | { readonly ok: true; readonly targets: string[] }
  | { readonly ok: false; readonly reason: string };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decodes an annotation value; every failure (including any overflow) is `ok: false`. */
export function decodeServedTargets(
  encoded: string,
  limits: ServedTargetLimits = {},
): DecodedServedTargets {
  const maxEncoded = limits.maxEncodedBytes ?? MAX_ENCODED_BYTES;
  const maxDecoded = limits.maxDecodedBytes ?? MAX_DECODED_BYTES;
  if (encoded === "") return { ok: true, targets: [] };
  if (encoded.length > maxEncoded) {
    return { ok: false, reason: `encoded report exceeds ${maxEncoded} bytes` };
  }
  if (!BASE64.test(encoded)) return { ok: false, reason: "report is not standard base64" };
  let raw: Uint8Array;
  try {
    // maxOutputLength makes gunzip stop one byte past the cap and throw: never a prefix.
    raw = gunzipSync(base64ToBytes(encoded), { maxOutputLength: maxDecoded });
  } catch (e) {
    if (e instanceof RangeError) {
      return { ok: false, reason: `decoded report exceeds ${maxDecoded} bytes` };
    }
    return { ok: false, reason: `report is not gzip: ${(e as Error).message}` };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    return { ok: false, reason: "report is not UTF-8" };
  }
  if (text === "") return { ok: true, targets: [] };
  const names = text.split("\n");
  if (names.some((n) => n === "")) return { ok: false, reason: "report contains an empty name" };
  return { ok: true, targets: normalizeTargets(names) };
}

/** The parts of a Lease the codec reads (structural: the api layer has no Kubernetes client). */
export interface ServedLeaseLike {
  readonly metadata?: {
    readonly name?: string;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec?: { readonly renewTime?: string | null };
}

/**
 * The report carried by a Lease: truncated (the publisher's set was too large) and undecodable
 * payloads are both `ok: false`. A Lease without the targets annotation reports the empty set.
 */
export function readServedReport(
  lease: ServedLeaseLike,
  limits: ServedTargetLimits = {},
): DecodedServedTargets {
  const annotations = lease.metadata?.annotations ?? {};
  if (annotations[SERVED_TARGETS_TRUNCATED_ANNOTATION] === "true") {
    return { ok: false, reason: "report truncated by the publisher" };
  }
  return decodeServedTargets(annotations[SERVED_TARGETS_ANNOTATION] ?? "", limits);
}

/**
 * The annotations to write for `targets`: the encoded set (truncated annotation removed) or, on
 * overflow, only the truncated marker. `undefined` values mean "remove this key".
 */
export function servedAnnotations(
  targets: Iterable<string>,
  limits: ServedTargetLimits = {},
): { annotations: Record<string, string | undefined>; truncated: boolean } {
  try {
    return {
      annotations: {
        [SERVED_TARGETS_ANNOTATION]: encodeServedTargets(targets, limits),
        [SERVED_TARGETS_TRUNCATED_ANNOTATION]: undefined,
      },
      truncated: false,
    };
  } catch (e) {
    if (!(e instanceof ServedTargetsTooLarge)) throw e;
    return {
      annotations: {
        [SERVED_TARGETS_ANNOTATION]: undefined,
        [SERVED_TARGETS_TRUNCATED_ANNOTATION]: "true",
      },
      truncated: true,
    };
  }
}
