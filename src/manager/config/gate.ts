/**
 * What a gate is: one step of a config's reconcile, run in the order of `CONFIG_GATES`
 * (docs/design/config-reconcile.md#reconcile-order-and-gates). A gate either lets the reconcile go
 * on (`undefined`) or ends it with a result, having written the status it stopped at; a transient
 * failure throws (the controller retries with backoff).
 */
import type { AnalysisResult } from "../../engine/mod.ts";
import type { ConversionWebhookServer } from "../../api/mod.ts";
import type { JsonObject } from "../../lib/json.ts";
import { StatusEditor } from "./status_editor.ts";
import { type ReconcileResult, REQUEUE_APPLIED_MS } from "./types.ts";

/**
 * One reconcile as the gates see it: the status editor plus what earlier gates learned. A field
 * is set by the gate named in its comment and read only by gates after it.
 */
export class GateRun extends StatusEditor {
  /** The target object (gate `target`). */
  targetObject!: JsonObject;
  /** The analysis against the live target (gate `analyzed`). */
  analysis!: AnalysisResult;
  /** `status.schemaHash` of that analysis (gate `analyzed`). */
  schemaHash!: string;
  /** The resolved server (gate `serverResolved`). */
  serverName!: string;
  /** The resolved server differs from the one last applied (gate `serverResolved`). */
  move = false;
  /** The resolved server's object (gate `serverReady`). */
  server!: ConversionWebhookServer;
  /** Namespace of the server's children (gate `serverReady`). */
  serverNamespace!: string;
  /** The CA bundle PEM (gate `caBundle`). */
  caBundlePEM!: string;
  /** The server's Service port (gate `apply`). */
  port!: number;
  /** The timed requeue when every gate passed (gate `propagation` may shorten it). */
  requeueAfter = REQUEUE_APPLIED_MS;
}

/** One named step of the reconcile. */
export interface Gate {
  readonly name: string;
  /** `undefined`: go on to the next gate; a result: the reconcile ends here (status written). */
  pass(run: GateRun): Promise<ReconcileResult | undefined>;
}
