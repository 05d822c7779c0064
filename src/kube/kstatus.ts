/**
 * The summary conditions generic tools read (docs/design/kube.md#readiness-conditions): `Ready`
 * says whether the object reached the state its spec asks for; while it is False exactly one of
 * the two "abnormal-true" conditions says why — `Reconciling` (work in progress, it will get
 * there) or `Stalled` (it will not get there without a change). This is the kstatus convention
 * that `kubectl wait --for=condition=Ready`, Flux's health checks and Argo CD health scripts
 * read. Generic over kinds: the caller decides the state from its own phases.
 */
import {
  type ConditionInput,
  removeCondition,
  setCondition,
  type StatusCondition,
} from "./status.ts";

export const READY = "Ready";
export const RECONCILING = "Reconciling";
export const STALLED = "Stalled";

/** Where an object stands, with the reason and message its `Ready` condition carries. */
export interface Readiness {
  state: "Ready" | "Reconciling" | "Stalled";
  reason: string;
  message: string;
}

/**
 * `conditions` with `Ready`, `Reconciling` and `Stalled` set from `readiness`, each stamped with
 * `observedGeneration`: Ready ⇒ `Ready=True` and neither abnormal condition; Reconciling ⇒
 * `Ready=False` and `Reconciling=True`; Stalled ⇒ `Ready=False` and `Stalled=True`. The absent
 * abnormal condition is removed (kstatus reads absent as False). Same reason and message on both
 * conditions set; transition times follow {@link setCondition}.
 */
export function withReadiness(
  conditions: readonly StatusCondition[] | undefined,
  readiness: Readiness,
  observedGeneration: number,
  now: number | Date,
): StatusCondition[] {
  const { state, reason, message } = readiness;
  const set = (list: StatusCondition[], type: string, status: ConditionInput["status"]) =>
    setCondition(list, { type, status, reason, message, observedGeneration }, now);
  let out = set([...(conditions ?? [])], READY, state === "Ready" ? "True" : "False");
  for (const abnormal of [RECONCILING, STALLED] as const) {
    out = abnormal === state ? set(out, abnormal, "True") : removeCondition(out, abnormal);
  }
  return out;
}
