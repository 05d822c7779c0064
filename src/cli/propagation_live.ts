/**
 * `convctl test --live --verify-propagation` (XRD targets): whether the conversion webhook the
 * live XRD points at reached every CRD Crossplane generates from it (composite, and claim when the
 * XRD offers claims) — the operator's `ConversionPropagated` comparison (src/api/propagation.ts),
 * made from the cluster as it is now. When the config of the same name is applied in the cluster,
 * its own `ConversionPropagated` is shown beside the verdict, and whether the two agree; and the
 * webhook its status says it applied (`webhookPath`, `webhookPort`) is compared with the XRD's.
 */
import {
  describeConversion,
  type ExpectedConversion,
  expectedConversionOf,
  type NamedVerdict,
  propagationOutcome,
  verifyGeneratedCRD,
} from "../api/propagation.ts";
import { XRD_CONFIG_KIND, type XRDConversionConfigStatus } from "../api/mod.ts";
import type { GeneratedCRD } from "../engine/source.ts";
import { CRD_RESOURCE } from "../kube/resources.ts";
import { CliError } from "./args.ts";
import type { Cluster } from "./cluster.ts";
import { readClusterConfig, readObject, XRD_REF } from "./cluster_reads.ts";
import type { PropagationReport } from "./test_report.ts";

/**
 * Whether the webhook a config's status says it applied (`webhookPath`, `webhookPort`) is the one
 * the XRD points at; undefined when the status says neither, or the XRD points at no Service.
 */
export function statusWebhookMismatch(
  status: Pick<XRDConversionConfigStatus, "webhookPath" | "webhookPort"> | undefined,
  expected: ExpectedConversion | string,
): { matches: boolean; message?: string } | undefined {
  if (typeof expected === "string" || "url" in expected) return undefined;
  if (status?.webhookPath === undefined && status?.webhookPort === undefined) return undefined;
  const diffs: string[] = [];
  if (status.webhookPath !== undefined && status.webhookPath !== expected.path) {
    diffs.push(`webhookPath ${status.webhookPath}, the XRD's path ${expected.path}`);
  }
  if (status.webhookPort !== undefined && status.webhookPort !== expected.port) {
    diffs.push(`webhookPort ${status.webhookPort}, the XRD's port ${expected.port}`);
  }
  return diffs.length === 0
    ? { matches: true }
    : { matches: false, message: `the config's status says ${diffs.join("; ")}` };
}

/** Reads the XRD `xrd`, its generated CRDs and the config `configName`, and compares them. */
export async function checkPropagation(
  cluster: Cluster,
  xrd: string,
  crds: readonly GeneratedCRD[],
  configName: string,
): Promise<PropagationReport> {
  const live = await readObject(cluster, XRD_REF, xrd, "XRD");
  if (live === undefined) throw new CliError(`cluster ${cluster.name}: XRD ${xrd} not found`);
  const expected = await expectedConversionOf(live);
  const verdicts: NamedVerdict[] = [];
  const report: PropagationReport = {
    propagated: false,
    reason: "NotPropagated",
    message: "",
    xrd,
    crds: [],
  };
  for (const g of crds) {
    const crd = await readObject(cluster, CRD_RESOURCE, g.name, "CustomResourceDefinition");
    const verdict = typeof expected === "string"
      ? { state: "mismatch" as const, observedCABundleHash: "", message: expected }
      : await verifyGeneratedCRD(crd, expected);
    verdicts.push({ name: g.name, verdict });
    report.crds.push({
      name: g.name,
      role: g.role,
      state: verdict.state,
      observedCABundleHash: verdict.observedCABundleHash,
      ...(verdict.message !== "" ? { message: verdict.message } : {}),
    });
  }
  const outcome = typeof expected === "string"
    ? { reason: "NotPropagated", message: `XRD ${xrd}: ${expected}` }
    : propagationOutcome(`XRD ${xrd}`, verdicts);
  report.propagated = outcome.reason === "Propagated";
  report.reason = outcome.reason;
  report.message = outcome.message;
  if (typeof expected !== "string") report.webhook = describeConversion(expected);

  if (configName !== "") {
    const config = await readClusterConfig(cluster, XRD_CONFIG_KIND, configName);
    if (config === undefined) report.config = { name: configName, found: false };
    else {
      const status = config.status as XRDConversionConfigStatus | undefined;
      const c = (status?.conditions ?? []).find((c) => c.type === "ConversionPropagated");
      const webhook = statusWebhookMismatch(status, expected);
      report.config = {
        name: configName,
        found: true,
        ...(c !== undefined
          ? {
            condition: {
              status: c.status,
              ...(c.reason ? { reason: c.reason } : {}),
              ...(c.message ? { message: c.message } : {}),
            },
            agrees: (c.status === "True") === report.propagated,
          }
          : {}),
        ...(webhook !== undefined ? { webhook } : {}),
      };
    }
  }
  return report;
}
