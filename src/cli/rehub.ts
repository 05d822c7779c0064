/**
 * `convctl rehub --to V`: drafts the config whose hub is the current spoke V (the promoted
 * spoke's rules inverted into the old hub's spoke, the other spokes' hub paths moved), analysed
 * against the schema as it will be once V is the storage version. Prints the draft; applies
 * nothing.
 */
import type { ConversionConfig } from "../api/mod.ts";
import { analyze, RehubError, rehubSpec, withStorageVersion } from "../engine/mod.ts";
import { CliError, outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { failOnHardErrors } from "./gates.ts";
import { formatSpokeDiagnostic, toJson, toYaml } from "./output.ts";
import type { JsonValue } from "../engine/mod.ts";

interface Draft {
  config: JsonValue;
  /** Spoke errors of the draft, printed on stderr when --allow-invalid lets it through. */
  errors: string[];
}

export const rehubCommand = defineCommand({
  name: "rehub",
  usage: "convctl rehub -c CONFIG (-x XRD | --crd CRD) --to V [-o yaml|json] [--allow-invalid]",
  summary: "Draft the config that makes spoke V the hub (rules inverted and rewritten).",
  target: "config+schema",
  flags: [
    {
      name: "to",
      kind: "string",
      value: "V",
      help: "the spoke version to make the hub (required)",
    },
    outputFlag("yaml or json", "yaml"),
    {
      name: "allow-invalid",
      kind: "bool",
      help: "print the draft even when it does not analyse clean (errors on stderr)",
    },
  ],
  required: ["to"],
  run: ({ config, source, spec, flags }): Draft => {
    const to = flags.string("to")!;
    let draftSpec;
    try {
      draftSpec = rehubSpec(spec, source, to);
    } catch (e) {
      if (e instanceof RehubError) throw new CliError(`cannot rehub to ${to}: ${e.message}`);
      throw e;
    }
    const analysis = analyze(withStorageVersion(source, to), draftSpec);
    failOnHardErrors(analysis);
    const errors = analysis.spokes.flatMap((s) =>
      s.errors.map((d) => formatSpokeDiagnostic(s.version, d))
    );
    if (errors.length > 0 && !flags.bool("allow-invalid")) {
      throw new CliError(
        `the draft with hub ${to} does not analyse clean (--allow-invalid prints it anyway):` +
          errors.map((l) => `\n  ${l}`).join(""),
      );
    }
    const { status: _status, ...rest } = config.config as ConversionConfig & { status?: unknown };
    return { config: { ...rest, spec: draftSpec } as unknown as JsonValue, errors };
  },
  output: {
    formats: { yaml: (d) => toYaml(d.config, false), json: (d) => toJson(d.config) },
    default: "yaml",
  },
  write: (text, draft, { io }) => {
    for (const e of draft.errors) io.err(`warning: ${e}\n`);
    io.out(text);
  },
});
