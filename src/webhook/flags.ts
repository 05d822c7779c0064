/**
 * The webhook server's command line (runtime.md §8.1): Go-style flags (`--name=value`,
 * `--name value`, `--flag` / `--flag=false` for booleans), validated up front; any violation is
 * a `FlagError` and the process exits 1 (§8.2 step 1).
 */
import { parseGoDuration } from "../engine/units.ts";
import { labelSelectorFromJSON } from "../kube/label_selector.ts";

export interface WebhookServerFlags {
  webhookServerName: string;
  tlsCertDir: string;
  conversionBindAddress: string;
  metricsBindAddress: string;
  certReloadIntervalMs: number;
  enableXrdSupport: boolean;
  enableCrdSupport: boolean;
  /** The selector in string form ("" = unscoped). */
  cacheLabelSelector: string;
  /** 0 = the CPUs this process may use. */
  initialSyncWorkers: number;
  maxRequestBytes: number;
  requestTimeoutMs: number;
  shutdownTimeoutMs: number;
  /** Out-of-cluster use (development, tests); in a Pod the service account is used. */
  kubeconfig: string;
}

export class FlagError extends Error {
  override name = "FlagError";
}

type Kind = "string" | "bool" | "int" | "duration";

const FLAGS: Record<string, [keyof WebhookServerFlags, Kind]> = {
  "webhook-server-name": ["webhookServerName", "string"],
  "tls-cert-dir": ["tlsCertDir", "string"],
  "conversion-bind-address": ["conversionBindAddress", "string"],
  "metrics-bind-address": ["metricsBindAddress", "string"],
  "cert-reload-interval": ["certReloadIntervalMs", "duration"],
  "enable-xrd-support": ["enableXrdSupport", "bool"],
  "enable-crd-support": ["enableCrdSupport", "bool"],
  "cache-label-selector": ["cacheLabelSelector", "string"],
  "initial-sync-workers": ["initialSyncWorkers", "int"],
  "max-request-bytes": ["maxRequestBytes", "int"],
  "request-timeout": ["requestTimeoutMs", "duration"],
  "shutdown-timeout": ["shutdownTimeoutMs", "duration"],
  "kubeconfig": ["kubeconfig", "string"],
};

/** Accepted and ignored (tracing is not part of this build; documented in docs/operations.md). */
const IGNORED = new Set([
  "otel-exporter-otlp-endpoint",
  "otel-trace-sample-ratio",
  "otel-exporter-otlp-insecure",
]);

export const DEFAULT_FLAGS: Readonly<WebhookServerFlags> = Object.freeze({
  webhookServerName: "",
  tlsCertDir: "/tls",
  conversionBindAddress: ":9443",
  metricsBindAddress: ":8443",
  certReloadIntervalMs: 30_000,
  enableXrdSupport: true,
  enableCrdSupport: true,
  cacheLabelSelector: "",
  initialSyncWorkers: 0,
  maxRequestBytes: 33_554_432,
  requestTimeoutMs: 30_000,
  shutdownTimeoutMs: 30_000,
  kubeconfig: "",
});

function durationMs(name: string, text: string): number {
  const ns = parseGoDuration(text);
  if (ns === undefined) {
    throw new FlagError(`--${name}: ${JSON.stringify(text)} is not a duration (e.g. 30s, 1m)`);
  }
  return Number(ns / 1_000_000n);
}

/** Parses `args` (logging flags already removed); throws FlagError. */
export function parseWebhookServerFlags(args: readonly string[]): WebhookServerFlags {
  const out: WebhookServerFlags = { ...DEFAULT_FLAGS };
  const record = out as unknown as Record<string, string | number | boolean>;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--")) throw new FlagError(`unexpected argument ${JSON.stringify(arg)}`);
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    let value: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
    if (IGNORED.has(name)) {
      if (value === undefined && !(args[i + 1] ?? "--").startsWith("--")) i++;
      continue;
    }
    const spec = FLAGS[name];
    if (spec === undefined) throw new FlagError(`unknown flag --${name}`);
    const [field, kind] = spec;
    if (kind === "bool") {
      if (value === undefined) value = "true";
      if (value !== "true" && value !== "false") {
        throw new FlagError(`--${name}: expected true or false, got ${JSON.stringify(value)}`);
      }
      record[field] = value === "true";
      continue;
    }
    if (value === undefined) {
      value = args[++i];
      if (value === undefined) throw new FlagError(`--${name} needs a value`);
    }
    if (kind === "string") record[field] = value;
    else if (kind === "duration") record[field] = durationMs(name, value);
    else {
      if (!/^-?\d+$/.test(value)) {
        throw new FlagError(`--${name}: ${JSON.stringify(value)} is not an integer`);
      }
      record[field] = Number(value);
    }
  }
  if (out.webhookServerName.trim() === "") throw new FlagError("--webhook-server-name is required");
  if (out.maxRequestBytes <= 0) throw new FlagError("--max-request-bytes must be > 0");
  if (out.requestTimeoutMs <= 0) throw new FlagError("--request-timeout must be > 0");
  if (out.shutdownTimeoutMs <= 0) throw new FlagError("--shutdown-timeout must be > 0");
  if (out.certReloadIntervalMs <= 0) throw new FlagError("--cert-reload-interval must be > 0");
  if (out.initialSyncWorkers < 0) throw new FlagError("--initial-sync-workers must be >= 0");
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
