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

/**
 * Where a governor keeps its counts: `[requests, bytes]` of an `Int32Array`, shared across the
 * threads that admit on one port when it views a `SharedArrayBuffer` (the listener Workers);
 * `own`, when given, is the same pair for one thread alone, so that what a lost thread held can
 * be given back (`giveBack` of src/lib/shared_counts.ts).
 */
export interface GovernorCells {
  total: Int32Array;
  own?: Int32Array;
}

/** The largest byte budget the counts can hold (they are 32-bit). */
export const MAX_GOVERNED_BYTES = 0x7fff_ffff;

export class RequestGovernor {
  readonly bounds: Readonly<GovernorBounds>;
  readonly #total: Int32Array;
  readonly #own: Int32Array | undefined;
  readonly #onChange: ((requests: number, bytes: number) => void) | undefined;

  /**
   * `onChange` runs after every admit and release on this thread (e.g. the in-flight gauges);
   * `cells` default to counts of this governor's own.
   */
  constructor(
    bounds: GovernorBounds,
    onChange?: (requests: number, bytes: number) => void,
    cells: GovernorCells = { total: new Int32Array(2) },
  ) {
    if (!(bounds.maxRequestsInFlight >= 1)) {
      throw new RangeError("maxRequestsInFlight must be >= 1");
    }
    if (!(bounds.maxRequestBytesInFlight >= 1)) {
      throw new RangeError("maxRequestBytesInFlight must be >= 1");
    }
    if (bounds.maxRequestBytesInFlight > MAX_GOVERNED_BYTES) {
      throw new RangeError(`maxRequestBytesInFlight must be <= ${MAX_GOVERNED_BYTES}`);
    }
    this.bounds = Object.freeze({
      maxRequestsInFlight: bounds.maxRequestsInFlight,
      maxRequestBytesInFlight: bounds.maxRequestBytesInFlight,
    });
    this.#onChange = onChange;
    this.#total = cells.total;
    this.#own = cells.own;
  }

  get requestsInFlight(): number {
    return Atomics.load(this.#total, 0);
  }

  get bytesInFlight(): number {
    return Atomics.load(this.#total, 1);
  }

  /**
   * Admits a request that will hold `bytes` (its declared body, or what the reader may read).
   * A request larger than the whole byte budget is admitted when nothing else holds bytes, so an
   * idle replica always answers (the body limit then refuses it). Lock-free: each count moves by
   * compare-and-swap, the request count first and given back when the bytes do not fit, so the
   * bounds hold across threads (a race may refuse, never over-admit).
   */
  admit(bytes: number): Admission {
    const b = this.bounds;
    const total = this.#total;
    for (;;) {
      const requests = Atomics.load(total, 0);
      if (requests >= b.maxRequestsInFlight) {
        return {
          ok: false,
          reason: "in_flight",
          message: `too many conversion requests in flight (limit ${b.maxRequestsInFlight}); ` +
            `retry after ${RETRY_AFTER_SECONDS}s`,
        };
      }
      if (Atomics.compareExchange(total, 0, requests, requests + 1) === requests) break;
    }
    // Held bytes never exceed the budget alone (a lone request is capped there), so the sum fits.
    const held = Math.min(bytes, b.maxRequestBytesInFlight);
    for (;;) {
      const inFlight = Atomics.load(total, 1);
      if (inFlight > 0 && inFlight + held > b.maxRequestBytesInFlight) {
        Atomics.sub(total, 0, 1);
        return {
          ok: false,
          reason: "bytes_in_flight",
          message: `conversion request bytes in flight would exceed the ` +
            `${b.maxRequestBytesInFlight}-byte budget; retry after ${RETRY_AFTER_SECONDS}s`,
        };
      }
      if (Atomics.compareExchange(total, 1, inFlight, inFlight + held) === inFlight) break;
    }
    const own = this.#own;
    if (own !== undefined) {
      Atomics.add(own, 0, 1);
      Atomics.add(own, 1, held);
    }
    this.#changed();
    let holding = true;
    return {
      ok: true,
      ticket: {
        release: () => {
          if (!holding) return;
          holding = false;
          if (own !== undefined) {
            Atomics.sub(own, 0, 1);
            Atomics.sub(own, 1, held);
          }
          Atomics.sub(total, 0, 1);
          Atomics.sub(total, 1, held);
          this.#changed();
        },
      },
    };
  }

  #changed(): void {
    if (this.#onChange !== undefined) {
      this.#onChange(Atomics.load(this.#total, 0), Atomics.load(this.#total, 1));
    }
  }
}
