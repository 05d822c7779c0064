/** The settings one conversion endpoint runs with, checked and defaulted once at startup. */
import { createLogger } from "../../obs/log.ts";
import type { RequestSampler } from "../../obs/tracing.ts";
import type { WebhookLogger } from "../_log.ts";
import type { ConversionMetrics } from "../metrics.ts";
import type { RegistryEntry } from "../registry.ts";
import { DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_REQUEST_BYTES } from "./body.ts";
import type { RequestGovernor } from "./governor.ts";

/** Default `--request-timeout` (30 s). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** The registry read the handler needs (one lookup per request). */
export interface PlanLookup {
  get(target: string): RegistryEntry | undefined;
}

export interface ConvertHandlerOptions {
  registry: PlanLookup;
  /** Omit for no metrics (benchmarks of the bare path). */
  metrics?: ConversionMetrics;
  logger?: WebhookLogger;
  /** The body limit (`RequestBounds.maxRequestBytes`); > 0. */
  maxRequestBytes?: number;
  /** Admission by requests and bytes in flight; omit for none (benchmarks, tools). */
  governor?: RequestGovernor;
  /** `--request-timeout` in ms; > 0. */
  requestTimeoutMs?: number;
  maxJsonDepth?: number;
  /** Monotonic milliseconds (tests inject a clock to exercise the request budget). */
  clock?: () => number;
  /** Which requests are traced; omit for no tracing (no span is ever built). */
  sampler?: RequestSampler;
}

/** Resolved options shared by the answer table and the HTTP adapter. */
export interface ConvertContext {
  readonly registry: PlanLookup;
  readonly metrics: ConversionMetrics | undefined;
  readonly logger: WebhookLogger;
  readonly maxRequestBytes: number;
  readonly governor: RequestGovernor | undefined;
  readonly requestTimeoutMs: number;
  readonly maxJsonDepth: number;
  readonly clock: () => number;
  readonly sampler: RequestSampler | undefined;
}

export function convertContext(opts: ConvertHandlerOptions): ConvertContext {
  const maxRequestBytes = opts.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const maxJsonDepth = opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
  if (!(maxRequestBytes > 0)) throw new RangeError("maxRequestBytes must be > 0");
  if (!(requestTimeoutMs > 0)) throw new RangeError("requestTimeoutMs must be > 0");
  if (!(maxJsonDepth >= 4)) throw new RangeError("maxJsonDepth must be >= 4");
  return {
    registry: opts.registry,
    metrics: opts.metrics,
    logger: opts.logger ?? createLogger("webhook.convert"),
    maxRequestBytes,
    governor: opts.governor,
    requestTimeoutMs,
    maxJsonDepth,
    clock: opts.clock ?? (() => performance.now()),
    sampler: opts.sampler,
  };
}
