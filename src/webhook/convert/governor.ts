/**
 * Admission on the conversion port: a request is admitted only while the requests in flight and
 * the request bytes in flight stay within their bounds (src/webhook/convert/budget.ts); beyond
 * them it is answered 429 with `Retry-After` before its body is read
 * (docs/design/webhook.md#request-governance). A ticket is released exactly once, when the
 * response finished or the connection closed, whichever comes first.
 */

/** Why a request or connection was refused (the `reason` label). */
export type RejectReason = "in_flight" | "bytes_in_flight" | "body_too_large" | "connections";

/** An admitted request's hold on the budget. */
export interface Ticket {
  /** Idempotent. */
  release(): void;
}

export type Admission =
  | { ok: true; ticket: Ticket }
  | { ok: false; reason: "in_flight" | "bytes_in_flight"; message: string };

export interface GovernorBounds {
  maxRequestsInFlight: number;
  maxRequestBytesInFlight: number;
}

/** Seconds a refused client is told to wait. */
export const RETRY_AFTER_SECONDS = 1;

export class RequestGovernor {
  readonly bounds: Readonly<GovernorBounds>;
  #requests = 0;
  #bytes = 0;
  readonly #onChange: ((requests: number, bytes: number) => void) | undefined;

  /** `onChange` runs after every admit and release (e.g. the in-flight gauges). */
  constructor(bounds: GovernorBounds, onChange?: (requests: number, bytes: number) => void) {
    if (!(bounds.maxRequestsInFlight >= 1)) {
      throw new RangeError("maxRequestsInFlight must be >= 1");
    }
    if (!(bounds.maxRequestBytesInFlight >= 1)) {
      throw new RangeError("maxRequestBytesInFlight must be >= 1");
    }
    this.bounds = Object.freeze({ ...bounds });
    this.#onChange = onChange;
  }

  get requestsInFlight(): number {
    return this.#requests;
  }

  get bytesInFlight(): number {
    return this.#bytes;
  }

  /**
   * Admits a request that will hold `bytes` (its declared body, or what the reader may read).
   * A request larger than the whole byte budget is admitted when nothing else holds bytes, so an
   * idle replica always answers (the body limit then refuses it).
   */
  admit(bytes: number): Admission {
    const b = this.bounds;
    if (this.#requests >= b.maxRequestsInFlight) {
      return {
        ok: false,
        reason: "in_flight",
        message: `too many conversion requests in flight (limit ${b.maxRequestsInFlight}); ` +
          `retry after ${RETRY_AFTER_SECONDS}s`,
      };
    }
    if (this.#bytes > 0 && this.#bytes + bytes > b.maxRequestBytesInFlight) {
      return {
        ok: false,
        reason: "bytes_in_flight",
        message: `conversion request bytes in flight would exceed the ` +
          `${b.maxRequestBytesInFlight}-byte budget; retry after ${RETRY_AFTER_SECONDS}s`,
      };
    }
    this.#requests++;
    this.#bytes += bytes;
    this.#onChange?.(this.#requests, this.#bytes);
    let held = true;
    return {
      ok: true,
      ticket: {
        release: () => {
          if (!held) return;
          held = false;
          this.#requests--;
          this.#bytes -= bytes;
          this.#onChange?.(this.#requests, this.#bytes);
        },
      },
    };
  }
}
