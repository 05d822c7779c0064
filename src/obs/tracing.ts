/**
 * Tracing on Deno's built-in OpenTelemetry (docs/observability.md#tracing). Deno exports the
 * spans (OTLP over HTTP, batched, flushed at exit); this module decides which requests are traced
 * and builds the spans through `@opentelemetry/api`, whose global tracer provider Deno registers
 * when its OpenTelemetry is on.
 *
 * Deno reads its OpenTelemetry settings once, when the process starts (`OTEL_DENO=true`,
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, …): a flag parsed later cannot turn it on. So the `--otel-*` flags
 * map onto that environment ({@link otelEnv}); whoever starts the process sets it (the manager
 * for the webhook-server Pods it runs), and the process refuses to start when the flags ask for
 * tracing that the environment did not turn on ({@link tracingEnvProblem}).
 *
 * The sampling decision is made once per request, before any span exists (parent-based ratio:
 * an incoming `traceparent` decides, else the ratio), so a request that is not traced builds no
 * span and no attribute, and with tracing off there is no tracer at all.
 */
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";

/** `service.name` of the webhook server's spans. */
export const WEBHOOK_SERVICE_NAME = "declarative-conversion-webhook-server";
/** `--otel-trace-sample-ratio` default. */
export const DEFAULT_TRACE_SAMPLE_RATIO = 0.1;

/** The `--otel-*` flags, parsed. */
export interface TracingSettings {
  /** `--otel-exporter-otlp-endpoint`; "" = tracing off. */
  endpoint: string;
  /** `--otel-trace-sample-ratio`, clamped to [0, 1]. */
  sampleRatio: number;
  /** `--otel-exporter-otlp-insecure`: plain HTTP to the collector. */
  insecure: boolean;
}

/**
 * The collector URL Deno exports to: the endpoint as given when it names a scheme, else
 * `https://<endpoint>` (`http://` with `insecure`).
 */
export function otlpEndpointUrl(endpoint: string, insecure: boolean): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)) return endpoint;
  return `${insecure ? "http" : "https"}://${endpoint}`;
}

/**
 * The environment Deno's OpenTelemetry needs at process start for `s` (empty when tracing is
 * off): on, traces only (no runtime metrics, console output stays on stdout), this service name,
 * the collector.
 */
export function otelEnv(
  s: TracingSettings,
  serviceName = WEBHOOK_SERVICE_NAME,
): Record<string, string> {
  if (s.endpoint === "") return {};
  return {
    OTEL_DENO: "true",
    OTEL_DENO_METRICS: "false",
    OTEL_DENO_CONSOLE: "ignore",
    OTEL_SERVICE_NAME: serviceName,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpointUrl(s.endpoint, s.insecure),
  };
}

/**
 * Whether this process runs with Deno's OpenTelemetry on: Deno then registers its providers in
 * `@opentelemetry/api`'s global registry. (Off, the API hands out no-op tracers.) Deno decides
 * when the process starts, from `OTEL_DENO`; a `deno compile` binary decided when it was compiled.
 */
export function denoOtelActive(): boolean {
  const registry = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[
    Symbol.for("opentelemetry.js.api.1")
  ];
  return registry?.trace !== undefined;
}

/**
 * Why this process cannot trace as `s` asks, or undefined when it can (or `s` asks for nothing):
 * Deno's OpenTelemetry is off (`active` false), or it exports somewhere else than the flag says.
 * A traces-specific endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is the operator's explicit
 * choice and wins.
 */
export function tracingEnvProblem(
  s: TracingSettings,
  env: (name: string) => string | undefined,
  active: boolean,
): string | undefined {
  if (s.endpoint === "") return undefined;
  const want = otelEnv(s);
  const lines = Object.entries(want).map(([k, v]) => `${k}=${v}`).join(" ");
  const hint = `Deno reads its OpenTelemetry settings only at process start (a deno compile ` +
    `binary: when it is compiled); set ${lines} (the manager sets them for the webhook-server ` +
    `Pods it runs)`;
  if (!active) {
    return `--otel-exporter-otlp-endpoint needs Deno's OpenTelemetry, which is off: ${hint}`;
  }
  if (env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) return undefined;
  const have = env("OTEL_EXPORTER_OTLP_ENDPOINT") ?? "";
  if (have !== want.OTEL_EXPORTER_OTLP_ENDPOINT) {
    return `--otel-exporter-otlp-endpoint=${s.endpoint} but Deno exports to ` +
      `${JSON.stringify(have || "http://localhost:4318")}: ${hint}`;
  }
  return undefined;
}

/** A W3C `traceparent` read: ids and whether the caller sampled it. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/** A `traceparent` header value, or undefined when absent or not valid (then it is ignored). */
export function parseTraceparent(value: string | undefined): TraceParent | undefined {
  if (value === undefined) return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (m === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = m;
  // Version ff is invalid; version 00 has nothing after the flags.
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** The `traceparent` of a parent's span (to hand its context to a Worker). */
export function traceparentOf(parent: SpanParent): string {
  const c = trace.getSpanContext(parent.context);
  if (c === undefined) return "";
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The context of a remote (or other-thread) parent. */
export function remoteContext(p: TraceParent): Context {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: p.traceId,
    spanId: p.spanId,
    traceFlags: p.sampled ? 1 : 0,
    isRemote: true,
  });
}

/** The context of a span of this thread. */
export function contextOf(span: Span): Context {
  return trace.setSpan(ROOT_CONTEXT, span);
}

/** Where child spans hang: a tracer and the parent's context. */
export interface SpanParent {
  readonly tracer: Tracer;
  readonly context: Context;
}

/** A child span of `parent`. */
export function startChild(parent: SpanParent, name: string, attributes: Attributes): Span {
  return parent.tracer.startSpan(name, { attributes }, parent.context);
}

/** Marks `span` failed: status ERROR with `message`, and the exception event when there is one. */
export function recordFailure(span: Span, message: string, error?: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** The tracer of this process's spans (Deno's provider when its OpenTelemetry is on). */
export function processTracer(name = WEBHOOK_SERVICE_NAME): Tracer {
  return trace.getTracer(name);
}

/**
 * The per-request sampling decision and root span: parent-based ratio. A valid incoming
 * `traceparent` decides (sampled → traced in its trace, not sampled → not traced); without one a
 * request is traced with probability `ratio`.
 */
export class RequestSampler {
  readonly #tracer: Tracer;
  readonly #ratio: number;
  readonly #random: () => number;

  constructor(tracer: Tracer, ratio: number, random: () => number = Math.random) {
    this.#tracer = tracer;
    this.#ratio = Math.min(1, Math.max(0, ratio));
    this.#random = random;
  }

  get ratio(): number {
    return this.#ratio;
  }

  get tracer(): Tracer {
    return this.#tracer;
  }

  /** The request's server span, or undefined when the request is not traced. */
  startRoot(
    name: string,
    traceparent: string | undefined,
    attributes: Attributes,
  ): Span | undefined {
    const parent = parseTraceparent(traceparent);
    let context = ROOT_CONTEXT;
    if (parent !== undefined) {
      if (!parent.sampled) return undefined;
      context = remoteContext(parent);
    } else if (!(this.#random() < this.#ratio)) {
      return undefined;
    }
    return this.#tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, context);
  }
}
