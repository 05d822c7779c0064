/**
 * A real OpenTelemetry Collector (the `otelcol` binary hack/testenv.sh builds) for the trace
 * tests, and what it received. The collector listens for OTLP on gRPC and HTTP and forwards every
 * span it accepts, through its `otlp_http` exporter in JSON encoding, to a small OTLP/HTTP
 * endpoint in the test process that decodes them; tests assert on those spans, i.e. on what the
 * collector received and passed on.
 */
import { freePort, resolveAssets } from "./control_plane.ts";
import { startProcess } from "./role_process.ts";
import { WaitAbort, waitFor } from "./wait.ts";

/** One span as the collector passed it on. */
export interface ReceivedSpan {
  /** The resource's `service.name`. */
  service: string;
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP span kind (2 = server). */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP status code (0 unset, 1 ok, 2 error) and message. */
  status: { code: number; message: string };
  /** The names of the span's events (`exception` for a recorded error). */
  events: string[];
}

export interface Collector extends AsyncDisposable {
  /** `127.0.0.1:<port>` of the OTLP/gRPC receiver (what kube-apiserver's tracing takes). */
  readonly grpcEndpoint: string;
  /** `127.0.0.1:<port>` of the OTLP/HTTP receiver (what Deno's exporter takes). */
  readonly httpEndpoint: string;
  /** Every span received so far. */
  spans(): ReceivedSpan[];
  /** Waits (30 s unless told) until `pick` finds something among the spans received. */
  waitFor<T>(
    what: string,
    pick: (spans: ReceivedSpan[]) => T | undefined,
    options?: { timeoutMs?: number },
  ): Promise<T>;
  /** The collector's own output. */
  output(): string;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: OtlpAttribute[];
  status?: { code?: number; message?: string };
  events?: { name: string }[];
}
interface OtlpTraces {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

function valueOf(v: OtlpValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return "";
}

function attributesOf(
  list: OtlpAttribute[] | undefined,
): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

/** The spans of one OTLP/JSON traces export request. */
export function decodeTraces(body: OtlpTraces): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const service = String(attributesOf(rs.resource?.attributes)["service.name"] ?? "");
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          service,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          kind: s.kind ?? 0,
          attributes: attributesOf(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          events: (s.events ?? []).map((e) => e.name),
        });
      }
    }
  }
  return out;
}

/**
 * Starts the collector (its config in `dir`) and its downstream endpoint; both stop on dispose.
 * `grpcPort` fixes the OTLP/gRPC port (for a client configured before the collector starts).
 */
export async function startCollector(
  dir: string,
  opts: { grpcPort?: number } = {},
): Promise<Collector> {
  const { otelcol } = await resolveAssets();
  if (otelcol === undefined) {
    throw new Error(
      "no otelcol binary: run hack/testenv.sh (group otelcol) or set TEST_ASSET_OTELCOL",
    );
  }
  const received: ReceivedSpan[] = [];
  const sink = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      if (new URL(req.url).pathname === "/v1/traces") {
        received.push(...decodeTraces(await req.json() as OtlpTraces));
      } else {
        await req.body?.cancel();
      }
      return Response.json({});
    },
  );
  const grpcPort = opts.grpcPort ?? freePort();
  const httpPort = freePort();
  const config = `${dir}/otelcol.yaml`;
  await Deno.writeTextFile(
    config,
    `receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${grpcPort}
      http:
        endpoint: 127.0.0.1:${httpPort}
exporters:
  otlp_http:
    endpoint: http://127.0.0.1:${sink.addr.port}
    encoding: json
    compression: none
    retry_on_failure:
      enabled: false
    sending_queue:
      enabled: false
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlp_http]
`,
  );
  const collector = startProcess(otelcol, [`--config=file:${config}`]);
  let exited = false;
  collector.child.status.then(() => exited = true);
  const stop = async () => {
    await collector[Symbol.asyncDispose]();
    await sink.shutdown();
  };
  try {
    // Ready once its OTLP/HTTP receiver accepts an (empty) export.
    await waitFor("otelcol OTLP/HTTP receiver", async () => {
      if (exited) throw new WaitAbort(`otelcol exited:\n${collector.output()}`);
      try {
        const r = await fetch(`http://127.0.0.1:${httpPort}/v1/traces`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        await r.body?.cancel();
        return r.status === 200;
      } catch {
        return false;
      }
    }, { timeoutMs: 30_000 });
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    grpcEndpoint: `127.0.0.1:${grpcPort}`,
    httpEndpoint: `127.0.0.1:${httpPort}`,
    spans: () => [...received],
    waitFor: async <T>(
      what: string,
      pick: (spans: ReceivedSpan[]) => T | undefined,
      { timeoutMs = 30_000 }: { timeoutMs?: number } = {},
    ) => {
      try {
        return await waitFor(what, () => pick(received), { timeoutMs });
      } catch (e) {
        // What did arrive, by service and name, says which part is missing.
        const seen = new Map<string, number>();
        for (const s of received) {
          const k = `${s.service}/${s.name}${s.parentSpanId ? "" : " (root)"}`;
          seen.set(k, (seen.get(k) ?? 0) + 1);
        }
        throw new Error(`${(e as Error).message}; received: ${JSON.stringify([...seen])}`);
      }
    },
    output: collector.output,
    [Symbol.asyncDispose]: stop,
  };
}
