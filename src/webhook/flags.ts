/**
 * The webhook server's command line: Go-style flags parsed by the shared parser (src/lib/flags.ts)
 * and validated up front, before anything starts; any violation is a {@link FlagError} and the
 * process exits 1.
 */
import { MAX_GOVERNED_BYTES } from "./convert/governor.ts";
import { parseGoDuration } from "../engine/units.ts";
import { labelSelectorFromJSON } from "../kube/label_selector.ts";
import { type FieldFlag, FlagError, parseFlagRecord } from "../lib/flags.ts";
import { DEFAULT_TRACE_SAMPLE_RATIO, type TracingSettings } from "../obs/tracing.ts";

export { FlagError };

export interface WebhookServerFlags {
  webhookServerName: string;
  tlsCertDir: string;
  conversionBindAddress: string;
  metricsBindAddress: string;
  /**
   * `--metrics-secure`: serve `--metrics-bind-address` over TLS (the `--tls-cert-dir` pair),
   * `/metrics` only for an authenticated, authorised bearer token; the probes stay open.
   */
  metricsSecure: boolean;
  certReloadIntervalMs: number;
  enableXrdSupport: boolean;
  enableCrdSupport: boolean;
  /** The selector in string form ("" = unscoped). */
  cacheLabelSelector: string;
  /** 0 = the CPUs this process may use. */
  initialSyncWorkers: number;
  /**
   * Workers of the conversion pool (the reviews the listeners hand over); 0 = the CPUs this
   * process may use (the container's CPU limit).
   */
  conversionWorkers: number;
  /**
   * Listener Workers serving the conversion port; 0 = the CPUs this process may use (the
   * container's CPU limit).
   */
  conversionListeners: number;
  /**
   * Bodies up to this size, for targets of bounded cost, convert on the listener Worker that read
   * them, the rest in the conversion pool; 0 = none; `auto` = the default
   * (src/webhook/convert/inline_policy.ts).
   */
  conversionInlineMaxBytes: number | "auto";
  /** The body cap; the body limit is at most the request byte budget. */
  maxRequestBytes: number;
  /** 0 = derived from the heap limit (docs/design/webhook.md#request-governance). */
  maxRequestsInFlight: number;
  /** 0 = derived from the heap limit. */
  maxRequestBytesInFlight: number;
  /** 0 = derived (4 × the requests-in-flight bound). */
  maxConnections: number;
  requestTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** Out-of-cluster use (development, tests); in a Pod the service account is used. */
  kubeconfig: string;
  /** `--otel-exporter-otlp-endpoint`: "" = tracing off (docs/observability.md#tracing). */
  otelExporterOtlpEndpoint: string;
  /** `--otel-trace-sample-ratio`, clamped to [0, 1]. */
  otelTraceSampleRatio: number;
  otelExporterOtlpInsecure: boolean;
}

/** The `--otel-*` flags as tracing settings. */
export function tracingSettingsOf(f: WebhookServerFlags): TracingSettings {
  return {
    endpoint: f.otelExporterOtlpEndpoint,
    sampleRatio: f.otelTraceSampleRatio,
    insecure: f.otelExporterOtlpInsecure,
  };
}

function sampleRatio(raw: string, flag: string): number {
  const v = raw.trim() === "" ? NaN : Number(raw);
  if (!Number.isFinite(v)) throw new FlagError(`${flag}: ${JSON.stringify(raw)} is not a number`);
  return Math.min(1, Math.max(0, v));
}

function durationMs(raw: string, flag: string): number {
  const ns = parseGoDuration(raw);
  if (ns === undefined) {
    throw new FlagError(`${flag}: ${JSON.stringify(raw)} is not a duration (e.g. 30s, 1m)`);
  }
  return Number(ns / 1_000_000n);
}

/** `auto`, or a byte count ≥ 0. */
function inlineMaxBytes(raw: string, flag: string): number | "auto" {
  if (raw === "auto") return "auto";
  if (!/^\d+$/.test(raw)) {
    throw new FlagError(
      `${flag} must be auto or a byte count >= 0 (0 = every review in a Worker), not ${
        JSON.stringify(raw)
      }`,
    );
  }
  return Number(raw);
}

const FLAGS: Record<string, FieldFlag<WebhookServerFlags>> = {
  "webhook-server-name": { field: "webhookServerName", kind: "string" },
  "tls-cert-dir": { field: "tlsCertDir", kind: "string" },
  "conversion-bind-address": { field: "conversionBindAddress", kind: "string" },
  "metrics-bind-address": { field: "metricsBindAddress", kind: "string" },
  "metrics-secure": { field: "metricsSecure", kind: "bool" },
  "cert-reload-interval": { field: "certReloadIntervalMs", parse: durationMs },
  "enable-xrd-support": { field: "enableXrdSupport", kind: "bool" },
  "enable-crd-support": { field: "enableCrdSupport", kind: "bool" },
  "cache-label-selector": { field: "cacheLabelSelector", kind: "string" },
  "initial-sync-workers": { field: "initialSyncWorkers", kind: "int" },
  "conversion-workers": { field: "conversionWorkers", kind: "int" },
  "conversion-listeners": { field: "conversionListeners", kind: "int" },
  "conversion-inline-max-bytes": { field: "conversionInlineMaxBytes", parse: inlineMaxBytes },
  "max-request-bytes": { field: "maxRequestBytes", kind: "int" },
  "max-requests-in-flight": { field: "maxRequestsInFlight", kind: "int" },
  "max-request-bytes-in-flight": { field: "maxRequestBytesInFlight", kind: "int" },
  "max-connections": { field: "maxConnections", kind: "int" },
  "request-timeout": { field: "requestTimeoutMs", parse: durationMs },
  "shutdown-timeout": { field: "shutdownTimeoutMs", parse: durationMs },
  "kubeconfig": { field: "kubeconfig", kind: "string" },
  "otel-exporter-otlp-endpoint": { field: "otelExporterOtlpEndpoint", kind: "string" },
  "otel-trace-sample-ratio": { field: "otelTraceSampleRatio", parse: sampleRatio },
  "otel-exporter-otlp-insecure": { field: "otelExporterOtlpInsecure", kind: "bool" },
};

export const DEFAULT_FLAGS: Readonly<WebhookServerFlags> = Object.freeze({
  webhookServerName: "",
  tlsCertDir: "/tls",
  conversionBindAddress: ":9443",
  metricsBindAddress: ":8443",
  metricsSecure: false,
  certReloadIntervalMs: 30_000,
  enableXrdSupport: true,
  enableCrdSupport: true,
  cacheLabelSelector: "",
  initialSyncWorkers: 0,
  conversionWorkers: 0,
  conversionListeners: 0,
  conversionInlineMaxBytes: "auto",
  maxRequestBytes: 33_554_432,
  maxRequestsInFlight: 0,
  maxRequestBytesInFlight: 0,
  maxConnections: 0,
  requestTimeoutMs: 30_000,
  shutdownTimeoutMs: 30_000,
  kubeconfig: "",
  otelExporterOtlpEndpoint: "",
  otelTraceSampleRatio: DEFAULT_TRACE_SAMPLE_RATIO,
  otelExporterOtlpInsecure: false,
});

/** Parses `args` (logging flags already removed); throws {@link FlagError}. */
export function parseWebhookServerFlags(args: readonly string[]): WebhookServerFlags {
  const out = parseFlagRecord(args, FLAGS, DEFAULT_FLAGS);
  if (out.webhookServerName.trim() === "") throw new FlagError("--webhook-server-name is required");
  if (out.maxRequestBytes <= 0) throw new FlagError("--max-request-bytes must be > 0");
  for (
    const [flag, v] of [
      ["--max-requests-in-flight", out.maxRequestsInFlight],
      ["--max-request-bytes-in-flight", out.maxRequestBytesInFlight],
      ["--max-connections", out.maxConnections],
    ] as const
  ) {
    if (v < 0) throw new FlagError(`${flag} must be >= 0 (0 = derived from the heap limit)`);
  }
  if (out.maxRequestBytesInFlight > MAX_GOVERNED_BYTES) {
    throw new FlagError(`--max-request-bytes-in-flight must be <= ${MAX_GOVERNED_BYTES}`);
  }
  if (out.requestTimeoutMs <= 0) throw new FlagError("--request-timeout must be > 0");
  if (out.shutdownTimeoutMs <= 0) throw new FlagError("--shutdown-timeout must be > 0");
  if (out.certReloadIntervalMs <= 0) throw new FlagError("--cert-reload-interval must be > 0");
  if (out.initialSyncWorkers < 0) throw new FlagError("--initial-sync-workers must be >= 0");
  if (out.conversionWorkers < 0) {
    throw new FlagError("--conversion-workers must be >= 0 (0 = the CPUs this process may use)");
  }
  if (out.conversionListeners < 0) {
    throw new FlagError(
      "--conversion-listeners must be >= 0 (0 = the CPUs this process may use)",
    );
  }
  if (!out.enableCrdSupport && !out.enableXrdSupport) {
    throw new FlagError(
      "at least one of --enable-crd-support and --enable-xrd-support must be true",
    );
  }
  try {
    out.cacheLabelSelector = labelSelectorFromJSON(out.cacheLabelSelector);
  } catch (e) {
    throw new FlagError(`--cache-label-selector: ${(e as Error).message}`);
  }
  return out;
}
