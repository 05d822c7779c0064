/**
 * `convctl convert`: convert one object to another version through the hub and print it with
 * `apiVersion` stamped, as the webhook would return it.
 */
import {
  analyze,
  ConversionError,
  createRouter,
  type JsonObject,
  versionOf,
} from "../engine/mod.ts";
import { CliError, outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { requireCleanAnalysis, requireGroup } from "./gates.ts";
import { loadSingleObject } from "./load.ts";
import { sortKeysDeep, toJson, toYaml } from "./output.ts";

export const convertCommand = defineCommand({
  name: "convert",
  usage:
    "convctl convert -c CONFIG (-x XRD | --crd CRD) --sample FILE --to V [--from V] [-o yaml|json]",
  summary: "Convert one object to another version and print it.",
  target: "config+schema",
  flags: [
    {
      name: "sample",
      kind: "string",
      value: "FILE",
      help: "file holding exactly one object (required)",
    },
    { name: "to", kind: "string", value: "V", help: "target version (required)" },
    {
      name: "from",
      kind: "string",
      value: "V",
      help: "source version; needed when the sample has no apiVersion",
      default: "the sample's version",
    },
    outputFlag("yaml or json", "yaml"),
  ],
  required: ["sample", "to"],
  run: async ({ flags, source, spec }): Promise<JsonObject> => {
    const analysis = analyze(source, spec);
    requireCleanAnalysis(analysis, "cannot convert");

    const sample = await loadSingleObject(flags.string("sample")!);
    const to = flags.string("to")!;
    let from = flags.string("from");
    if (from === undefined) {
      const apiVersion = sample.apiVersion;
      if (typeof apiVersion !== "string" || apiVersion === "") {
        throw new CliError(`sample ${flags.string("sample")} has no apiVersion; pass --from`);
      }
      from = versionOf(apiVersion);
    }
    requireGroup(source);

    let routed: JsonObject;
    try {
      routed = createRouter(analysis).route(sample, from, to);
    } catch (e) {
      if (e instanceof ConversionError) throw new CliError(`conversion failed: ${e.message}`);
      throw e;
    }
    return { ...routed, apiVersion: `${source.group}/${to}` };
  },
  output: {
    formats: { yaml: (o) => toYaml(o), json: (o) => toJson(sortKeysDeep(o)) },
    default: "yaml",
  },
});
