/**
 * The required-field check of analysis: can the rules produce every field the destination schema
 * requires (docs/design/engine.md#required-field-satisfaction)?
 */
import { flatten, isRequiredAt, splitPath } from "./schema.ts";
import type { EngineRule } from "./strategy.ts";
import type { Diagnostic, RuleResult, SchemaNode } from "./types.ts";

/** Diagnostics in (rule index, path) order, so reports and status do not churn. */
export function sortDiagnostics(ds: Diagnostic[]): Diagnostic[] {
  return ds.sort((a, b) =>
    a.ruleIndex - b.ruleIndex || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

type Provability = "always" | "unprovable" | "conditional" | "never";
const PROVABILITY_RANK: Record<Provability, number> = {
  always: 3,
  unprovable: 2,
  conditional: 1,
  never: 0,
};

/** Required-field satisfaction: can the rules produce every unconditionally required destination field? */
export function requiredFieldDiagnostics(
  hub: SchemaNode | undefined,
  spoke: SchemaNode | undefined,
  rules: readonly EngineRule[],
  ruleResults: RuleResult[],
): Diagnostic[] {
  const out: Diagnostic[] = [];
  const directions = [
    {
      label: "hub→spoke",
      src: hub,
      dst: spoke,
      dstPaths: (r: RuleResult) => r.spokePaths,
      srcPaths: (r: RuleResult) => r.hubPaths,
    },
    {
      label: "spoke→hub",
      src: spoke,
      dst: hub,
      dstPaths: (r: RuleResult) => r.hubPaths,
      srcPaths: (r: RuleResult) => r.spokePaths,
    },
  ];
  for (const dir of directions) {
    const written = new Set<string>();
    for (const rr of ruleResults) for (const p of dir.dstPaths(rr)) written.add(p);
    const writtenList = [...written];
    const srcRequired = new Set(flatten(dir.src).filter((l) => l.required).map((l) => l.path));
    const ancestorExists = (segs: string[]): boolean => {
      const path = segs.join(".");
      return isRequiredAt(dir.dst, segs) || written.has(path) ||
        writtenList.some((w) => w.startsWith(path + "."));
    };
    const leaves = flatten(dir.dst).filter((l) => l.required).sort((a, b) =>
      a.path < b.path ? -1 : a.path > b.path ? 1 : 0
    );
    for (const leaf of leaves) {
      const segs = splitPath(leaf.path);
      let inScope = true;
      for (let i = 1; i < segs.length && inScope; i++) inScope = ancestorExists(segs.slice(0, i));
      if (!inScope) continue;
      if (leaf.node.default !== undefined) continue;
      const writers = ruleResults.filter((rr) => dir.dstPaths(rr).includes(leaf.path));
      const hint = "check empirically with `convctl test --validate-output` or `--fuzz`";
      if (writers.length === 0) {
        if (srcRequired.has(leaf.path)) continue;
        const wholesale = segs.slice(1).some((_, i) => written.has(segs.slice(0, i + 1).join(".")));
        out.push({
          class: wholesale ? "RequiredFieldUnprovable" : "RequiredFieldUnsatisfiable",
          severity: wholesale ? "warning" : "error",
          message: wholesale
            ? `${dir.label}: required field ${leaf.path} is only produced if a rule writing its parent wholesale includes it; ${hint}`
            : `${dir.label}: required field ${leaf.path} is written by no rule and is not a required field of the source; converted objects would be invalid`,
          ruleIndex: -1,
          path: leaf.path,
        });
        continue;
      }
      let best: { verdict: Provability; index: number } = { verdict: "never", index: -1 };
      for (const rr of writers) {
        const rule = rules[rr.index];
        let verdict: Provability;
        if (rule.when !== undefined) verdict = "conditional";
        else if (["CEL", "JSONPatch", "ScalarToFields"].includes(rule.strategy)) {
          verdict = "unprovable";
        } else if (rule.strategy === "Constant" || rule.strategy === "DefaultValue") {
          verdict = "always";
        } else {
          verdict = dir.srcPaths(rr).every((p) => srcRequired.has(p)) ? "always" : "conditional";
        }
        if (PROVABILITY_RANK[verdict] > PROVABILITY_RANK[best.verdict]) {
          best = { verdict, index: rr.index };
        }
      }
      if (best.verdict === "unprovable") {
        out.push({
          class: "RequiredFieldUnprovable",
          severity: "warning",
          message: `${dir.label}: required field ${leaf.path} is written by rule[${best.index}] (${
            rules[best.index].strategy
          }), whose output cannot be verified statically; ${hint}`,
          ruleIndex: best.index,
          path: leaf.path,
        });
      } else if (best.verdict === "conditional") {
        out.push({
          class: "RequiredFieldConditional",
          severity: "error",
          message: `${dir.label}: required field ${leaf.path} is written by rule[${best.index}] (${
            rules[best.index].strategy
          }) only for some inputs (a when gate or an optional source field); ${hint}`,
          ruleIndex: best.index,
          path: leaf.path,
        });
      }
    }
  }
  return sortDiagnostics(out);
}
