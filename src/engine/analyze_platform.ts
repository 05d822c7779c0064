/**
 * The platform check of analysis: fields a platform (Crossplane) overwrites at runtime, where a
 * declaration or a rule is a mistake (docs/design/engine.md#platform-injected-fields).
 */
import { resolveSchema, splitPath } from "./schema.ts";
import type { Diagnostic, RuleResult, SchemaNode, SchemaSource } from "./types.ts";
import { sortDiagnostics } from "./analyze_required.ts";

/** Fields a platform (Crossplane) overwrites; rules and declarations there are mistakes. */
export function platformDiagnostics(
  source: SchemaSource,
  hub: SchemaNode | undefined,
  spoke: SchemaNode | undefined,
  ruleResults: RuleResult[],
): Diagnostic[] {
  const injected = source.injected;
  if (injected === undefined || injected.roots.length === 0) return [];
  const severity = injected.uncertain ? "warning" : "error";
  const suffix = injected.uncertain ? ` (uncertain: ${injected.reason})` : "";
  const out: Diagnostic[] = [];
  for (const root of injected.roots) {
    const segs = splitPath(root);
    const sides = [
      resolveSchema(hub, segs) !== undefined ? "hub" : "",
      resolveSchema(spoke, segs) !== undefined ? "spoke" : "",
    ].filter((s) => s !== "");
    if (sides.length > 0) {
      out.push({
        class: "AuthoredFieldShadowedByPlatform",
        severity,
        message: `${root} is declared by the ${
          sides.join(" and ")
        } schema but ${injected.platform} overwrites it at runtime; rename the authored field${suffix}`,
        ruleIndex: -1,
        path: root,
      });
    }
  }
  const under = (path: string, root: string) => path === root || path.startsWith(root + ".");
  for (const rr of ruleResults) {
    for (const [side, paths] of [["hub", rr.hubPaths], ["spoke", rr.spokePaths]] as const) {
      for (const path of paths) {
        const root = injected.roots.find((r) => under(path, r));
        if (root === undefined) continue;
        out.push({
          class: "RuleTargetsInjectedPath",
          severity,
          message:
            `rule[${rr.index}] ${rr.strategy}: ${side} path ${path} lies under ${root}, which ${injected.platform} manages; passthrough already carries it unchanged${suffix}`,
          ruleIndex: rr.index,
          path,
        });
      }
    }
  }
  return sortDiagnostics(out);
}
