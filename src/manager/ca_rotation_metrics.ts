/**
 * The CA rotation's metric families, `dco_manager_ca_*` (listed in docs/observability.md), as a
 * {@link RotationReporter}.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { ROTATION_PHASES, ROTATION_STEPS, type RotationReporter } from "./ca_rotation.ts";

export class CARotationMetrics implements RotationReporter {
  readonly #phase: Gauge<"phase">;
  readonly #steps: Counter<"step">;
  readonly #pending: Gauge;
  readonly #notAfter: Gauge;
  readonly #dueAt: Gauge;
  readonly #bundle: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#phase = new Gauge({
      name: "dco_manager_ca_rotation_phase",
      help: "1 for the built-in CA's current rotation phase (Idle, Trusting, Reissuing, " +
        "Retiring), else 0.",
      labelNames: ["phase"] as const,
      registers,
    });
    this.#steps = new Counter({
      name: "dco_manager_ca_rotation_steps_total",
      help: "CA rotation steps taken: started, promoted (the new CA signs), retired (the old CA " +
        "left the CA Secret's bundle), completed (every caBundle holds the new CA alone).",
      labelNames: ["step"] as const,
      registers,
    });
    for (const step of ROTATION_STEPS) this.#steps.inc({ step }, 0);
    this.#pending = new Gauge({
      name: "dco_manager_ca_rotation_pending",
      help: "Trust stores (Trusting, Retiring) or serving pairs (Reissuing) the current rotation " +
        "phase still waits on; 0 when idle.",
      registers,
    });
    this.#notAfter = new Gauge({
      name: "dco_manager_ca_not_after_timestamp_seconds",
      help: "Expiry of the built-in signing CA (Unix seconds).",
      registers,
    });
    this.#dueAt = new Gauge({
      name: "dco_manager_ca_rotation_due_timestamp_seconds",
      help: "When the built-in signing CA is due for rotation (Unix seconds).",
      registers,
    });
    this.#bundle = new Gauge({
      name: "dco_manager_ca_bundle_certificates",
      help: "CA certificates in the built-in trust bundle (2 during a rotation).",
      registers,
    });
  }

  phase(phase: string): void {
    for (const p of ROTATION_PHASES) this.#phase.set({ phase: p }, p === phase ? 1 : 0);
  }
  step(step: string): void {
    this.#steps.inc({ step });
  }
  pending(count: number): void {
    this.#pending.set(count);
  }
  ca(info: { notAfter: number; dueAt: number; bundleSize: number }): void {
    this.#notAfter.set(info.notAfter / 1000);
    this.#dueAt.set(info.dueAt / 1000);
    this.#bundle.set(info.bundleSize);
  }
}
