/**
 * `convctl convert`: convert objects to another version through the hub and print them with
 * `apiVersion` stamped, as the webhook would return them. The input (`--sample FILE`, `-` for
 * stdin) is one object, a List of them or a multi-document stream; the output has the same shape.
 * Input that is not the target's, or not valid at its version, is refused before any conversion.
 */
import {
  type AnalysisResult,
  analyze,
  ConversionError,
  createRouter,
  type JsonObject,
  type JsonValue,
  type SchemaSource,
} from "../engine/mod.ts";
import { didYouMean } from "../lib/edit_distance.ts";
import { CliError, outputFlag, VALIDATE_INPUT_FLAGS, validateInputOf } from "./args.ts";
import { defineCommand } from "./command.ts";
import { requireCleanAnalysis, requireGroup, suggestCommandLine } from "./gates.ts";
import { loadConvertInput, requireValidSamples, type Sample } from "./load.ts";
import { sortKeysDeep, toJson, toYaml } from "./output.ts";

/** The versions a config can convert between: the hub and its spokes, in schema order. */
export function convertibleVersions(source: SchemaSource, analysis: AnalysisResult): string[] {
  const configured = new Set([analysis.hubVersion, ...analysis.spokes.map((s) => s.version)]);
  return source.versions.map((v) => v.name).filter((v) => configured.has(v));
}

/** An unknown version is refused naming the convertible ones (and the closest, if any). */
function requireConvertible(version: string, what: string, convertible: readonly string[]): void {
  if (convertible.includes(version)) return;
  throw new CliError(
    `${what} ${JSON.stringify(version)}${didYouMean(version, convertible)}: ` +
      `the config converts ${convertible.join(", ")}`,
  );
}

/** The converted documents, in input order (a List stays one document). */
interface Converted {
  documents: JsonValue[];
}

function renderAll(c: Converted, render: (v: JsonValue) => string, separator: string): string {
  return c.documents.map(render).join(separator);
}

export const convertCommand = defineCommand({
  name: "convert",
  usage:
    "convctl convert -c CONFIG (-x XRD | --crd CRD) --sample FILE --to V [--from V] [-o yaml|json]",
  summary: "Convert objects (one, a List, or a YAML stream) to another version and print them.",
  target: "config+schema",
  flags: [
    {
      name: "sample",
      kind: "string",
      value: "FILE",
      help:
        "the objects to convert: one, a List, or several YAML documents; - reads stdin (required)",
    },
    { name: "to", kind: "string", value: "V", help: "target version (required)" },
    {
      name: "from",
      kind: "string",
      value: "V",
      help: "source version; needed when an object has no apiVersion",
      default: "each object's version",
    },
    outputFlag("yaml or json", "yaml"),
    ...VALIDATE_INPUT_FLAGS,
  ],
  required: ["sample", "to"],
  groups: [{ atMostOne: ["validate-input", "no-validate-input"] }],
  run: async ({ flags, config, schema, source, spec }): Promise<Converted> => {
    const analysis = analyze(source, spec);
    requireCleanAnalysis(analysis, "cannot convert", suggestCommandLine(config, schema));
    requireGroup(source);
    const convertible = convertibleVersions(source, analysis);
    const to = flags.string("to")!;
    requireConvertible(to, "unknown --to version", convertible);
    const from = flags.string("from");
    if (from !== undefined) requireConvertible(from, "unknown --from version", convertible);

    const documents = await loadConvertInput(flags.string("sample")!, source, from);
    const samples = documents.flatMap((d) => d.items);
    for (const s of samples) {
      requireConvertible(s.version, `${s.locate?.([]) ?? s.name}: unknown version`, convertible);
    }
    if (validateInputOf(flags)) requireValidSamples(samples, source);

    const router = createRouter(analysis);
    const convert = (s: Sample): JsonObject => {
      try {
        return { ...router.route(s.object, s.version, to), apiVersion: `${source.group}/${to}` };
      } catch (e) {
        if (!(e instanceof ConversionError)) throw e;
        const where = documents.length === 1 && samples.length === 1 ? "" : ` (${s.name})`;
        throw new CliError(`conversion failed${where}: ${e.message}`);
      }
    };
    return {
      documents: documents.map((d) =>
        d.list ? { ...d.value, items: d.items.map(convert) } : convert(d.items[0])
      ),
    };
  },
  output: {
    formats: {
      // One YAML document per input document; JSON as a stream of documents (`jq` reads it).
      yaml: (c) => renderAll(c, (d) => toYaml(d), "---\n"),
      json: (c) => renderAll(c, (d) => toJson(sortKeysDeep(d)), ""),
    },
    default: "yaml",
  },
});
