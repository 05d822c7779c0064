/**
 * The manager's event recorder (docs/design/kube.md#events): Events on dco's objects, reported as
 * `declarative-conversion-operator` by instance `declarative-conversion-operator-<pod>` (the
 * `<controller>-<hostname>` shape client-go gives `reportingInstance`; the pod name comes from
 * `POD_NAME`, else `HOSTNAME`, since the manager has no permission to ask the system). A failed
 * write is logged as a warning and dropped: an Event is never worth a retry.
 */
import { clientEventSink, type EventInput, EventRecorder, referenceOf } from "../kube/events.ts";
import type { KubeClient } from "../kube/mod.ts";
import { createLogger } from "../obs/log.ts";
import { FIELD_MANAGER } from "../kube/status.ts";
import type { AdmissionDenial } from "./admission/http.ts";

/** A started recorder writing through `client` (stop it on shutdown). */
export function managerEventRecorder(client: KubeClient): EventRecorder {
  const log = createLogger("manager.events");
  const host = Deno.env.get("POD_NAME") || Deno.env.get("HOSTNAME") || "manager";
  const recorder = new EventRecorder({
    sink: clientEventSink(client),
    controller: FIELD_MANAGER,
    instance: `${FIELD_MANAGER}-${host}`,
    onError: (e, event) =>
      log.warn("event not recorded", {
        reason: event.reason,
        regarding: event.regarding.name,
        error: e instanceof Error ? e.message : String(e),
      }),
  });
  recorder.start();
  return recorder;
}

/**
 * The Warning Event of a refused change to an existing object: on that object, reason the
 * denial's (`Forbidden`), action the refused operation (`Update`, `Delete`), note the message
 * the user saw. Repeats of the same refusal become one Event series.
 */
export function admissionDenialEvent(denial: AdmissionDenial): EventInput {
  const meta = denial.object.metadata;
  return {
    regarding: referenceOf({
      ...denial.object,
      metadata: {
        name: typeof meta.name === "string" ? meta.name : undefined,
        namespace: typeof meta.namespace === "string" ? meta.namespace : undefined,
        uid: typeof meta.uid === "string" ? meta.uid : undefined,
      },
    }),
    type: "Warning",
    reason: denial.reason,
    action: denial.operation === "UPDATE" ? "Update" : "Delete",
    note: denial.message,
  };
}
