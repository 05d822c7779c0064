/**
 * The manager's leader-only work: its controllers and their pacers run for one term — from
 * `onStartedLeading` until its signal aborts (or, without `--leader-elect`, until shutdown) —
 * and write through a client fenced by that signal, so nothing they send outlives the term.
 * Order and why: docs/design/manager.md#leader-election.
 */
import type { Controller, KubeClient, Pacer } from "../kube/mod.ts";
import type { Logger } from "../obs/log.ts";

/** One leadership term's controllers and the client they must write with. */
export class LeaderTerm {
  readonly #term = new AbortController();
  /** The client the controllers write with: every request aborts when the term ends. */
  readonly client: KubeClient;
  #controllers: readonly Controller[] = [];
  #pacers: readonly Pacer[] = [];

  constructor(client: KubeClient) {
    this.client = client.withSignal(this.#term.signal);
  }

  /** The controllers (and their pacers) this term runs; set once, before {@link run}. */
  add(controllers: readonly Controller[], pacers: readonly Pacer[]): void {
    this.#controllers = controllers;
    this.#pacers = pacers;
  }

  /** The controllers' names. */
  get names(): string[] {
    return this.#controllers.map((c) => c.name);
  }

  /**
   * Starts the controllers (unless `signal` already aborted) and, once it aborts: stops the
   * pacers, ends the term (the fenced client aborts what is in flight and sends nothing more),
   * stops the controllers and waits for their in-flight reconciles. Resolves when all ended.
   */
  async run(signal: AbortSignal, log: Logger): Promise<void> {
    if (!signal.aborted) {
      for (const c of this.#controllers) c.start();
      log.info("controllers started", { controllers: this.names });
      await new Promise<void>((resolve) =>
        signal.addEventListener("abort", () => resolve(), { once: true })
      );
    }
    for (const p of this.#pacers) p.stop();
    this.#term.abort(signal.reason);
    await Promise.all(this.#controllers.map((c) => c.stop()));
    log.info("controllers stopped", { controllers: this.names });
  }
}
