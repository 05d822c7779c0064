/**
 * `convctl convert` (cli.md §6): convert one object to another version through the hub and print
 * it with `apiVersion` stamped, as the webhook would return it.
 */
import { engineSpecOf } from "../api/mod.ts";
import {
  analyze,
  ConversionError,
  createRouter,
  type JsonObject,
  versionOf,
} from "../engine/mod.ts";
import {
  choice,
  CliError,
  type CommandSpec,
  FLAGS,
  mutuallyExclusive,
  noPositionals,
  oneRequired,
  type ParsedFlags,
  requireFlags,
} from "./args.ts";
import { requireCleanAnalysis } from "./gates.ts";
import { loadSingleObject, loadTarget } from "./load.ts";
import { type Io, sortKeysDeep, toJson, toYaml } from "./output.ts";

export const convertCommand: CommandSpec = {
  name: "convert",
  usage:
    "convctl convert -c CONFIG (-x XRD | --crd CRD) --sample FILE --to V [--from V] [-o yaml|json]",
  summary: "Convert one object to another version and print it.",
  flags: [
    { ...FLAGS.config, help: `${FLAGS.config.help} (required)` },
    FLAGS.xrd,
    FLAGS.crd,
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
    {
      name: "output",
      short: "o",
      kind: "string",
      value: "FORMAT",
      help: "yaml or json",
      default: "yaml",
    },
  ],
};

export async function runConvert(flags: ParsedFlags, io: Io): Promise<number> {
  noPositionals(flags, "convert");
  requireFlags(flags, "config", "sample", "to");
  mutuallyExclusive(flags, "xrd", "crd");
  oneRequired(flags, "xrd", "crd");
  const output = choice("output", flags.string("output"), ["yaml", "json"] as const, "yaml");
  const { config, schema } = await loadTarget(flags, "required");
  const source = schema!.source;
  const analysis = analyze(source, engineSpecOf(config.config));
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
  if (source.group === "") throw new CliError(`${source.kind} file has no spec.group`);

  let routed: JsonObject;
  try {
    routed = createRouter(analysis).route(sample, from, to);
  } catch (e) {
    if (e instanceof ConversionError) throw new CliError(`conversion failed: ${e.message}`);
    throw e;
  }
  const converted: JsonObject = { ...routed, apiVersion: `${source.group}/${to}` };
  io.out(output === "json" ? toJson(sortKeysDeep(converted)) : toYaml(converted));
  return 0;
}
