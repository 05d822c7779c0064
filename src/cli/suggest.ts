/**
 * `convctl suggest`: draft TypeCoerce and FieldRename rules for uncovered fields by
 * comparing the top-level leaves of the hub and spoke schemas.
 */
import {
  analyze,
  flatten,
  type JsonObject,
  type Leaf,
  type SchemaSource,
  type SpokeReport,
} from "../engine/mod.ts";
import { levenshtein } from "../lib/edit_distance.ts";
import { outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { failOnHardErrors } from "./gates.ts";
import { toJson, toYaml } from "./output.ts";

export const SUGGEST_HEADER =
  "# suggested rules — review every one before merging into spec.spokes";
export const NO_SUGGESTIONS =
  "# no suggestions: every uncovered field is either already claimed or too dissimilar to guess at";

const SCALAR_KINDS = new Set(["string", "integer", "number", "boolean"]);
const MIN_SIMILARITY = 0.6;

/** Keep letters and digits, lower-cased; compared as UTF-8 bytes (so é counts as two). */
function normalizedBytes(segment: string): Uint8Array {
  const kept = [...segment].filter((c) => /[\p{L}\p{Nd}]/u.test(c)).join("").toLowerCase();
  return new TextEncoder().encode(kept);
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

/**
 * Draft rules for one spoke: a TypeCoerce for each uncovered path
 * whose scalar type differs between hub and spoke, then FieldRenames pairing the remaining
 * uncovered siblings of the same kind by name similarity, best pairs first.
 */
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

/** The `-o json` contract: `spokes: null` when nothing is suggested. */
type Suggestions = { spokes: JsonObject[] | null };

export const suggestCommand = defineCommand({
  name: "suggest",
  usage: "convctl suggest -c CONFIG (-x XRD | --crd CRD) [-o yaml|json]",
  summary: "Draft rules (TypeCoerce, FieldRename) for fields no rule covers.",
  target: "config+schema",
  flags: [outputFlag("yaml or json", "yaml")],
  run: ({ source, spec }): Suggestions => {
    const analysis = analyze(source, spec);
    failOnHardErrors(analysis);
    const hubLeaves = leavesOf(source, analysis.hubVersion);
    const spokes: JsonObject[] = [];
    for (const report of analysis.spokes) {
      const rules = suggestRules(report, hubLeaves, leavesOf(source, report.version));
      if (rules.length > 0) spokes.push({ version: report.version, rules });
    }
    return { spokes: spokes.length > 0 ? spokes : null };
  },
  output: {
    formats: {
      // Rules keep their written order: `strategy` first reads best.
      yaml: (r) =>
        r.spokes === null ? `${NO_SUGGESTIONS}\n` : `${SUGGEST_HEADER}\n${toYaml(r, false)}`,
      json: toJson,
    },
    default: "yaml",
  },
});
