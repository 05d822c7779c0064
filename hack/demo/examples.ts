/**
 * The stories under examples/, smallest first, loaded the way convctl loads them: config, schema
 * (`crd.yaml` for a CRDConversionConfig, `xrd.yaml` for an XRDConversionConfig), samples, and the
 * engine's analysis and router.
 */
import { engineSpecOf } from "../../src/api/mod.ts";
import { CliError } from "../../src/cli/args.ts";
import {
  loadConfig,
  type LoadedConfig,
  type LoadedSchema,
  loadSamples,
  loadSchema,
  type Sample,
} from "../../src/cli/load.ts";
import { formatSpokeDiagnostic } from "../../src/cli/output.ts";
import {
  type AnalysisResult,
  analyze,
  createRouter,
  type Router,
  structuralError,
} from "../../src/engine/mod.ts";

export const EXAMPLES_DIR = new URL("../../examples/", import.meta.url).pathname;

/** The order the stories are told in (smallest first); any other example directory follows. */
export const STORY_ORDER = [
  "field-rename",
  "enum-remap",
  "foreach-volumes",
  "xrd-hub-promotion",
  "annotation-stash",
];

/** The story `deno task demo` runs live when no `--example` is given. */
export const DEFAULT_LIVE_EXAMPLE = "field-rename";

export async function exampleNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(EXAMPLES_DIR)) if (e.isDirectory) names.push(e.name);
  const rank = (n: string) => {
    const i = STORY_ORDER.indexOf(n);
    return i < 0 ? STORY_ORDER.length : i;
  };
  return names.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

export interface Example {
  name: string;
  dir: string;
  config: LoadedConfig;
  schema: LoadedSchema;
  samples: Sample[];
  /** Set when the config and schema validate. */
  analysis: AnalysisResult;
  router: Router;
  /** Validation errors (structural, hard, per spoke); empty when valid. */
  problems: string[];
  /** Served versions, in the schema's order. */
  served: string[];
}

/** Loads one example; throws CliError for missing or unreadable files. */
export async function loadExample(name: string): Promise<Example> {
  const dir = `${EXAMPLES_DIR}${name}/`;
  const config = await loadConfig(`${dir}config.yaml`);
  const schemaFile = `${dir}${config.kind === "XRDConversionConfig" ? "xrd" : "crd"}.yaml`;
  const schema = await loadSchema(config.kind, schemaFile);
  const spec = engineSpecOf(config.config);
  const structural = structuralError(spec);
  const analysis = analyze(schema.source, spec);
  const problems = [
    ...(structural === undefined ? [] : [`[structural] ${structural}`]),
    ...analysis.hardErrors.map((d) => `[${d.class}] ${d.message}`),
    ...analysis.spokes.flatMap((s) => s.errors.map((d) => formatSpokeDiagnostic(s.version, d))),
  ];
  const samples = await loadSamples(`${dir}samples`, schema.source);
  return {
    name,
    dir,
    config,
    schema,
    samples,
    analysis,
    router: createRouter(analysis),
    problems,
    served: schema.source.versions.filter((v) => v.served).map((v) => v.name),
  };
}

export async function checkExampleName(name: string): Promise<void> {
  const names = await exampleNames();
  if (!names.includes(name)) {
    throw new CliError(`no example ${JSON.stringify(name)}; the examples are: ${names.join(", ")}`);
  }
}
