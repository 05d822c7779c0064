/**
 * The rules a `/convert` answer must keep, checked from the outside: what the apiserver's webhook
 * client (KEP-598, `apiextensions.k8s.io/v1` ConversionReview) accepts, plus dco's own promises
 * (docs/design/webhook.md#the-convert-answer-table). Used by hack/fuzz_convert.ts on every answer.
 *
 * - The status is 200, 400 (a body that is not a review with a request uid) or 429 with a
 *   `Retry-After` header; a well-formed review with a string uid always gets a 200 review.
 * - A 200 answer is a ConversionReview of the request's API version (v1 for anything else),
 *   carrying the request's uid when the request had one, with a result of Success or Failure.
 * - Success: as many converted objects as were sent, in order, each at the desired `apiVersion`,
 *   with the same `kind`, and `metadata` unchanged except for labels and annotations, which stay
 *   maps of strings. An input whose `metadata` (or labels, annotations) has the wrong type is
 *   never a Success: it would have been repaired silently.
 * - Failure: a non-empty message and no converted objects.
 */
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from "../src/lib/json.ts";

const REVIEW_VERSIONS = ["apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"];
const decoder = new TextDecoder();

/** What the checker needs of an answer. */
export interface Answer {
  status: number;
  head: string;
  body: Uint8Array;
}

function parse(bytes: Uint8Array): JsonValue | undefined {
  try {
    return JSON.parse(decoder.decode(bytes)) as JsonValue;
  } catch {
    return undefined;
  }
}

function isStringMap(v: JsonValue | undefined): boolean {
  if (v === undefined || v === null) return true;
  return isJsonObject(v) && Object.values(v).every((x) => typeof x === "string");
}

/** `metadata` without labels and annotations. */
function identity(metadata: JsonObject): JsonObject {
  const { labels: _l, annotations: _a, ...rest } = metadata;
  return rest;
}

/** The rules `answer` breaks for the request `sent` (empty when it keeps them all). */
export function kep598Violations(sent: Uint8Array, answer: Answer): string[] {
  const out: string[] = [];
  const request = parse(sent);
  const review = isJsonObject(request) ? request : undefined;
  const req = review !== undefined && isJsonObject(review.request) ? review.request : undefined;
  const uid = typeof req?.uid === "string" ? req.uid : undefined;
  const wellFormed = review !== undefined && review.kind === "ConversionReview" &&
    review.apiVersion === "apiextensions.k8s.io/v1" && uid !== undefined;

  if (answer.status === 429) {
    if (!/\r\nretry-after:\s*\d+/i.test(answer.head)) out.push("429 without Retry-After");
    return out;
  }
  if (answer.status !== 200 && answer.status !== 400) {
    return [`HTTP ${answer.status} (only 200, 400 and 429 are answers)`];
  }
  if (answer.status === 400) {
    if (wellFormed) out.push("HTTP 400 for a well-formed v1 ConversionReview with a uid");
    return out;
  }
  const got = parse(answer.body);
  if (!isJsonObject(got)) return ["200 whose body is not a JSON object"];
  const expectedVersion = typeof review?.apiVersion === "string" &&
      REVIEW_VERSIONS.includes(review.apiVersion)
    ? review.apiVersion
    : REVIEW_VERSIONS[0];
  if (got.apiVersion !== expectedVersion) {
    out.push(`answer apiVersion ${JSON.stringify(got.apiVersion)}, want ${expectedVersion}`);
  }
  if (got.kind !== "ConversionReview") out.push(`answer kind ${JSON.stringify(got.kind)}`);
  const response = got.response;
  if (!isJsonObject(response)) return [...out, "answer has no response object"];
  if (typeof response.uid !== "string") out.push("response.uid is not a string");
  else if (uid !== undefined && response.uid !== uid) {
    out.push(`response.uid ${JSON.stringify(response.uid)} ≠ request uid ${JSON.stringify(uid)}`);
  }
  const result = isJsonObject(response.result) ? response.result : undefined;
  const status = result?.status;
  const converted = response.convertedObjects;
  if (status === "Failure") {
    if (typeof result?.message !== "string" || result.message === "") {
      out.push("Failure without a message");
    }
    if (Array.isArray(converted) && converted.length > 0) {
      out.push("Failure with converted objects");
    }
    return out;
  }
  if (status !== "Success") return [...out, `result.status ${JSON.stringify(status)}`];
  // A null or missing list is an empty one, as the apiserver's own decoding reads it.
  const objects = req?.objects === undefined || req?.objects === null ? [] : req.objects;
  if (!Array.isArray(objects)) return [...out, "Success for a request whose objects is no list"];
  if (objects.length === 0 && (converted === undefined || converted === null)) return out;
  if (!Array.isArray(converted) || converted.length !== objects.length) {
    return [
      ...out,
      `Success with ${
        Array.isArray(converted) ? converted.length : "no"
      } objects for ${objects.length} sent`,
    ];
  }
  objects.forEach((input, i) => {
    const o = converted[i];
    if (!isJsonObject(input) || !isJsonObject(o)) {
      out.push(`object ${i}: Success for a non-object`);
      return;
    }
    if (o.apiVersion !== req?.desiredAPIVersion) {
      out.push(`object ${i}: apiVersion not the desired one`);
    }
    if (o.kind !== input.kind) out.push(`object ${i}: kind changed`);
    const inMeta = input.metadata;
    if (inMeta !== undefined && !isJsonObject(inMeta)) {
      out.push(`object ${i}: Success although its metadata is not an object (repaired silently)`);
      return;
    }
    if (inMeta !== undefined && (!isStringMap(inMeta.labels) || !isStringMap(inMeta.annotations))) {
      out.push(`object ${i}: Success although its labels or annotations are not string maps`);
    }
    const outMeta = o.metadata;
    if (!isJsonObject(outMeta)) {
      out.push(`object ${i}: converted metadata is not an object`);
      return;
    }
    if (!isStringMap(outMeta.labels) || !isStringMap(outMeta.annotations)) {
      out.push(`object ${i}: converted labels or annotations are not string maps`);
    }
    if (!jsonEqual(identity(outMeta), identity(inMeta ?? {}))) {
      out.push(`object ${i}: metadata changed beyond labels and annotations`);
    }
  });
  return out;
}
