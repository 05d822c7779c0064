/**
 * The platform part of analysis: fields a platform (Crossplane) overwrites at runtime, where a
 * declaration or a rule is a mistake, and their passthrough where the carry walk would drop them
 * (docs/design/engine.md#platform-injected-fields).
 */
import { type CarryTree, resolveSchema, splitPath } from "./schema.ts";
import type { Diagnostic, OpData, RuleResult, SchemaNode, SchemaSource } from "./types.ts";
import { sortDiagnostics } from "./analyze_required.ts";

const under = (path: string, root: string) => path === root || path.startsWith(root + ".");

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

/**
 * Identity copies of the injected roots the top-level carry walk would drop: the platform writes
 * them into every version's generated CRD, so they must pass through even where the author's
 * schemas leave their top-level key undeclared (an XRD without `status`) or an object without
 * properties. A root some rule claims (at, above or below it) stays the rule's.
 */
export function injectedPassthrough(
  roots: readonly string[],
  tree: CarryTree,
  claims: Iterable<string>,
): OpData[] {
  const claimed = [...claims];
  const ops: OpData[] = [];
  for (const root of roots) {
    const segments = splitPath(root);
    if (carries(tree, segments)) continue;
    if (claimed.some((p) => under(p, root) || under(root, p))) continue;
    ops.push({ op: "copy", from: segments, to: segments });
  }
  return ops;
}

/** Whether the carry walk copies the value at `segments` (see CarryTree). */
function carries(tree: CarryTree, segments: readonly string[]): boolean {
  let node: CarryTree = tree;
  for (let i = 0; i < segments.length; i++) {
    if (!Object.hasOwn(node, segments[i])) return i > 0; // undeclared: dropped only at the root
    const next = node[segments[i]];
    if (next === "copy") return true;
    if (next === "skip") return false;
    node = next;
  }
  return true; // declared structured: the walk follows the declaration
}
