/**
 * Client-side rate limiting of the scale run, as client-go's `--qps/--burst` do: a token bucket
 * holding up to `burst` tokens, refilled at `qps` per second; each request takes one token and
 * waits for it when the bucket is empty.
 */

export class TokenBucket {
  #tokens: number;
  #last: number;
  #queue: Promise<void> = Promise.resolve();

  /** `now` is the clock in ms and `sleep` waits (injected so tests need no timers). */
  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) =>
      new Promise((r) => setTimeout(r, ms)),
  ) {
    if (!(qps > 0) || !(burst >= 1)) throw new RangeError("qps must be > 0 and burst >= 1");
    this.#tokens = burst;
    this.#last = now();
  }

  #refill(): void {
    const t = this.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((t - this.#last) / 1000) * this.qps);
    this.#last = t;
  }

  /** Resolves when the caller may send one request; callers are served in order. */
  take(): Promise<void> {
    const turn = this.#queue.then(async () => {
      this.#refill();
      if (this.#tokens < 1) {
        await this.sleep(((1 - this.#tokens) / this.qps) * 1000);
        this.#refill();
      }
      this.#tokens -= 1;
    });
    this.#queue = turn;
    return turn;
  }
}
