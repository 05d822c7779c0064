/**
 * A tracer that records the spans it starts (name, attributes, parent, status, exceptions), for
 * the tests that check span shapes without an exporter: the same `@opentelemetry/api` calls the
 * product makes reach it instead of Deno's tracer.
 */
import {
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  trace,
  type Tracer,
} from "@opentelemetry/api";

export interface RecordedSpan {
  name: string;
  attributes: Attributes;
  traceId: string;
  spanId: string;
  /** The parent's span id, "" for a root. */
  parentSpanId: string;
  status: SpanStatus | undefined;
  exceptions: string[];
  ended: boolean;
}

const hex = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0"))
    .join("");

class RecordingSpan implements Span {
  readonly #ctx: SpanContext;
  constructor(readonly record: RecordedSpan) {
    this.#ctx = { traceId: record.traceId, spanId: record.spanId, traceFlags: 1 };
  }
  spanContext(): SpanContext {
    return this.#ctx;
  }
  setAttribute(key: string, value: AttributeValue): this {
    this.record.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    Object.assign(this.record.attributes, attributes);
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.record.status = status;
    return this;
  }
  updateName(name: string): this {
    this.record.name = name;
    return this;
  }
  end(): void {
    this.record.ended = true;
  }
  isRecording(): boolean {
    return !this.record.ended;
  }
  recordException(exception: Exception): void {
    this.record.exceptions.push(exception instanceof Error ? exception.message : String(exception));
  }
}

export class RecordingTracer implements Tracer {
  readonly spans: RecordedSpan[] = [];

  startSpan(name: string, options: SpanOptions = {}, context?: Context): Span {
    const parent = context === undefined ? undefined : trace.getSpanContext(context);
    const record: RecordedSpan = {
      name,
      attributes: { ...options.attributes },
      traceId: parent?.traceId ?? hex(16),
      spanId: hex(8),
      parentSpanId: parent?.spanId ?? "",
      status: undefined,
      exceptions: [],
      ended: false,
    };
    this.spans.push(record);
    return new RecordingSpan(record);
  }

  startActiveSpan(): never {
    throw new Error("not used by the product");
  }

  named(name: string): RecordedSpan[] {
    return this.spans.filter((s) => s.name === name);
  }
}
