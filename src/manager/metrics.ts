/**
 * The manager's own metric families, `dco_manager_*` (listed in docs/observability.md), the hooks
 * the config reconcile reports through, and controller-runtime's admission webhook families.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { AdmissionRequestMetrics } from "./admission/http.ts";
import type { ConfigKindLabel, ConfigReconcileMetrics } from "./config/types.ts";

const APPLY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const PROPAGATION_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

export class ManagerMetrics {
  readonly analyzeFailures: Counter<"config_kind" | "target" | "reason">;
  readonly phaseTransitions: Counter<
    "config_kind" | "target" | "from_phase" | "to_phase" | "reason"
  >;
  readonly applyDuration: Histogram<"config_kind" | "target" | "result">;
  readonly conversionReverts: Counter<"config_kind" | "target">;
  readonly conversionPropagated: Gauge<"target">;
  readonly propagationLag: Histogram<"target">;
  /** The admission listener's request families. */
  readonly admission: AdmissionWebhookMetrics;

  constructor(registry: Registry) {
    this.admission = new AdmissionWebhookMetrics(registry);
    const registers = [registry];
    const counter = <L extends string>(name: string, help: string, labelNames: L[]) =>
      new Counter<L>({ name, help, labelNames, registers });
    const histogram = <L extends string>(
      name: string,
      help: string,
      labelNames: L[],
      buckets: number[],
    ) => new Histogram<L>({ name, help, labelNames, buckets, registers });
    this.analyzeFailures = counter(
      "dco_manager_analyze_failures_total",
      "Validation failures during config reconcile.",
      ["config_kind", "target", "reason"],
    );
    this.phaseTransitions = counter(
      "dco_manager_phase_transitions_total",
      "Recorded config phase transitions.",
      ["config_kind", "target", "from_phase", "to_phase", "reason"],
    );
    this.applyDuration = histogram(
      "dco_manager_apply_duration_seconds",
      "Server-side apply latency of target conversion patches.",
      ["config_kind", "target", "result"],
      APPLY_BUCKETS,
    );
    this.conversionReverts = counter(
      "dco_manager_conversion_reverts_total",
      "A previously applied config found the live target without its conversion stanza " +
        "(an out-of-band overwrite).",
      ["config_kind", "target"],
    );
    this.conversionPropagated = new Gauge({
      name: "dco_manager_conversion_propagated",
      help: "1 when every CRD generated from the XRD carries the applied conversion, else 0.",
      labelNames: ["target"] as const,
      registers,
    });
    this.propagationLag = histogram(
      "dco_manager_propagation_lag_seconds",
      "Apply to observed propagation into the generated CRDs, on each transition into " +
        "Propagated.",
      ["target"],
      PROPAGATION_BUCKETS,
    );
  }

  /** The reconcile's hooks, with `config_kind`/`target` of the apply histogram bound. */
  hooksFor(kind: ConfigKindLabel, target: string): ConfigReconcileMetrics {
    return {
      analyzeFailure: (l) =>
        this.analyzeFailures.inc({ config_kind: l.configKind, target: l.target, reason: l.reason }),
      phaseTransition: (l) =>
        this.phaseTransitions.inc({
          config_kind: l.configKind,
          target: l.target,
          from_phase: l.fromPhase,
          to_phase: l.toPhase,
          reason: l.reason,
        }),
      applyDuration: (result, seconds) =>
        this.applyDuration.observe({ config_kind: kind, target, result }, seconds),
      conversionRevert: (l) =>
        this.conversionReverts.inc({ config_kind: l.configKind, target: l.target }),
      conversionPropagated: (t, ok) => this.conversionPropagated.set({ target: t }, ok ? 1 : 0),
      propagationLag: (t, seconds) => this.propagationLag.observe({ target: t }, seconds),
    };
  }
}

/**
 * controller-runtime's admission webhook families for the manager's admission listener, `webhook`
 * being the served path: `controller_runtime_webhook_requests_total{webhook, code}`,
 * `controller_runtime_webhook_latency_seconds{webhook}` (Prometheus' default buckets) and
 * `controller_runtime_webhook_requests_in_flight{webhook}`.
 */
export class AdmissionWebhookMetrics implements AdmissionRequestMetrics {
  readonly requests: Counter<"webhook" | "code">;
  readonly latency: Histogram<"webhook">;
  readonly inFlight: Gauge<"webhook">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({
      name: "controller_runtime_webhook_requests_total",
      help: "Total number of admission requests by HTTP status code.",
      labelNames: ["webhook", "code"] as const,
      registers,
    });
    this.latency = new Histogram({
      name: "controller_runtime_webhook_latency_seconds",
      help: "Histogram of the latency of processing admission requests",
      labelNames: ["webhook"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.inFlight = new Gauge({
      name: "controller_runtime_webhook_requests_in_flight",
      help: "Current number of admission requests being served.",
      labelNames: ["webhook"] as const,
      registers,
    });
  }

  started(webhook: string): (code: number) => void {
    const began = performance.now();
    this.inFlight.inc({ webhook });
    return (code) => {
      this.inFlight.dec({ webhook });
      this.requests.inc({ webhook, code: String(code) });
      this.latency.observe({ webhook }, (performance.now() - began) / 1000);
    };
  }
}
