/**
 * A role's readiness (`/readyz`): false until the role says otherwise. The webhook server turns
 * ready only after its initial sync, with deliberately no "ready after a timeout" escape
 * (docs/design/webhook.md#startup-order).
 */
export class Readiness {
  #ready = false;
  readonly #onChange: ((ready: boolean) => void) | undefined;

  /** `onChange` runs now (with false) and on every transition (e.g. `metrics.setReady`). */
  constructor(onChange?: (ready: boolean) => void) {
    this.#onChange = onChange;
    onChange?.(false);
  }

  get ready(): boolean {
    return this.#ready;
  }

  set(ready: boolean): void {
    if (ready === this.#ready) return;
    this.#ready = ready;
    this.#onChange?.(ready);
  }
}
