/**
 * A minimal TLS conversion webhook for e2e tests: answers apiextensions.k8s.io/v1
 * ConversionReviews with a caller-supplied converter, records what it was asked, and can be told
 * to misbehave so tests can prove the apiserver surfaces webhook errors.
 */
import type { KeyPair } from "./certs.ts";

/** A JSON object (Kubernetes objects are JSON). */
export type Obj = { [key: string]: unknown };

/** Converts one object to `desiredAPIVersion`; a throw becomes a `Failure` review. */
export type Converter = (obj: Obj, desiredAPIVersion: string) => Obj;

/**
 * How the webhook answers:
 * - "ok": the converter's result (or Failure with the converter's error message);
 * - "failure": `result.status: Failure` with message {@link FAILURE_MESSAGE};
 * - "wrong-uid": a Success review for another uid;
 * - "drop-objects": a Success review with no convertedObjects;
 * - "unconverted": the input objects echoed back, apiVersion unchanged.
 */
export type WebhookMode = "ok" | "failure" | "wrong-uid" | "drop-objects" | "unconverted";

export const FAILURE_MESSAGE = "e2e webhook: conversion refused on purpose";

/** One ConversionReview the webhook answered. */
export interface ReviewRecord {
  uid: string;
  desiredAPIVersion: string;
  /** apiVersion of each input object, in order. */
  from: string[];
  mode: WebhookMode;
  /** "Success" or "Failure" (what the webhook answered; in "wrong-uid" etc. still "Success"). */
  status: "Success" | "Failure";
}

export interface ConversionWebhook extends AsyncDisposable {
  /** https://<host>:<port>/convert */
  readonly url: string;
  readonly port: number;
  mode: WebhookMode;
  /** Every review answered, oldest first. */
  readonly reviews: ReviewRecord[];
  close(): Promise<void>;
}

/**
 * The response body as ONE chunk of a ReadableStream: fixed bodies over ~1 KB stall ~44 ms per
 * response on TLS + HTTP/1.1 in Deno.serve (Nagle's algorithm against the peer's delayed ACK).
 */
function jsonResponse(value: unknown, status = 200): Response {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes);
      c.close();
    },
  });
  return new Response(body, { status, headers: { "content-type": "application/json" } });
}

function review(uid: string, convertedObjects: Obj[] | undefined, message?: string): Obj {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    response: message === undefined
      ? { uid, convertedObjects, result: { status: "Success" } }
      : { uid, result: { status: "Failure", message } },
  };
}

/**
 * Serves ConversionReviews with `tls` on a random port of `hostname` (default 127.0.0.1); the URL
 * names `publicHost` (default: hostname), the address the apiserver reaches this process at.
 */
export function startConversionWebhook(
  opts: { tls: KeyPair; hostname?: string; publicHost?: string; convert: Converter },
): ConversionWebhook {
  const hostname = opts.hostname ?? "127.0.0.1";
  const publicHost = opts.publicHost ?? hostname;
  const reviews: ReviewRecord[] = [];
  const state = { mode: "ok" as WebhookMode };

  const handler = async (req: Request): Promise<Response> => {
    if (req.method !== "POST" || !new URL(req.url).pathname.startsWith("/convert")) {
      return jsonResponse({ error: "not found" }, 404);
    }
    let body: Obj;
    try {
      body = await req.json();
    } catch {
      return jsonResponse({ error: "body is not JSON" }, 400);
    }
    const request = body.request as Obj | undefined;
    if (body.kind !== "ConversionReview" || !request || typeof request.uid !== "string") {
      return jsonResponse({ error: "not a ConversionReview" }, 400);
    }
    const uid = request.uid;
    const desired = String(request.desiredAPIVersion);
    const objects = (request.objects ?? []) as Obj[];
    const mode = state.mode;
    const rec: ReviewRecord = {
      uid,
      desiredAPIVersion: desired,
      from: objects.map((o) => String(o.apiVersion)),
      mode,
      status: "Success",
    };
    reviews.push(rec);
    switch (mode) {
      case "failure":
        rec.status = "Failure";
        return jsonResponse(review(uid, undefined, FAILURE_MESSAGE));
      case "wrong-uid":
        return jsonResponse(review(crypto.randomUUID(), objects.map(() => ({}))));
      case "drop-objects":
        return jsonResponse(review(uid, []));
      case "unconverted":
        return jsonResponse(review(uid, objects));
      case "ok": {
        try {
          return jsonResponse(review(uid, objects.map((o) => opts.convert(o, desired))));
        } catch (e) {
          rec.status = "Failure";
          return jsonResponse(review(uid, undefined, (e as Error).message));
        }
      }
    }
  };

  const server = Deno.serve({
    hostname,
    port: 0,
    cert: opts.tls.cert,
    key: opts.tls.key,
    onListen: () => {}, // keep test output clean
  }, handler);
  const port = server.addr.port;
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= server.shutdown());
  const urlHost = publicHost.includes(":") ? `[${publicHost}]` : publicHost;
  return {
    url: `https://${urlHost}:${port}/convert`,
    port,
    get mode() {
      return state.mode;
    },
    set mode(m: WebhookMode) {
      state.mode = m;
    },
    reviews,
    close,
    [Symbol.asyncDispose]: close,
  };
}
