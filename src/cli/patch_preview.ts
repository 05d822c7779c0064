/**
 * `convctl patch-preview`: the server-side apply object the manager writes to point a target's
 * `spec.conversion` at a webhook Service, rendered offline by the manager's own builder.
 */
import { buildWebhookPatch, type TargetKind, webhookPath } from "../api/conversion_patch.ts";
import { targetNameOf, XRD_CONFIG_KIND } from "../api/mod.ts";
import { analyze } from "../engine/mod.ts";
import { textToBase64 } from "../lib/base64.ts";
import { CliError } from "./args.ts";
import { defineCommand } from "./command.ts";
import { requireCleanAnalysis } from "./gates.ts";
import { parseInteger } from "./int_flag.ts";
import { toYaml } from "./output.ts";

/** Standard base64, padded, nothing else. */
function isBase64(text: string): boolean {
  if (text === "" || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return false;
  try {
    atob(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * `--ca-bundle` as the base64 the target holds: PEM text is encoded; base64 (whitespace ignored)
 * is kept; anything else is encoded as given for an XRD and refused for a CRD.
 */
export function normalizeCaBundle(bundle: string, kind: TargetKind): string {
  if (bundle.includes("-----BEGIN")) return textToBase64(bundle);
  const compact = bundle.replace(/\s+/g, "");
  if (isBase64(compact)) return compact;
  if (kind === "CRD") {
    throw new CliError("--ca-bundle is neither PEM nor base64 (a CRD's caBundle is base64 bytes)");
  }
  return textToBase64(bundle);
}

export const patchPreviewCommand = defineCommand({
  name: "patch-preview",
  usage: "convctl patch-preview -c CONFIG --service-name N --service-namespace NS --ca-bundle B " +
    "[--path P] [--port N] [--plan-hash H] [-x XRD | --crd CRD]",
  summary: "Print the spec.conversion patch the operator would apply to the config's target.",
  target: "config",
  flags: [
    { name: "service-name", kind: "string", value: "N", help: "webhook Service name (required)" },
    {
      name: "service-namespace",
      kind: "string",
      value: "NS",
      help: "webhook Service namespace (required)",
    },
    {
      name: "ca-bundle",
      kind: "string",
      value: "B",
      help: "CA bundle the apiserver verifies the webhook with: base64 or PEM (required)",
    },
    {
      name: "path",
      kind: "string",
      value: "P",
      help: "webhook path",
      default: "/convert/<target>",
    },
    {
      name: "port",
      kind: "string",
      value: "N",
      help: "Service port (0 means 443)",
      default: "443",
    },
    {
      name: "plan-hash",
      kind: "string",
      value: "H",
      help: "value of the plan-hash annotation",
      default: '""',
    },
  ],
  required: ["service-name", "service-namespace", "ca-bundle"],
  options: (flags) => ({
    port: parseInteger("port", flags.string("port"), 443, [0, 65535]) || 443,
  }),
  run: ({ flags, config, schema, spec, options }) => {
    if (schema !== undefined) requireCleanAnalysis(analyze(schema.source, spec), "cannot patch");
    const targetKind: TargetKind = config.kind === XRD_CONFIG_KIND ? "XRD" : "CRD";
    const targetName = targetNameOf(config.config);
    return buildWebhookPatch({
      targetKind,
      targetName,
      // The manager writes an XRD at the version its live object allows; the XRD file stands in.
      liveTarget: schema?.raw,
      configName: config.name,
      planHash: flags.string("plan-hash") ?? "",
      service: {
        name: flags.string("service-name")!,
        namespace: flags.string("service-namespace")!,
        path: flags.string("path") ?? webhookPath(targetName),
        port: options.port,
      },
      caBundle: normalizeCaBundle(flags.string("ca-bundle")!, targetKind),
      conversionReviewVersions: config.config.spec.conversionReviewVersions,
    });
  },
  output: { formats: { yaml: (patch) => toYaml(patch) }, default: "yaml" },
});
