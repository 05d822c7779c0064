/**
 * How the apiserver's answers fail: {@link KubeApiError} (an HTTP error answer or a watch ERROR
 * event, with `status`, `reason` and the apiserver's message) and {@link KubeNetworkError} (no
 * answer at all), the predicates callers branch on, and {@link getOrUndefined} for the common
 * "absent is not an error" read.
 */
import type { Status, StatusDetails } from "./objects.ts";

const REASONS: Readonly<Record<number, string>> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** An error answer of the apiserver (HTTP status ≥ 300, or a watch ERROR event). */
export class KubeApiError extends Error {
  override name = "KubeApiError";
  /** HTTP status code (for a watch ERROR event: the Status `code`). */
  readonly status: number;
  /** The Status `reason` (`NotFound`, `Forbidden`, `Expired`, …), derived from the code if absent. */
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  /** Request that failed, for logs: `GET /api/v1/...`. */
  readonly request: string | undefined;

  constructor(
    status: number,
    reason: string | undefined,
    message: string,
    opts: { details?: StatusDetails; request?: string } = {},
  ) {
    super(message || `${status} ${reason ?? ""}`.trim());
    this.status = status;
    this.reason = reason || REASONS[status] || "Unknown";
    this.details = opts.details;
    this.request = opts.request;
  }

  /** From a `Status` object (body of an error response or of a watch ERROR event). */
  static fromStatus(s: Status, httpStatus?: number, request?: string): KubeApiError {
    return new KubeApiError(s.code ?? httpStatus ?? 500, s.reason, s.message ?? "", {
      details: s.details,
      request,
    });
  }
}

/** The request never got an HTTP answer: connection refused/reset, TLS failure, timeout. */
export class KubeNetworkError extends Error {
  override name = "KubeNetworkError";
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts);
  }
}

const hasStatus = (e: unknown, code: number) => e instanceof KubeApiError && e.status === code;
/** 404. */
export const isNotFound = (e: unknown): boolean => hasStatus(e, 404);
/** 409 (either a write conflict or AlreadyExists). */
export const isConflict = (e: unknown): boolean => hasStatus(e, 409);
/** 409 with reason AlreadyExists. */
export const isAlreadyExists = (e: unknown): boolean =>
  hasStatus(e, 409) && (e as KubeApiError).reason === "AlreadyExists";
/** 410: resourceVersion or continue token too old. */
export const isGone = (e: unknown): boolean => hasStatus(e, 410);
/** 403. */
export const isForbidden = (e: unknown): boolean => hasStatus(e, 403);

/** Status codes that end an informer before its first sync (they will not fix themselves). */
const TERMINAL_BEFORE_SYNC = new Set([400, 401, 403, 404, 405, 406, 415, 422]);

/**
 * Whether an error means "give up" rather than "retry": a bad request or selector, missing
 * credentials or RBAC, a kind that is not installed, or a request the server cannot take.
 */
export function isNonRetryable(e: unknown): boolean {
  return e instanceof KubeApiError && TERMINAL_BEFORE_SYNC.has(e.status);
}

/** The value of `read`, or `undefined` when it fails with 404 (any other failure is rethrown). */
export async function getOrUndefined<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** The error of a non-2xx answer: its `Status` body when it has one, else its text. */
export async function errorOfResponse(
  res: Response,
  what: string,
  signal?: AbortSignal,
): Promise<Error> {
  let text = "";
  try {
    text = await res.text();
  } catch {
    if (signal?.aborted) return signal.reason;
  }
  try {
    const s = JSON.parse(text) as Status;
    if (s && typeof s === "object" && s.kind === "Status") {
      return KubeApiError.fromStatus(s, res.status, what);
    }
  } catch {
    // not JSON: use the text
  }
  const msg = text.trim().slice(0, 500) || res.statusText;
  return new KubeApiError(res.status, undefined, `${what}: ${msg}`, { request: what });
}
