/**
 * XRD only: propagation verification (docs/design/config-reconcile.md#xrd-propagation). Crossplane
 * copies an XRD's `spec.conversion` into the CRDs it generates from it; after every apply each of
 * them is read and compared with what was applied, and `ConversionPropagated` and
 * `status.generatedCRDs` say what was seen. The operator reports; it never repairs.
 */
import { generatedCRDNames } from "../../engine/mod.ts";
import { base64ToBytes } from "../../lib/base64.ts";
import { isJsonObject, type JsonObject } from "../../lib/json.ts";
import { rfc3339 } from "../../lib/time.ts";
import type { GateRun } from "./gate.ts";
import { sha256Hex } from "./hashes.ts";
import { conversionOf } from "./target.ts";
import type { GeneratedCRDStatus } from "./types.ts";

/** Reasons of `ConversionPropagated`, in the order they win. */
export type PropagationReason =
  | "GeneratedCRDNotFound"
  | "NotPropagated"
  | "CABundleStale"
  | "Propagated";

/** What was applied to the XRD, as the generated CRDs must carry it. */
export interface AppliedConversion {
  serviceName: string;
  serviceNamespace: string;
  path: string;
  port: number;
  conversionReviewVersions: readonly string[];
  /** `"sha256:" + hex` of the raw CA bundle bytes applied. */
  caBundleHash: string;
}

/** The verdict on one generated CRD. */
export interface GeneratedCRDVerdict {
  state: "propagated" | "notFound" | "mismatch" | "stale";
  observedCABundleHash: string;
  message: string;
}

/** `spec.conversionReviewVersions` as applied (absent or empty ⇒ `["v1"]`). */
export function reviewVersionsOf(v: readonly string[] | undefined): string[] {
  return v !== undefined && v.length > 0 ? [...v] : ["v1"];
}

function base64Bytes(b64: string): Uint8Array | undefined {
  try {
    return base64ToBytes(b64);
  } catch {
    return undefined;
  }
}

/**
 * Compares a generated CRD's `spec.conversion` with what was applied: strategy `Webhook`
 * (anything else, `None` included, is a mismatch), a service client config, service
 * name/namespace, path, port (absent ⇒ 443) and the review versions as sets; then the caBundle by
 * SHA-256 of the raw bytes — a caBundle-only difference is *stale*.
 * `crd` undefined ⇒ not found; an `Error` ⇒ a mismatch carrying the error.
 */
export async function verifyGeneratedCRD(
  crd: JsonObject | Error | undefined,
  expected: AppliedConversion,
): Promise<GeneratedCRDVerdict> {
  if (crd === undefined) {
    return { state: "notFound", observedCABundleHash: "", message: "not found" };
  }
  if (crd instanceof Error) {
    return { state: "mismatch", observedCABundleHash: "", message: `read failed: ${crd.message}` };
  }
  const conversion = conversionOf(crd);
  const webhook = isJsonObject(conversion.webhook) ? conversion.webhook : {};
  const clientConfig = isJsonObject(webhook.clientConfig) ? webhook.clientConfig : {};
  const rawCA = typeof clientConfig.caBundle === "string" ? clientConfig.caBundle : "";
  const caBytes = rawCA === "" ? undefined : base64Bytes(rawCA);
  const observedCABundleHash = caBytes === undefined ? "" : await sha256Hex(caBytes);
  const mismatch = (message: string): GeneratedCRDVerdict => ({
    state: "mismatch",
    observedCABundleHash,
    message,
  });
  const strategy = typeof conversion.strategy === "string" ? conversion.strategy : "None";
  if (strategy !== "Webhook") {
    return mismatch(`conversion strategy is ${JSON.stringify(strategy)}, not "Webhook"`);
  }
  if (!isJsonObject(clientConfig.service)) return mismatch("no service client config");
  const svc = clientConfig.service;
  const field = (what: string, got: unknown, want: unknown) =>
    got === want
      ? undefined
      : `${what} is ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
  const diff = field("service name", svc.name, expected.serviceName) ??
    field("service namespace", svc.namespace, expected.serviceNamespace) ??
    field("service path", svc.path, expected.path) ??
    field("service port", svc.port ?? 443, expected.port);
  if (diff !== undefined) return mismatch(diff);
  const got = new Set(
    Array.isArray(webhook.conversionReviewVersions)
      ? webhook.conversionReviewVersions.filter((v) => typeof v === "string")
      : [],
  );
  const want = new Set(expected.conversionReviewVersions);
  if (got.size !== want.size || [...want].some((v) => !got.has(v))) {
    return mismatch(
      `conversionReviewVersions are ${JSON.stringify([...got])}, expected ${
        JSON.stringify([...want])
      }`,
    );
  }
  if (observedCABundleHash !== expected.caBundleHash) {
    return {
      state: "stale",
      observedCABundleHash,
      message: `caBundle ${
        observedCABundleHash || "(none)"
      } differs from the applied ${expected.caBundleHash}`,
    };
  }
  return { state: "propagated", observedCABundleHash, message: "" };
}

/**
 * Reads every CRD Crossplane generates from the XRD, compares it with what was applied, rewrites
 * `status.generatedCRDs` and `ConversionPropagated`, and records the metrics. Returns whether the
 * condition is True. Never gates the phase.
 */
export async function verifyPropagation(
  run: GateRun,
  xrd: JsonObject,
  expected: AppliedConversion,
): Promise<boolean> {
  const { deps, status } = run;
  const label = run.targetLabel;
  const wasPropagated =
    run.config.status?.conditions?.some((c) =>
      c.type === "ConversionPropagated" && c.status === "True"
    ) ?? false;
  const finish = (reason: PropagationReason, message: string): boolean => {
    const ok = reason === "Propagated";
    run.cond({ type: "ConversionPropagated", status: ok ? "True" : "False", reason, message });
    if (ok && !wasPropagated) {
      const appliedCond = status.conditions?.find((c) => c.type === "Applied");
      const since = Date.parse(appliedCond?.lastTransitionTime ?? "");
      const lag = (deps.now() - since) / 1000;
      if (appliedCond?.status === "True" && Number.isFinite(lag) && lag >= 0) {
        deps.metrics?.propagationLag?.(run.target, lag);
      }
    }
    deps.metrics?.conversionPropagated?.(run.target, ok);
    return ok;
  };
  let generated;
  try {
    generated = generatedCRDNames(xrd);
  } catch (e) {
    status.generatedCRDs = [];
    return finish(
      "NotPropagated",
      `cannot determine the CRDs generated from ${label}: ${
        e instanceof Error ? e.message : String(e)
      }`,
    );
  }
  const observedAt = rfc3339(deps.now());
  const entries: GeneratedCRDStatus[] = [];
  const by: Record<GeneratedCRDVerdict["state"], { name: string; message: string }[]> = {
    propagated: [],
    notFound: [],
    mismatch: [],
    stale: [],
  };
  for (const g of generated) {
    let crd: JsonObject | Error | undefined;
    try {
      if (deps.getGeneratedCRD === undefined) throw new Error("no generated-CRD reader");
      crd = await deps.getGeneratedCRD(g.name);
    } catch (e) {
      crd = e instanceof Error ? e : new Error(String(e));
    }
    const v = await verifyGeneratedCRD(crd, expected);
    by[v.state].push({ name: g.name, message: v.message });
    entries.push({
      name: g.name,
      role: g.role,
      propagated: v.state === "propagated",
      observedCABundleHash: v.observedCABundleHash,
      observedAt,
      message: v.message,
    });
  }
  status.generatedCRDs = entries;
  const names = (xs: { name: string }[]) => xs.map((x) => x.name).join(", ");
  if (by.notFound.length > 0) {
    return finish(
      "GeneratedCRDNotFound",
      `generated CRD ${
        names(by.notFound)
      } of ${label} not found (Crossplane has not rendered it yet)`,
    );
  }
  if (by.mismatch.length > 0) {
    return finish(
      "NotPropagated",
      `generated CRD ${names(by.mismatch)} of ${label} does not carry the applied conversion: ${
        by.mismatch[0].name
      }: ${by.mismatch[0].message}`,
    );
  }
  if (by.stale.length > 0) {
    return finish(
      "CABundleStale",
      `generated CRD ${names(by.stale)} of ${label} carries a stale caBundle: ${
        by.stale[0].name
      }: ${by.stale[0].message}`,
    );
  }
  return finish(
    "Propagated",
    `the conversion of ${label} reached its generated CRD ${names(by.propagated)}`,
  );
}
