/**
 * `scalegen`: generates a fleet of CRDs (three versions, 3–10 strategy slots per spoke, all 29
 * strategies covered), one CRDConversionConfig per CRD and instances at v1, and writes them as
 * YAML manifests into `--out`. The same seed always writes the same bytes.
 *
 *   bash hack/deno.sh run -A hack/scalegen.ts --targets 4 --instances 5 --seed 1 --out /tmp/fleet
 */
import { FlagError, type FlagSpec, parseFlags } from "../src/lib/flags.ts";
import { type FleetOptions, fleetOptionsError, generateFleet } from "./scale/generate.ts";
import { fleetManifests } from "./scale/manifests.ts";

const FLAGS: FlagSpec[] = [
  { name: "namespace", kind: "string", default: "dco-scale", help: "namespace of the instances" },
  { name: "targets", kind: "string", default: "4", help: "number of CRDs" },
  { name: "instances", kind: "string", default: "5", help: "instances per CRD" },
  { name: "strategies-min", kind: "string", default: "3", help: "fewest strategy slots per spoke" },
  { name: "strategies-max", kind: "string", default: "10", help: "most strategy slots per spoke" },
  { name: "seed", kind: "string", default: "1", help: "seed of the generator" },
  { name: "out", kind: "string", value: "DIR", help: "directory the manifests are written to" },
];

const USAGE = "usage: scalegen.ts --out DIR [" +
  FLAGS.filter((f) => f.name !== "out").map((f) => `--${f.name} ${f.default}`).join("] [") + "]";

function integer(name: string, raw: string): number {
  if (!/^-?[0-9]+$/.test(raw)) {
    throw new FlagError(`invalid argument "${raw}" for --${name}: not an integer`);
  }
  return Number(raw);
}

async function main(args: string[]): Promise<number> {
  let options: FleetOptions;
  let out: string | undefined;
  try {
    const flags = parseFlags(args, FLAGS);
    if (flags.positionals.length > 0) {
      throw new FlagError(`unexpected argument ${flags.positionals[0]}`);
    }
    const value = (name: string) =>
      integer(name, flags.string(name) ?? FLAGS.find((f) => f.name === name)!.default!);
    options = {
      namespace: flags.string("namespace") ?? "dco-scale",
      targets: value("targets"),
      instances: value("instances"),
      strategiesMin: value("strategies-min"),
      strategiesMax: value("strategies-max"),
      seed: value("seed"),
    };
    out = flags.string("out");
    if (out === undefined || out === "") throw new FlagError("--out DIR is required");
    const invalid = fleetOptionsError(options);
    if (invalid !== undefined) throw new FlagError(invalid);
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    console.error(`scalegen: ${e.message}\n${USAGE}`);
    return 2;
  }
  const fleet = generateFleet(options);
  await Deno.mkdir(out, { recursive: true });
  for (const [name, text] of fleetManifests(fleet, options.namespace)) {
    await Deno.writeTextFile(`${out}/${name}`, text);
  }
  const used = Object.values(fleet.strategyCoverage).filter((n) => n > 0).length;
  const slots = Object.values(fleet.strategyCoverage).reduce((a, b) => a + b, 0);
  console.log(
    `wrote ${fleet.targets.length} CRDs, ${fleet.targets.length} configs and ` +
      `${fleet.targets.length * options.instances} instances to ${out} ` +
      `(${slots} strategy slots, ${used} strategies covered)`,
  );
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
