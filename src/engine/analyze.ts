/**
 * Analysis: compile each spoke's rules against the hub and spoke schemas into
 * claims, diagnostics, lossless verdicts and a plan (plain data). A spoke gets a plan only when it
 * has no error diagnostics.
 */
import {
  carryTree,
  flatten,
  knownTree,
  type Leaf,
  mergeKnownTrees,
  resolveSchema,
  splitPath,
} from "./schema.ts";
import type { EngineRule, NestedScope, Resolved, RuleContext, RuleOutcome } from "./strategy.ts";
import { TranslationError } from "./strategy.ts";
import { strategyByName } from "./strategies/mod.ts";
import { translateRules } from "./translate.ts";
import { injectedPassthrough, platformDiagnostics } from "./analyze_platform.ts";
import { requiredFieldDiagnostics } from "./analyze_required.ts";
import type {
  AnalysisResult,
  ConversionConfigSpec,
  Diagnostic,
  DiagnosticClass,
  Lossless,
  OpData,
  RuleResult,
  SchemaNode,
  SchemaSource,
  SpokeReport,
  UnmappedFieldPolicy,
} from "./types.ts";

const DIRECTION_LABEL = { hubToSpoke: "hub→spoke", spokeToHub: "spoke→hub" } as const;

/** Analyse a whole config against its target's schemas. */
export function analyze(source: SchemaSource, spec: ConversionConfigSpec): AnalysisResult {
  const result: AnalysisResult = {
    kind: source.kind,
    target: source.name,
    group: source.group,
    hubVersion: spec.hubVersion,
    hardErrors: [],
    spokes: [],
    hasErrors: false,
    overallLossless: true,
  };
  const hard = (cls: DiagnosticClass, message: string) => {
    result.hardErrors.push({ class: cls, severity: "error", message, ruleIndex: -1, path: "" });
    result.hasErrors = true;
    result.overallLossless = false;
    return result;
  };

  const translated: EngineRule[][] = [];
  try {
    for (let i = 0; i < spec.spokes.length; i++) {
      translated.push(translateRules(spec.spokes[i].rules, `spec.spokes[${i}].rules`));
    }
  } catch (e) {
    if (!(e instanceof TranslationError)) throw e;
    return hard("rule-translation", `invalid rule configuration: ${e.message}`);
  }

  const hub = source.versions.find((v) => v.name === spec.hubVersion);
  if (hub === undefined) {
    return hard(
      "hub-version",
      `hub version ${JSON.stringify(spec.hubVersion)} not found on ${source.kind} ${source.name}`,
    );
  }
  if (!hub.storage) {
    const what = source.kind === "XRD" ? "referenceable" : "storage";
    return hard(
      "hub-version",
      `hub version ${
        JSON.stringify(spec.hubVersion)
      } is not the ${what} version of ${source.kind} ${source.name}`,
    );
  }
  const policy: UnmappedFieldPolicy = spec.unmappedFieldPolicy === "Warn" ? "Warn" : "Error";

  spec.spokes.forEach((spokeSpec, i) => {
    const report = analyzeSpoke(source, hub.schema, spokeSpec.version, translated[i], policy);
    result.spokes.push(report);
    if (report.errors.length > 0) result.hasErrors = true;
    if (!report.lossless.hubToSpoke || !report.lossless.spokeToHub) result.overallLossless = false;
  });
  return result;
}

function emptyReport(version: string): SpokeReport {
  return {
    version,
    lossless: { hubToSpoke: true, spokeToHub: true },
    ruleResults: [],
    errors: [],
    warnings: [],
    uncoveredHub: [],
    uncoveredSpoke: [],
  };
}

function analyzeSpoke(
  source: SchemaSource,
  hubSchema: SchemaNode | undefined,
  version: string,
  rules: EngineRule[],
  policy: UnmappedFieldPolicy,
): SpokeReport {
  const report = emptyReport(version);
  const spoke = source.versions.find((v) => v.name === version);
  if (spoke === undefined || !spoke.served) {
    report.errors.push({
      class: "spoke-version",
      severity: "error",
      message: spoke === undefined
        ? `spoke version ${JSON.stringify(version)} not found on ${source.kind} ${source.name}`
        : `spoke version ${JSON.stringify(version)} is not served by ${source.kind} ${source.name}`,
      ruleIndex: -1,
      path: "",
    });
    report.lossless = { hubToSpoke: false, spokeToHub: false };
    return report;
  }

  const scope = compileScope(rules, {
    hub: hubSchema,
    spoke: spoke.schema,
    depth: 0,
    policy,
    hubPrefix: "",
    spokePrefix: "",
    injectedRoots: source.injected?.roots ?? [],
  });
  report.ruleResults = scope.ruleResults;
  report.lossless = scope.lossless;
  const extra = [
    ...platformDiagnostics(source, hubSchema, spoke.schema, scope.ruleResults),
    ...requiredFieldDiagnostics(hubSchema, spoke.schema, rules, scope.ruleResults),
  ];
  for (const d of [...scope.diagnostics, ...extra]) {
    (d.severity === "error" ? report.errors : report.warnings).push(d);
    if (d.class === "uncovered-field") {
      (d.side === "hub" ? report.uncoveredHub : report.uncoveredSpoke).push(d.path);
    }
  }
  if (report.errors.length === 0) {
    report.plan = {
      hubVersion: hubSchemaVersion(source),
      spokeVersion: version,
      hubToSpoke: scope.hubToSpoke,
      spokeToHub: scope.spokeToHub,
    };
  }
  return report;
}

function hubSchemaVersion(source: SchemaSource): string {
  return source.versions.find((v) => v.storage)?.name ?? "";
}

interface ScopeInput {
  hub: SchemaNode | undefined;
  spoke: SchemaNode | undefined;
  depth: number;
  policy: UnmappedFieldPolicy;
  /** Qualifying prefixes of this scope's paths (ForEach items paths), "" at top level. */
  hubPrefix: string;
  spokePrefix: string;
  /** The platform's injected roots (top level only; see analyze_platform.ts). */
  injectedRoots: readonly string[];
}

interface ScopeOutput extends NestedScope {
  ruleResults: RuleResult[];
  diagnostics: Diagnostic[];
}

function isMetadataPath(path: string): boolean {
  return path === "metadata" || path.startsWith("metadata.");
}

function qualify(prefix: string, path: string): string {
  if (prefix === "") return path;
  return path === "" ? prefix : `${prefix}.${path}`;
}

/** Compiles one scope: the top level of a spoke, or the element scope of a ForEach. */
function compileScope(rules: readonly EngineRule[], input: ScopeInput): ScopeOutput {
  const hubClaims = new Set<string>();
  const spokeClaims = new Set<string>();
  const diagnostics: Diagnostic[] = [];
  const ruleResults: RuleResult[] = [];
  const lossless: Lossless = { hubToSpoke: true, spokeToHub: true };
  const hubToSpoke: OpData[] = [];
  const spokeToHub: OpData[] = [];

  rules.forEach((rule, index) => {
    const def = strategyByName(rule.strategy)!;
    const ruleDiags: Diagnostic[] = [];
    const label = `rule[${index}] ${rule.strategy}`;
    const push = (
      cls: DiagnosticClass,
      severity: "error" | "warning",
      message: string,
      path: string,
    ) =>
      ruleDiags.push({
        class: cls,
        severity,
        message: `${label}: ${message}`,
        ruleIndex: index,
        path,
      });

    const claim = (side: "hub" | "spoke", r: Resolved, subtree: boolean | undefined) => {
      const claims = side === "hub" ? hubClaims : spokeClaims;
      const paths = new Set([r.path]);
      if (subtree && r.node !== undefined) {
        for (const leaf of flatten(r.node, r.path)) paths.add(leaf.path);
      }
      for (const p of paths) {
        if (claims.has(p)) {
          push(
            "duplicate-claim",
            "error",
            `${side} path ${JSON.stringify(p)} is already claimed by an earlier rule`,
            qualify(side === "hub" ? input.hubPrefix : input.spokePrefix, p),
          );
        } else {
          claims.add(p);
        }
      }
    };
    const resolve = (side: "hub" | "spoke", path: string, param: string): Resolved => {
      const segments = splitPath(path);
      const node = resolveSchema(side === "hub" ? input.hub : input.spoke, segments);
      if (node === undefined) {
        push(
          "path-not-found",
          "error",
          `${param} ${JSON.stringify(path)} not found in the ${side} schema`,
          qualify(side === "hub" ? input.hubPrefix : input.spokePrefix, path),
        );
      }
      return { path, segments, node };
    };

    const ctx: RuleContext = {
      depth: input.depth,
      hubSchema: input.hub,
      spokeSchema: input.spoke,
      resolveHub: (path, param) => resolve("hub", path, param),
      resolveSpoke: (path, param) => resolve("spoke", path, param),
      claimHub: (r, subtree) => claim("hub", r, subtree),
      claimSpoke: (r, subtree) => claim("spoke", r, subtree),
      error: (cls, message, path = "") =>
        push(cls, "error", message, qualify(input.hubPrefix, path)),
      warn: (cls, message, path = "") =>
        push(cls, "warning", message, qualify(input.hubPrefix, path)),
      compileNested(nestedRules, hubItems, spokeItems, hubItemsPath, spokeItemsPath) {
        const nested = compileScope(nestedRules, {
          hub: hubItems,
          spoke: spokeItems,
          depth: input.depth + 1,
          policy: input.policy,
          hubPrefix: qualify(input.hubPrefix, hubItemsPath),
          spokePrefix: qualify(input.spokePrefix, spokeItemsPath),
          injectedRoots: [],
        });
        for (const d of nested.diagnostics) {
          ruleDiags.push({ ...d, message: `${label} > ${d.message}`, ruleIndex: index });
        }
        return nested;
      },
    };

    const outcome: RuleOutcome = def.compile(rule.params, ctx);

    for (const dir of ["hubToSpoke", "spokeToHub"] as const) {
      if (!outcome.lossless[dir] && !rule.acknowledgeLossy) {
        push(
          "unacknowledged-lossy",
          "error",
          `lossy ${
            DIRECTION_LABEL[dir]
          }; set acknowledgeLossy: true (with a reason) to accept the loss`,
          "",
        );
      }
    }

    let h2s = outcome.hubToSpoke;
    let s2h = outcome.spokeToHub;
    if (rule.when !== undefined) {
      const whenPath = rule.when.path;
      if (whenPath.trim() === "") {
        push("invalid-parameter", "error", "when.path must not be empty", "");
      } else {
        const onHub = resolve("hub", whenPath, "when.path");
        const onSpoke = resolve("spoke", whenPath, "when.path");
        if (onHub.node !== undefined && onSpoke.node !== undefined) {
          push(
            "partial-coverage",
            "warning",
            `applies only when ${whenPath} equals ${
              JSON.stringify(rule.when.equals)
            }; otherwise its fields are dropped`,
            qualify(input.hubPrefix, whenPath),
          );
        }
        const gate = (inner: OpData | undefined): OpData | undefined =>
          inner === undefined
            ? undefined
            : { op: "when", path: onHub.segments, equals: rule.when!.equals, inner };
        h2s = gate(h2s);
        s2h = gate(s2h);
      }
    }

    lossless.hubToSpoke &&= outcome.lossless.hubToSpoke;
    lossless.spokeToHub &&= outcome.lossless.spokeToHub;
    if (h2s !== undefined) hubToSpoke.push(h2s);
    if (s2h !== undefined) spokeToHub.push(s2h);

    diagnostics.push(...ruleDiags);
    ruleResults.push({
      index,
      strategy: rule.strategy,
      hubPaths: outcome.hubPaths,
      spokePaths: outcome.spokePaths,
      lossless: outcome.lossless,
      errors: ruleDiags.filter((d) => d.severity === "error"),
      warnings: ruleDiags.filter((d) => d.severity === "warning"),
    });
  });

  // The leftover scan: auto-cover identical leaves, report the rest
  // (docs/design/engine.md#leftover-scan-and-auto-coverage).
  const hubLeaves = flatten(input.hub);
  const identityPaths: string[][] = [];
  const spokeLeaves = new Map<string, Leaf>(flatten(input.spoke).map((l) => [l.path, l]));
  for (const leaf of hubLeaves) {
    if (hubClaims.has(leaf.path)) continue;
    const twin = spokeLeaves.get(leaf.path);
    if (input.depth === 0 && isMetadataPath(leaf.path) && twin !== undefined) {
      // convert() already carries metadata; an identity op here would run after the metadata
      // strategies and undo their stash/restore, so none is emitted.
      hubClaims.add(leaf.path);
      spokeClaims.add(twin.path);
      continue;
    }
    if (
      twin !== undefined && !spokeClaims.has(twin.path) && twin.kind === leaf.kind &&
      twin.opaque === leaf.opaque && twin.construct === leaf.construct
    ) {
      identityPaths.push(splitPath(leaf.path));
      hubClaims.add(leaf.path);
      spokeClaims.add(leaf.path);
    }
  }
  const uncovered = (side: "hub" | "spoke", leaf: Leaf) => {
    const path = qualify(side === "hub" ? input.hubPrefix : input.spokePrefix, leaf.path);
    const what = leaf.construct !== ""
      ? ` (a ${leaf.construct} construct, not descended into)`
      : "";
    const severity = input.policy === "Error" ? "error" : "warning";
    diagnostics.push({
      class: "uncovered-field",
      severity,
      message: `${side} field ${path}${what} is not covered by any rule and has no identical ${
        side === "hub" ? "spoke" : "hub"
      } field`,
      ruleIndex: -1,
      path,
      side,
    });
    if (severity === "error") {
      if (side === "hub") lossless.hubToSpoke = false;
      else lossless.spokeToHub = false;
    }
  };
  for (const leaf of hubLeaves) if (!hubClaims.has(leaf.path)) uncovered("hub", leaf);
  for (const leaf of spokeLeaves.values()) {
    if (!spokeClaims.has(leaf.path)) uncovered("spoke", leaf);
  }

  // Identity copies and the passthrough of undeclared nested keys run as one walk.
  const tree = carryTree(
    mergeKnownTrees(knownTree(input.hub), knownTree(input.spoke)),
    identityPaths,
  );
  // metadata is carried by convert() itself; copying it again would undo the metadata strategies.
  if (input.depth === 0) tree.metadata = "skip";
  const injected = injectedPassthrough(input.injectedRoots, tree, [...hubClaims, ...spokeClaims]);
  hubToSpoke.push(...injected, { op: "carry", tree });
  spokeToHub.push(...injected, { op: "carry", tree });

  return { ruleResults, diagnostics, lossless, hubToSpoke, spokeToHub };
}
