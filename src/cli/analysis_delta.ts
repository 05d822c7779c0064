/**
 * What changes between two analyses of one target: the hub, the spoke versions on each side and,
 * per spoke present on both, coverage, rule claims, lossless verdicts and diagnostics. `diff`
 * prints it; `compat` classifies it.
 */
import type {
  AnalysisResult,
  Diagnostic,
  Direction,
  RuleResult,
  SpokeReport,
} from "../engine/mod.ts";
import { formatDiagnostic } from "./output.ts";

/** A rule as a claim: its strategy and the paths it accounts for on each side (sorted). */
export interface RuleClaim {
  strategy: string;
  hubPaths: string[];
  spokePaths: string[];
}

export interface LosslessChange {
  direction: Direction;
  from: boolean;
  to: boolean;
}

/** The changes of one spoke present on both sides; empty lists are left out. */
export interface SpokeDelta {
  version: string;
  uncoveredHubAdded?: string[];
  uncoveredHubRemoved?: string[];
  uncoveredSpokeAdded?: string[];
  uncoveredSpokeRemoved?: string[];
  ruleClaimsAdded?: RuleClaim[];
  ruleClaimsRemoved?: RuleClaim[];
  losslessChanges?: LosslessChange[];
  errorsAdded?: string[];
  errorsRemoved?: string[];
  warningsAdded?: string[];
  warningsRemoved?: string[];
}

export interface AnalysisDelta {
  hubVersionChange?: { from: string; to: string };
  spokesAdded?: string[];
  spokesRemoved?: string[];
  spokes?: SpokeDelta[];
  hasDeltas: boolean;
}

const sorted = (xs: Iterable<string>) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** `strategy|hub paths|spoke paths`: two rules with the same key claim the same thing. */
export function claimKey(c: RuleClaim): string {
  return `${c.strategy}|${c.hubPaths.join(",")}|${c.spokePaths.join(",")}`;
}

export function claimOf(r: RuleResult): RuleClaim {
  return { strategy: r.strategy, hubPaths: sorted(r.hubPaths), spokePaths: sorted(r.spokePaths) };
}

/** `a − b` as sets, sorted. */
function setMinus(a: readonly string[], b: readonly string[]): string[] {
  const other = new Set(b);
  return sorted(new Set(a.filter((x) => !other.has(x))));
}

/** `a − b` as multisets of claims (declaring a rule twice differs from once), sorted by key. */
function claimsMinus(a: readonly RuleClaim[], b: readonly RuleClaim[]): RuleClaim[] {
  const left = new Map<string, number>();
  for (const c of b) left.set(claimKey(c), (left.get(claimKey(c)) ?? 0) + 1);
  const out: RuleClaim[] = [];
  for (const c of a) {
    const n = left.get(claimKey(c)) ?? 0;
    if (n > 0) left.set(claimKey(c), n - 1);
    else out.push(c);
  }
  return out.sort((x, y) => (claimKey(x) < claimKey(y) ? -1 : claimKey(x) > claimKey(y) ? 1 : 0));
}

const messages = (ds: readonly Diagnostic[]) => ds.map(formatDiagnostic);

function spokeDelta(from: SpokeReport, to: SpokeReport): SpokeDelta | undefined {
  const delta: SpokeDelta = { version: from.version };
  const put = <K extends keyof SpokeDelta>(key: K, value: SpokeDelta[K] & unknown[]) => {
    if (value.length > 0) delta[key] = value;
  };
  put("uncoveredHubAdded", setMinus(to.uncoveredHub, from.uncoveredHub));
  put("uncoveredHubRemoved", setMinus(from.uncoveredHub, to.uncoveredHub));
  put("uncoveredSpokeAdded", setMinus(to.uncoveredSpoke, from.uncoveredSpoke));
  put("uncoveredSpokeRemoved", setMinus(from.uncoveredSpoke, to.uncoveredSpoke));
  const fromClaims = from.ruleResults.map(claimOf);
  const toClaims = to.ruleResults.map(claimOf);
  put("ruleClaimsAdded", claimsMinus(toClaims, fromClaims));
  put("ruleClaimsRemoved", claimsMinus(fromClaims, toClaims));
  const changes: LosslessChange[] = [];
  for (const direction of ["hubToSpoke", "spokeToHub"] as const) {
    if (from.lossless[direction] !== to.lossless[direction]) {
      changes.push({ direction, from: from.lossless[direction], to: to.lossless[direction] });
    }
  }
  put("losslessChanges", changes);
  put("errorsAdded", setMinus(messages(to.errors), messages(from.errors)));
  put("errorsRemoved", setMinus(messages(from.errors), messages(to.errors)));
  put("warningsAdded", setMinus(messages(to.warnings), messages(from.warnings)));
  put("warningsRemoved", setMinus(messages(from.warnings), messages(to.warnings)));
  return Object.keys(delta).length > 1 ? delta : undefined;
}

/** The changes from `from` to `to` (both analyses of the same target). */
export function analysisDelta(from: AnalysisResult, to: AnalysisResult): AnalysisDelta {
  const delta: AnalysisDelta = { hasDeltas: false };
  if (from.hubVersion !== to.hubVersion) {
    delta.hubVersionChange = { from: from.hubVersion, to: to.hubVersion };
  }
  const fromSpokes = new Map(from.spokes.map((s) => [s.version, s]));
  const toSpokes = new Map(to.spokes.map((s) => [s.version, s]));
  const added = sorted([...toSpokes.keys()].filter((v) => !fromSpokes.has(v)));
  const removed = sorted([...fromSpokes.keys()].filter((v) => !toSpokes.has(v)));
  if (added.length > 0) delta.spokesAdded = added;
  if (removed.length > 0) delta.spokesRemoved = removed;
  const spokes: SpokeDelta[] = [];
  for (const version of sorted([...fromSpokes.keys()].filter((v) => toSpokes.has(v)))) {
    const d = spokeDelta(fromSpokes.get(version)!, toSpokes.get(version)!);
    if (d !== undefined) spokes.push(d);
  }
  if (spokes.length > 0) delta.spokes = spokes;
  delta.hasDeltas = delta.hubVersionChange !== undefined || added.length > 0 ||
    removed.length > 0 || spokes.length > 0;
  return delta;
}

const DIRECTION_TEXT: Record<Direction, string> = {
  hubToSpoke: "hub→spoke",
  spokeToHub: "spoke→hub",
};

/** The delta as `+`/`-` lines (the body of the table and markdown forms). */
export function deltaLines(delta: AnalysisDelta): string[] {
  if (!delta.hasDeltas) return ["no differences"];
  const lines: string[] = [];
  if (delta.hubVersionChange) {
    lines.push(`hub version: ${delta.hubVersionChange.from} → ${delta.hubVersionChange.to}`);
  }
  for (const v of delta.spokesAdded ?? []) lines.push(`+ spoke ${v}`);
  for (const v of delta.spokesRemoved ?? []) lines.push(`- spoke ${v}`);
  for (const s of delta.spokes ?? []) {
    lines.push(`[spoke ${s.version}]`);
    for (const c of s.losslessChanges ?? []) {
      lines.push(`  lossless ${DIRECTION_TEXT[c.direction]}: ${c.from} → ${c.to}`);
    }
    for (const p of s.uncoveredHubAdded ?? []) lines.push(`  + uncovered hub ${p}`);
    for (const p of s.uncoveredHubRemoved ?? []) lines.push(`  - uncovered hub ${p}`);
    for (const p of s.uncoveredSpokeAdded ?? []) lines.push(`  + uncovered spoke ${p}`);
    for (const p of s.uncoveredSpokeRemoved ?? []) lines.push(`  - uncovered spoke ${p}`);
    for (const c of s.ruleClaimsAdded ?? []) lines.push(`  + rule ${claimKey(c)}`);
    for (const c of s.ruleClaimsRemoved ?? []) lines.push(`  - rule ${claimKey(c)}`);
    for (const m of s.errorsAdded ?? []) lines.push(`  + ERROR ${m}`);
    for (const m of s.errorsRemoved ?? []) lines.push(`  - ERROR ${m}`);
    for (const m of s.warningsAdded ?? []) lines.push(`  + WARNING ${m}`);
    for (const m of s.warningsRemoved ?? []) lines.push(`  - WARNING ${m}`);
  }
  return lines;
}
