/**
 * Whether an XRD's conversion reached the CRDs Crossplane generates from it: one generated CRD's
 * `spec.conversion` compared with the conversion expected of it, and the verdicts of all of them
 * summed up as the `ConversionPropagated` condition reads. Pure; the manager (after every apply)
 * and `convctl test --live --verify-propagation` (from the live XRD) share it.
 */
import { base64ToBytes } from "../lib/base64.ts";
import { isJsonObject, type JsonObject } from "../lib/json.ts";
import { bytesToHex, sha256 } from "../lib/sha256.ts";

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

/** A webhook called by URL (`clientConfig.url`), as an XRD written by hand may point at. */
export interface URLConversion {
  url: string;
  conversionReviewVersions: readonly string[];
  /** `"sha256:" + hex` of the raw CA bundle bytes ("" when none). */
  caBundleHash: string;
}

/** The conversion a generated CRD must carry: by Service (what dco applies) or by URL. */
export type ExpectedConversion = AppliedConversion | URLConversion;

/** The verdict on one generated CRD. */
export interface GeneratedCRDVerdict {
  state: "propagated" | "notFound" | "mismatch" | "stale";
  observedCABundleHash: string;
  message: string;
}

/** `"sha256:" + hex(SHA-256(bytes))`, as `status.generatedCRDs[].observedCABundleHash`. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return "sha256:" + bytesToHex(await sha256(bytes));
}

/** `spec.conversion` of a target or generated CRD ({} when absent). */
export function conversionOf(obj: JsonObject): JsonObject {
  const spec = isJsonObject(obj.spec) ? obj.spec : {};
  return isJsonObject(spec.conversion) ? spec.conversion : {};
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

interface Webhook {
  clientConfig: JsonObject;
  reviewVersions: string[];
  /** `"sha256:" + hex` of the decoded caBundle; "" when there is none (or it is not base64). */
  caBundleHash: string;
}

async function webhookOf(conversion: JsonObject): Promise<Webhook> {
  const webhook = isJsonObject(conversion.webhook) ? conversion.webhook : {};
  const clientConfig = isJsonObject(webhook.clientConfig) ? webhook.clientConfig : {};
  const rawCA = typeof clientConfig.caBundle === "string" ? clientConfig.caBundle : "";
  const caBytes = rawCA === "" ? undefined : base64Bytes(rawCA);
  return {
    clientConfig,
    reviewVersions: Array.isArray(webhook.conversionReviewVersions)
      ? webhook.conversionReviewVersions.filter((v): v is string => typeof v === "string")
      : [],
    caBundleHash: caBytes === undefined ? "" : await sha256Hex(caBytes),
  };
}

const strategyOf = (conversion: JsonObject) =>
  typeof conversion.strategy === "string" ? conversion.strategy : "None";

/**
 * The conversion an XRD points at (its own `spec.conversion`), as its generated CRDs must carry
 * it; a string saying why there is none (strategy not `Webhook`, no client config).
 */
export async function expectedConversionOf(xrd: JsonObject): Promise<ExpectedConversion | string> {
  const conversion = conversionOf(xrd);
  const strategy = strategyOf(conversion);
  if (strategy !== "Webhook") {
    return `the XRD's conversion strategy is ${JSON.stringify(strategy)}, not "Webhook"`;
  }
  const { clientConfig, reviewVersions, caBundleHash } = await webhookOf(conversion);
  const conversionReviewVersions = reviewVersionsOf(reviewVersions);
  if (typeof clientConfig.url === "string") {
    return { url: clientConfig.url, conversionReviewVersions, caBundleHash };
  }
  const svc = isJsonObject(clientConfig.service) ? clientConfig.service : undefined;
  if (svc === undefined || typeof svc.name !== "string" || typeof svc.namespace !== "string") {
    return "the XRD's conversion webhook has no service or url client config";
  }
  return {
    serviceName: svc.name,
    serviceNamespace: svc.namespace,
    path: typeof svc.path === "string" ? svc.path : "",
    port: typeof svc.port === "number" ? svc.port : 443,
    conversionReviewVersions,
    caBundleHash,
  };
}

/** Where the expected webhook is, for messages: `service ns/name:port/path` or the URL. */
export function describeConversion(expected: ExpectedConversion): string {
  return "url" in expected ? expected.url : `service ${expected.serviceNamespace}/` +
    `${expected.serviceName}:${expected.port}${expected.path}`;
}

/**
 * Compares a generated CRD's `spec.conversion` with the expected one: strategy `Webhook`
 * (anything else, `None` included, is a mismatch), the client config (a service: name,
 * namespace, path, port (absent ⇒ 443); or a URL), and the review versions as sets; then the
 * caBundle by SHA-256 of the raw bytes — a caBundle-only difference is *stale*.
 * `crd` undefined ⇒ not found; an `Error` ⇒ a mismatch carrying the error.
 */
export async function verifyGeneratedCRD(
  crd: JsonObject | Error | undefined,
  expected: ExpectedConversion,
): Promise<GeneratedCRDVerdict> {
  if (crd === undefined) {
    return { state: "notFound", observedCABundleHash: "", message: "not found" };
  }
  if (crd instanceof Error) {
    return { state: "mismatch", observedCABundleHash: "", message: `read failed: ${crd.message}` };
  }
  const conversion = conversionOf(crd);
  const { clientConfig, reviewVersions, caBundleHash: observedCABundleHash } = await webhookOf(
    conversion,
  );
  const mismatch = (message: string): GeneratedCRDVerdict => ({
    state: "mismatch",
    observedCABundleHash,
    message,
  });
  const strategy = strategyOf(conversion);
  if (strategy !== "Webhook") {
    return mismatch(`conversion strategy is ${JSON.stringify(strategy)}, not "Webhook"`);
  }
  const field = (what: string, got: unknown, want: unknown) =>
    got === want
      ? undefined
      : `${what} is ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
  let diff: string | undefined;
  if ("url" in expected) {
    diff = field("webhook url", clientConfig.url, expected.url);
  } else {
    if (!isJsonObject(clientConfig.service)) return mismatch("no service client config");
    const svc = clientConfig.service;
    diff = field("service name", svc.name, expected.serviceName) ??
      field("service namespace", svc.namespace, expected.serviceNamespace) ??
      field("service path", svc.path, expected.path) ??
      field("service port", svc.port ?? 443, expected.port);
  }
  if (diff !== undefined) return mismatch(diff);
  const got = new Set(reviewVersions);
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
      message: `caBundle ${observedCABundleHash || "(none)"} differs from the applied ${
        expected.caBundleHash || "(none)"
      }`,
    };
  }
  return { state: "propagated", observedCABundleHash, message: "" };
}

/** One generated CRD and its verdict. */
export interface NamedVerdict {
  name: string;
  verdict: GeneratedCRDVerdict;
}

/**
 * `ConversionPropagated` from the verdicts on every generated CRD of the XRD `label`, first match
 * wins: any not found, any mismatch (naming the CRDs and the first detail), any stale caBundle,
 * else propagated.
 */
export function propagationOutcome(
  label: string,
  verdicts: readonly NamedVerdict[],
): { reason: PropagationReason; message: string } {
  const of = (state: GeneratedCRDVerdict["state"]) =>
    verdicts.filter((v) => v.verdict.state === state);
  const names = (xs: readonly NamedVerdict[]) => xs.map((x) => x.name).join(", ");
  const notFound = of("notFound"), mismatch = of("mismatch"), stale = of("stale");
  if (notFound.length > 0) {
    return {
      reason: "GeneratedCRDNotFound",
      message: `generated CRD ${
        names(notFound)
      } of ${label} not found (Crossplane has not rendered it yet)`,
    };
  }
  if (mismatch.length > 0) {
    return {
      reason: "NotPropagated",
      message: `generated CRD ${names(mismatch)} of ${label} does not carry the applied ` +
        `conversion: ${mismatch[0].name}: ${mismatch[0].verdict.message}`,
    };
  }
  if (stale.length > 0) {
    return {
      reason: "CABundleStale",
      message: `generated CRD ${names(stale)} of ${label} carries a stale caBundle: ` +
        `${stale[0].name}: ${stale[0].verdict.message}`,
    };
  }
  return {
    reason: "Propagated",
    message: `the conversion of ${label} reached its generated CRD ${names(of("propagated"))}`,
  };
}
