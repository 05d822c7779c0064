/**
 * `convctl suggest` (cli.md §7): draft TypeCoerce and FieldRename rules for uncovered fields by
 * comparing the top-level leaves of the hub and spoke schemas.
 */
import { engineSpecOf } from "../api/mod.ts";
import {
  analyze,
  flatten,
  type JsonObject,
  type JsonValue,
  type Leaf,
  type SchemaSource,
  type SpokeReport,
} from "../engine/mod.ts";
import {
  choice,
  type CommandSpec,
  FLAGS,
  mutuallyExclusive,
  noPositionals,
  oneRequired,
  type ParsedFlags,
  requireFlags,
} from "./args.ts";
import { failOnHardErrors } from "./gates.ts";
import { loadTarget } from "./load.ts";
import { type Io, toJson, toYaml } from "./output.ts";

export const suggestCommand: CommandSpec = {
  name: "suggest",
  usage: "convctl suggest -c CONFIG (-x XRD | --crd CRD) [-o yaml|json]",
  summary: "Draft rules (TypeCoerce, FieldRename) for fields no rule covers.",
  flags: [
    { ...FLAGS.config, help: `${FLAGS.config.help} (required)` },
    FLAGS.xrd,
    FLAGS.crd,
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

export const SUGGEST_HEADER =
  "# suggested rules — review every one before merging into spec.spokes";
export const NO_SUGGESTIONS =
  "# no suggestions: every uncovered field is either already claimed or too dissimilar to guess at";

const SCALAR_KINDS = new Set(["string", "integer", "number", "boolean"]);
const MIN_SIMILARITY = 0.6;

/** Keep letters and digits, lower-cased; compare as UTF-8 bytes like the reference. */
function normalizedBytes(segment: string): Uint8Array {
  const kept = [...segment].filter((c) => /[\p{L}\p{Nd}]/u.test(c)).join("").toLowerCase();
  return new TextEncoder().encode(kept);
}

function levenshtein(a: Uint8Array, b: Uint8Array): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

const lastSegment = (path: string) => path.slice(path.lastIndexOf(".") + 1);
const parentOf = (path: string) => {
  const i = path.lastIndexOf(".");
  return i < 0 ? "" : path.slice(0, i);
};

/** Similarity of the last path segments: 1 − levenshtein / max length (0 if either is empty). */
export function nameSimilarity(hubPath: string, spokePath: string): number {
  const a = normalizedBytes(lastSegment(hubPath));
  const b = normalizedBytes(lastSegment(spokePath));
  if (a.length === 0 || b.length === 0) return 0;
  const same = a.length === b.length && a.every((x, i) => x === b[i]);
  if (same) return 1;
  return 1 - levenshtein(a, b) / Math.max(a.length, b.length);
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** §7 steps 1–4 for one spoke report. */
export function suggestRules(
  report: SpokeReport,
  hubLeaves: ReadonlyMap<string, Leaf>,
  spokeLeaves: ReadonlyMap<string, Leaf>,
): JsonObject[] {
  const hubPaths = [...new Set(report.uncoveredHub)].sort(byPath).filter((p) => hubLeaves.has(p));
  const spokePaths = [...new Set(report.uncoveredSpoke)].sort(byPath).filter((p) =>
    spokeLeaves.has(p)
  );
  const usedHub = new Set<string>();
  const usedSpoke = new Set<string>();
  const coerce: JsonObject[] = [];
  for (const path of hubPaths) {
    const hub = hubLeaves.get(path)!;
    const spoke = spokeLeaves.get(path);
    if (
      spoke !== undefined && spoke.kind !== hub.kind && SCALAR_KINDS.has(hub.kind) &&
      SCALAR_KINDS.has(spoke.kind)
    ) {
      coerce.push({ strategy: "TypeCoerce", typeCoerce: { path } });
      usedHub.add(path);
      usedSpoke.add(path);
    }
  }
  const candidates: { hub: string; spoke: string; score: number }[] = [];
  for (const hubPath of hubPaths) {
    const hub = hubLeaves.get(hubPath)!;
    for (const spokePath of spokePaths) {
      const spoke = spokeLeaves.get(spokePath)!;
      if (hubPath === spokePath || parentOf(hubPath) !== parentOf(spokePath)) continue;
      if (hub.kind !== spoke.kind || hub.opaque !== spoke.opaque) continue;
      const score = nameSimilarity(hubPath, spokePath);
      if (score >= MIN_SIMILARITY) candidates.push({ hub: hubPath, spoke: spokePath, score });
    }
  }
  candidates.sort((a, b) => b.score - a.score || byPath(a.hub, b.hub) || byPath(a.spoke, b.spoke));
  const renames: JsonObject[] = [];
  for (const c of candidates) {
    if (usedHub.has(c.hub) || usedSpoke.has(c.spoke)) continue;
    usedHub.add(c.hub);
    usedSpoke.add(c.spoke);
    renames.push({ strategy: "FieldRename", fieldRename: { hubPath: c.hub, spokePath: c.spoke } });
  }
  return [...coerce, ...renames];
}

function leavesOf(source: SchemaSource, version: string): Map<string, Leaf> {
  const schema = source.versions.find((v) => v.name === version)?.schema;
  return new Map(flatten(schema).map((l) => [l.path, l]));
}

export async function runSuggest(flags: ParsedFlags, io: Io): Promise<number> {
  noPositionals(flags, "suggest");
  requireFlags(flags, "config");
  mutuallyExclusive(flags, "xrd", "crd");
  oneRequired(flags, "xrd", "crd");
  const output = choice("output", flags.string("output"), ["yaml", "json"] as const, "yaml");
  const { config, schema } = await loadTarget(flags, "required");
  const source = schema!.source;
  const analysis = analyze(source, engineSpecOf(config.config));
  failOnHardErrors(analysis);

  const hubLeaves = leavesOf(source, analysis.hubVersion);
  const spokes: JsonObject[] = [];
  for (const report of analysis.spokes) {
    const rules = suggestRules(report, hubLeaves, leavesOf(source, report.version));
    if (rules.length > 0) spokes.push({ version: report.version, rules });
  }
  const result: JsonValue = { spokes: spokes.length > 0 ? spokes : null };
  if (output === "json") io.out(toJson(result));
  else if (spokes.length === 0) io.out(`${NO_SUGGESTIONS}\n`);
  else io.out(`${SUGGEST_HEADER}\n${toYaml(result, false)}`); // strategy first reads best
  return 0;
}
