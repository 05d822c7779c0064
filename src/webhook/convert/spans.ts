/**
 * The conversion endpoint's spans (docs/observability.md#tracing): one `ConversionReview` server
 * span per traced request (attribute `target`; a Failure review or a non-200 answer marks it
 * failed with the message), and one `Convert` child per object converted (`target`,
 * `from_version`, `to_version`; a conversion error is recorded on it). The review span lives on
 * the thread that read the request; the `Convert` spans on the thread that converts (the main
 * thread, or a conversion Worker given the review span's `traceparent`).
 *
 * Nothing here runs for a request that is not traced: the callers hold `undefined` instead of a
 * span or parent and test it once.
 */
import type { Span } from "@opentelemetry/api";
import {
  contextOf,
  parseTraceparent,
  processTracer,
  recordFailure,
  remoteContext,
  type RequestSampler,
  type SpanParent,
  startChild,
} from "../../obs/tracing.ts";
import type { ConvertAnswer } from "./answer.ts";

export const REVIEW_SPAN = "ConversionReview";
export const CONVERT_SPAN = "Convert";

/** A traced request: its review span, and where its `Convert` spans hang on this thread. */
export interface ReviewTrace {
  span: Span;
  spans: SpanParent;
}

/** The review span of a request for `target`, or undefined when the request is not traced. */
export function startReviewSpan(
  sampler: RequestSampler,
  target: string,
  traceparent: string | undefined,
): ReviewTrace | undefined {
  const span = sampler.startRoot(REVIEW_SPAN, traceparent, { target });
  return span === undefined
    ? undefined
    : { span, spans: { tracer: sampler.tracer, context: contextOf(span) } };
}

/** A Worker's parent for the review span whose `traceparent` it was handed. */
export function workerParent(traceparent: string | undefined): SpanParent | undefined {
  const p = parseTraceparent(traceparent);
  return p === undefined ? undefined : { tracer: processTracer(), context: remoteContext(p) };
}

/** One object's `Convert` span. */
export function startConvertSpan(
  parent: SpanParent,
  target: string,
  from: string,
  to: string,
): Span {
  return startChild(parent, CONVERT_SPAN, { target, from_version: from, to_version: to });
}

/** Ends an object's span; a conversion error is recorded on it. */
export function endConvertSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    recordFailure(span, error instanceof Error ? error.message : String(error), error);
  }
  span.end();
}

/** Ends the review span with what was answered. */
export function endReviewSpan(span: Span, answer: ConvertAnswer): void {
  span.setAttribute("http.response.status_code", answer.status);
  if (answer.result !== undefined) span.setAttribute("result", answer.result);
  if (answer.status !== 200 || (answer.result !== undefined && answer.result !== "success")) {
    recordFailure(span, answer.message ?? `answered ${answer.status}`);
  }
  span.end();
}
