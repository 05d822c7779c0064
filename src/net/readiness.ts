/**
 * A role's readiness (`/readyz`): false until the role says otherwise, and false while any gate
 * holds a reason. The webhook server turns ready only after its initial sync, with deliberately no
 * "ready after a timeout" escape (docs/design/webhook.md#startup-order); the TLS listeners hold a
 * gate while no usable certificate pair is loaded (docs/design/webhook.md#tls-and-certificate-reload).
 */
export class Readiness {
  #own = false;
  #ready = false;
  readonly #gates = new Map<string, string>();
  readonly #onChange: ((ready: boolean) => void) | undefined;
  readonly #notReady: string;

  /**
   * `onChange` runs now (with false) and on every transition (e.g. `metrics.setReady`);
   * `notReady` is what `/readyz` says while the role itself is not ready.
   */
  constructor(onChange?: (ready: boolean) => void, notReady = "registry not yet fully synced") {
    this.#onChange = onChange;
    this.#notReady = notReady;
    onChange?.(false);
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** Why the role is not ready (gates first, in registration order); "" when it is. */
  get reason(): string {
    for (const reason of this.#gates.values()) if (reason !== "") return reason;
    return this.#own ? "" : this.#notReady;
  }

  /** The role's own readiness (the gates still apply). */
  set(ready: boolean): void {
    this.#own = ready;
    this.#update();
  }

  /** Holds readiness false with `reason` under `name`; an empty reason lifts the gate. */
  gate(name: string, reason: string): void {
    this.#gates.set(name, reason);
    this.#update();
  }

  #update(): void {
    const ready = this.reason === "";
    if (ready === this.#ready) return;
    this.#ready = ready;
    this.#onChange?.(ready);
  }
}
