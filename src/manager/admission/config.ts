/**
 * Admission of an XRDConversionConfig or CRDConversionConfig write
 * (docs/design/server-children.md#admission-of-a-config): the rules run in order and the first
 * failure rejects. Denials carry the engine's diagnostic class (and path), as `convctl validate`
 * prints them: `[structural] spec.spokes[0].version: …`, `[spoke v1] [path-not-found] spec.x: …`.
 */
import {
  type ConfigKind,
  type ConversionConfig,
  engineSpecOf,
  isStrategyName,
  parseConfig,
  targetNameOf,
  XRD_CONFIG_KIND,
} from "../../api/mod.ts";
import {
  type AnalysisResult,
  analyze,
  type Diagnostic,
  PARAMS_KEYS,
  paramsKeyOf,
  type SchemaSource,
  schemaSourceFromCRD,
  schemaSourceFromXRD,
  structuralError,
  translateRules,
  TranslationError,
} from "../../engine/mod.ts";
import { isRecord } from "../../lib/json.ts";
import type { AdmissionContext, AdmissionDecision, AdmissionOperation } from "./context.ts";
import { allow, beingDeleted, byText, deny, joinCapped, MAX_LISTED } from "./decision.ts";

function formatDiagnostic(d: Diagnostic): string {
  return d.path === "" ? `[${d.class}] ${d.message}` : `[${d.class}] ${d.path}: ${d.message}`;
}

const DISABLED_MESSAGE: Record<ConfigKind, string> = {
  XRDConversionConfig:
    "XRD conversion support is disabled on this installation (--enable-xrd-support=false)",
  CRDConversionConfig:
    "native CRD conversion support is disabled on this installation (--enable-crd-support=false)",
};

/**
 * The structure check beyond the engine's `structuralError`: each rule's one params block must be
 * the block of its `strategy` (caught here, at admission, rather than later at rule translation).
 */
function paramsMismatchError(rules: unknown, where: string): string | undefined {
  if (!Array.isArray(rules)) return undefined;
  for (let i = 0; i < rules.length; i++) {
    const rule: unknown = rules[i];
    const at = `${where}[${i}]`;
    if (!isRecord(rule) || typeof rule.strategy !== "string") continue;
    if (!isStrategyName(rule.strategy)) {
      return `${at}.strategy: unknown strategy ${JSON.stringify(rule.strategy)}`;
    }
    const expected = paramsKeyOf(rule.strategy);
    const found = PARAMS_KEYS.find((k) => Object.hasOwn(rule, k) && rule[k] !== null);
    if (found !== undefined && found !== expected) {
      return `${at}: strategy ${rule.strategy} requires the ${expected} params block, found ${found}`;
    }
    const forEach = rule.forEach;
    if (isRecord(forEach)) {
      const err = paramsMismatchError(forEach.rules, `${at}.forEach.rules`);
      if (err !== undefined) return err;
    }
  }
  return undefined;
}

function structureError(config: ConversionConfig): string | undefined {
  const spec = engineSpecOf(config);
  const err = structuralError(spec);
  if (err !== undefined) return err;
  for (let i = 0; i < spec.spokes.length; i++) {
    const mismatch = paramsMismatchError(spec.spokes[i].rules, `spec.spokes[${i}].rules`);
    if (mismatch !== undefined) return mismatch;
  }
  return undefined;
}

function analysisDenial(result: AnalysisResult, what: string): string | undefined {
  if (result.hardErrors.length > 0) {
    return joinCapped(result.hardErrors.map(formatDiagnostic), "; ");
  }
  const lines: string[] = [];
  for (const spoke of result.spokes) {
    for (const d of spoke.errors) lines.push(`[spoke ${spoke.version}] ${formatDiagnostic(d)}`);
  }
  if (lines.length === 0 && !result.hasErrors) return undefined;
  return `configuration is invalid against the live ${what}: ${
    lines.length === 0 ? "analysis reported errors" : joinCapped(lines, "; ")
  }`;
}

/**
 * Validation of an XRDConversionConfig or CRDConversionConfig write. `kind` is the kind
 * the webhook path serves; `object` the incoming object (CREATE/UPDATE), `oldObject` the stored
 * one (UPDATE/DELETE). DELETE (and CONNECT) are always allowed.
 */
export async function validateConfigAdmission(
  kind: ConfigKind,
  operation: AdmissionOperation,
  object: unknown,
  oldObject: unknown,
  ctx: AdmissionContext,
): Promise<AdmissionDecision> {
  if (operation !== "CREATE" && operation !== "UPDATE") return { allowed: true };
  if (operation === "UPDATE" && beingDeleted(oldObject)) return { allowed: true };
  const warnings: string[] = [];

  // 1. Feature disabled.
  if (!(kind === XRD_CONFIG_KIND ? ctx.features.xrd : ctx.features.crd)) {
    return deny(DISABLED_MESSAGE[kind]);
  }

  // 2. Structure (strict decode first: the typed shape the later rules read).
  const parsed = parseConfig(object);
  if (!parsed.ok) return deny(`[config-parse] ${joinCapped(parsed.errors, "; ")}`);
  const config = parsed.config;
  if (config.kind !== kind) {
    return deny(`[config-parse] kind: expected ${kind}, got ${config.kind}`);
  }
  const structural = structureError(config);
  if (structural !== undefined) return deny(`[structural] ${structural}`);

  // 3. One config per registry key (the bare target name, across both kinds).
  const name = config.metadata?.name ?? "";
  const target = targetNameOf(config);
  const configs = await ctx.listConfigs();
  const clash = configs
    .filter((c) => c.target === target && !(c.kind === kind && c.name === name))
    .map((c) => `${c.kind} ${JSON.stringify(c.name)}`)
    .sort(byText);
  if (clash.length > 0) {
    return deny(
      `target ${JSON.stringify(target)} is already configured by ${
        clash.join(", ")
      }: only one conversion config (of either kind) may target a resource`,
    );
  }

  // 4. webhookServerRef names a missing server: warning only.
  const ref = config.spec.webhookServerRef?.name ?? "";
  if (ref !== "") {
    const servers = await ctx.listServers();
    if (!servers.some((s) => s.name === ref)) {
      warnings.push(
        `webhookServerRef ${
          JSON.stringify(ref)
        } does not name an existing ConversionWebhookServer; the config will report Invalid until it does`,
      );
    }
  }

  // 5. Target missing: warning, no live analysis.
  const what = kind === XRD_CONFIG_KIND ? "XRD" : "CRD";
  const live = await ctx.getTarget(kind, target);
  if (live === undefined) {
    warnings.push(
      `target ${what} ${
        JSON.stringify(target)
      } not found; live schema analysis skipped (the controller analyses it once it exists)`,
    );
    return allow(warnings);
  }

  // 6. Rule translation.
  const spec = engineSpecOf(config);
  try {
    for (let i = 0; i < spec.spokes.length; i++) {
      translateRules(spec.spokes[i].rules, `spec.spokes[${i}].rules`);
    }
  } catch (e) {
    if (!(e instanceof TranslationError)) throw e;
    return deny(`[rule-translation] invalid rule configuration: ${e.message}`);
  }

  // 7. Engine analysis against the live target.
  let result: AnalysisResult;
  try {
    const source: SchemaSource = kind === XRD_CONFIG_KIND
      ? schemaSourceFromXRD(live)
      : schemaSourceFromCRD(live);
    result = analyze(source, spec);
  } catch (e) {
    return deny(
      `engine analysis against ${what} ${JSON.stringify(target)} failed: ${
        e instanceof Error ? e.message : String(e)
      }`,
    );
  }
  const denial = analysisDenial(result, `${what} ${JSON.stringify(target)}`);
  if (denial !== undefined) return deny(denial);
  for (const spoke of result.spokes) {
    for (const d of spoke.warnings) {
      if (warnings.length < MAX_LISTED) {
        warnings.push(`[spoke ${spoke.version}] ${formatDiagnostic(d)}`);
      }
    }
  }
  return allow(warnings);
}
