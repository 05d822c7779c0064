/**
 * A conversion Worker: parse → convert → stringify for the requests the pool hands it, with the
 * answer table of src/webhook/convert/answer.ts unchanged (`convertReviewBytes`), against the
 * plan-set version the request was stamped with. Request bytes arrive transferred; the answer's
 * bytes go back transferred; the metrics of the request go back as recorded calls.
 */
/// <reference lib="deno.worker" />
import { createLogger } from "../../obs/log.ts";
import { convertReviewBytes, TEXT_TYPE } from "./answer.ts";
import { type ConvertContext, convertContext } from "./context.ts";
import { MetricsTape } from "./metrics_tape.ts";
import { PlanReplica, takePlanMessage } from "./plan_replica.ts";
import { workerParent } from "./spans.ts";
import { type FromWorker, type ToWorker, transferableAnswer } from "./worker_protocol.ts";

const replica = new PlanReplica();
const tape = new MetricsTape();
let base: ConvertContext | undefined;
const encoder = new TextEncoder();

/** The same clock origin as the main thread's `startedAt`. */
const clock = () => performance.timeOrigin + performance.now();

function post(message: FromWorker, transfer: Transferable[] = []): void {
  self.postMessage(message, transfer);
}

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  if (takePlanMessage(replica, m, (version) => post({ t: "ack", version }))) return;
  switch (m.t) {
    case "init":
      base = {
        ...convertContext({
          registry: new Map(),
          metrics: m.metrics ? tape : undefined,
          logger: createLogger("webhook.convert"),
        }),
        ...m.settings,
        clock,
      } as ConvertContext;
      return;
    case "convert": {
      const entries = replica.lookup(m.version);
      if (base === undefined || entries === undefined) {
        // The pool stamps only versions every Worker acknowledged: this is a bug, not a race.
        const body = encoder.encode(`plan set ${m.version} is not installed in this worker\n`);
        post({ t: "answer", id: m.id, status: 500, contentType: TEXT_TYPE, body, metrics: [] }, [
          body.buffer,
        ]);
        return;
      }
      const outcome = convertReviewBytes(
        { ...base, registry: entries },
        m.target,
        m.body,
        m.startedAt,
        m.traceparent === undefined ? undefined : workerParent(m.traceparent),
      );
      const { body, headRoom } = transferableAnswer(outcome.body, outcome.headRoom);
      post({
        t: "answer",
        id: m.id,
        status: outcome.status,
        contentType: outcome.contentType,
        body,
        headRoom,
        metrics: tape.take(),
        result: outcome.result,
        message: outcome.message,
      }, [body.buffer]);
      return;
    }
  }
};
