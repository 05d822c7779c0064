/**
 * The REST client families of client-go (as controller-runtime registers them), so dashboards for
 * Go operators read ours unchanged: `rest_client_requests_total{code, method, host}` and
 * `rest_client_request_duration_seconds{verb, host}`. src/kube/client.ts reports through the
 * `observe` of the object returned here (its `RequestMetricsSink`).
 */
import { Counter, Histogram, type Registry } from "prom-client";

/** client-go's request latency buckets (seconds). */
export const REST_CLIENT_DURATION_BUCKETS: readonly number[] = [
  0.005,
  0.025,
  0.1,
  0.25,
  0.5,
  1,
  2,
  4,
  8,
  15,
  30,
  60,
];

/** One request's report: `code` is the HTTP status, or `<error>` when no answer came. */
export interface RestClientMetrics {
  observe(method: string, host: string, code: string, seconds: number): void;
}

/** Registers both families into `registry` and returns their sink. */
export function restClientMetrics(registry: Registry): RestClientMetrics {
  const registers = [registry];
  const total = new Counter({
    name: "rest_client_requests_total",
    help: "Number of HTTP requests, partitioned by status code, method, and host.",
    labelNames: ["code", "method", "host"] as const,
    registers,
  });
  const duration = new Histogram({
    name: "rest_client_request_duration_seconds",
    help: "Request latency in seconds. Broken down by verb, and host.",
    labelNames: ["verb", "host"] as const,
    buckets: [...REST_CLIENT_DURATION_BUCKETS],
    registers,
  });
  return {
    observe(method, host, code, seconds) {
      total.inc({ code, method, host });
      duration.observe({ verb: method, host }, seconds);
    },
  };
}
