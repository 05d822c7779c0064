/**
 * Config → engine rules: the structural checks and the
 * translation of each rule's params block (stage 3).
 */
import { isJsonObject } from "../lib/json.ts";
import { qualifiedNameError } from "./go.ts";
import { type EngineRule, ParamReader, TranslationError } from "./strategy.ts";
import { strategyByName } from "./strategies/mod.ts";
import {
  type ConversionConfigSpec,
  type JsonValue,
  PARAMS_KEYS,
  paramsKeyOf,
  type StrategyName,
} from "./types.ts";

/**
 * Stage 2. Returns the first failure as a message naming the offending path, or undefined.
 * Run by admission and `convctl validate`/`test`.
 */
export function structuralError(spec: ConversionConfigSpec): string | undefined {
  const policy = spec.unmappedFieldPolicy ?? "";
  if (policy === "Warn" && (spec.unmappedFieldReason ?? "").trim() === "") {
    return "spec.unmappedFieldReason: required (non-blank) when unmappedFieldPolicy is Warn";
  }
  if (!Array.isArray(spec.spokes) || spec.spokes.length === 0) {
    return "spec.spokes: at least one spoke is required";
  }
  const seen = new Set<string>();
  for (let i = 0; i < spec.spokes.length; i++) {
    const spoke = spec.spokes[i];
    const where = `spec.spokes[${i}]`;
    if (spoke.version === spec.hubVersion) {
      return `${where}.version: ${JSON.stringify(spoke.version)} is the hub version`;
    }
    if (seen.has(spoke.version)) {
      return `${where}.version: duplicate spoke version ${JSON.stringify(spoke.version)}`;
    }
    seen.add(spoke.version);
    const err = rulesStructuralError(spoke.rules ?? [], `${where}.rules`, 0);
    if (err !== undefined) return err;
  }
  return undefined;
}

function rulesStructuralError(rules: unknown, where: string, depth: number): string | undefined {
  if (!Array.isArray(rules)) return `${where}: expected a list of rules`;
  for (let i = 0; i < rules.length; i++) {
    const rule: unknown = rules[i];
    const at = `${where}[${i}]`;
    if (!isJsonObject(rule)) return `${at}: expected a rule object`;
    const blocks = PARAMS_KEYS.filter((k) => Object.hasOwn(rule, k) && rule[k] !== null);
    if (blocks.length !== 1) {
      return `${at}: exactly one params block is required (found ${
        blocks.length === 0 ? "none" : blocks.join(", ")
      })`;
    }
    const when = rule.when;
    if (when !== undefined && when !== null) {
      if (!isJsonObject(when) || typeof when.path !== "string" || when.path.trim() === "") {
        return `${at}.when.path: must be a non-blank path`;
      }
    }
    if (rule.strategy === "CEL" && rule.acknowledgeLossy !== true) {
      return `${at}: strategy CEL is always lossy and requires acknowledgeLossy: true`;
    }
    const fromLabel = rule.fromLabel;
    if (isJsonObject(fromLabel) && fromLabel.serialization === "JSON") {
      return `${at}.fromLabel.serialization: JSON is not allowed for labels (use String)`;
    }
    for (const key of ["toLabel", "fromLabel"]) {
      const block = rule[key];
      if (isJsonObject(block) && typeof block.key === "string") {
        const reason = qualifiedNameError(block.key);
        if (reason !== undefined) return `${at}.${key}.key: ${reason}`;
      }
    }
    const forEach = rule.forEach;
    if (isJsonObject(forEach)) {
      if (depth + 1 >= 2 && Array.isArray(forEach.rules)) {
        const nestedForEach = forEach.rules.findIndex((r) =>
          isJsonObject(r) && isJsonObject(r.forEach)
        );
        if (nestedForEach >= 0) {
          return `${at}.forEach.rules[${nestedForEach}]: ForEach nesting depth exceeds the supported maximum of 2`;
        }
      }
      const err = rulesStructuralError(forEach.rules ?? [], `${at}.forEach.rules`, depth + 1);
      if (err !== undefined) return err;
    }
  }
  return undefined;
}

/** Stage 3: translate a rule list; throws TranslationError naming the offending path. */
export function translateRules(rules: unknown, where: string): EngineRule[] {
  if (rules === undefined || rules === null) return [];
  if (!Array.isArray(rules)) throw new TranslationError(`${where}: expected a list of rules`);
  return rules.map((rule, i) => translateRule(rule, `${where}[${i}]`));
}

function translateRule(rule: unknown, at: string): EngineRule {
  if (!isJsonObject(rule)) throw new TranslationError(`${at}: expected a rule object`);
  const name = rule.strategy;
  if (typeof name !== "string") throw new TranslationError(`${at}.strategy: required`);
  const def = strategyByName(name);
  if (def === undefined) {
    throw new TranslationError(`${at}.strategy: unknown strategy ${JSON.stringify(name)}`);
  }
  const key = paramsKeyOf(name as StrategyName);
  const block = rule[key];
  if (!isJsonObject(block)) {
    throw new TranslationError(`${at}: strategy ${name} requires a ${key} params block`);
  }
  let params: unknown;
  try {
    params = def.translate(new ParamReader(block, `${at}.${key}`, translateRules));
  } catch (e) {
    if (e instanceof TranslationError) throw e;
    throw new TranslationError(`${at}.${key}: ${(e as Error).message}`);
  }
  let when: EngineRule["when"];
  if (rule.when !== undefined && rule.when !== null) {
    if (!isJsonObject(rule.when) || typeof rule.when.path !== "string") {
      throw new TranslationError(`${at}.when: expected {path, equals}`);
    }
    when = { path: rule.when.path, equals: (rule.when.equals ?? null) as JsonValue };
  }
  const ack = rule.acknowledgeLossy;
  if (ack !== undefined && ack !== null && typeof ack !== "boolean") {
    throw new TranslationError(`${at}.acknowledgeLossy: expected a boolean`);
  }
  return {
    strategy: name as StrategyName,
    params,
    acknowledgeLossy: ack === true,
    reason: typeof rule.reason === "string" ? rule.reason : "",
    when,
  };
}
