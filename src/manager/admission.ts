/**
 * The manager's validating admission decisions (api.md §4.1, §4.2) as pure functions: everything
 * they read from the cluster comes through a small injected {@link AdmissionContext}, so they are
 * unit-testable without a cluster. admission_http.ts wraps them in the AdmissionReview protocol.
 *
 * The rules run in the spec's order and the first failure rejects. Denials of the config kinds
 * carry the engine's diagnostic class (and path), as `convctl validate` prints them:
 * `[structural] spec.spokes[0].version: …`, `[spoke v1] [path-not-found] spec.x: …`.
 *
 * One hardening beyond the spec: an UPDATE of an object that is already being deleted (the stored
 * copy has `deletionTimestamp`) is allowed unchecked, so that removing a finalizer can never be
 * wedged by a rule the object no longer satisfies (e.g. a target whose schema has since moved on).
 */
import {
  CONFIG_KINDS,
  type ConfigKind,
  type ConversionConfig,
  type ConversionWebhookServer,
  ConversionWebhookServerSchema,
  engineSpecOf,
  formatPath,
  isStrategyName,
  MANAGED_WEBHOOK_SERVER_FLAGS,
  parseConfig,
  targetNameOf,
  XRD_CONFIG_KIND,
} from "../api/mod.ts";
import { isAssignedTo, type ServerInfo, shardPool } from "../assign/resolve.ts";
import {
  type AnalysisResult,
  analyze,
  type Diagnostic,
  type JsonObject,
  PARAMS_KEYS,
  paramsKeyOf,
  type SchemaSource,
  schemaSourceFromCRD,
  schemaSourceFromXRD,
  structuralError,
  translateRules,
  TranslationError,
} from "../engine/mod.ts";
import { parseGoDuration } from "../engine/units.ts";

// ---------------------------------------------------------------------------------------------
// Types

export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

export type AdmissionDecision =
  | { allowed: true; warnings?: string[] }
  | { allowed: false; message: string };

/** What the rules read about a stored config (either kind). */
export interface ConfigSummary {
  kind: ConfigKind;
  name: string;
  /** The bare target name (`spec.targetXRD.name` / `spec.targetCRD.name`): the registry key. */
  target: string;
  webhookServerRef?: { name?: string } | null;
  /** `status.webhookURL`: the last endpoint applied to the target (ServedBy, api.md §3.4). */
  webhookURL?: string;
}

type MaybePromise<T> = T | Promise<T>;

/**
 * The cluster reads of the rules, injected. The manager backs them with its informer caches (or
 * live GETs); tests use in-memory fakes. A thrown error fails the review (HTTP layer: a 500
 * denial), never a silent allow.
 */
export interface AdmissionContext {
  /** The manager's `--enable-xrd-support` / `--enable-crd-support`. */
  features: { xrd: boolean; crd: boolean };
  /** The live target: the Crossplane XRD (XRD configs) or the CRD (CRD configs); undefined = absent. */
  getTarget(kind: ConfigKind, name: string): MaybePromise<JsonObject | undefined>;
  /** Every stored XRDConversionConfig and CRDConversionConfig. */
  listConfigs(): MaybePromise<readonly ConfigSummary[]>;
  /** Every stored ConversionWebhookServer. */
  listServers(): MaybePromise<readonly ServerInfo[]>;
}

export type ServerAdmissionContext = Pick<AdmissionContext, "listConfigs" | "listServers">;

/** The annotation that lets a ConversionWebhookServer in use be deleted (api.md §3.4). */
export const FORCE_DELETE_ANNOTATION = "conversion.terasky.com/allow-force-delete";

/** Defaults of api.md §4.2 rule 2. */
export const DEFAULT_PRE_STOP_SLEEP_SECONDS = 5;
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 45;
export const DEFAULT_SHUTDOWN_TIMEOUT_SECONDS = 30;

/** Most diagnostics named in one denial / most warnings returned (the apiserver caps them too). */
const MAX_LISTED = 20;

// ---------------------------------------------------------------------------------------------
// Adapters for the manager's caches

/** The summary of a parsed config. */
export function configSummaryOf(config: ConversionConfig): ConfigSummary {
  const ref = config.spec.webhookServerRef;
  return {
    kind: config.kind,
    name: config.metadata?.name ?? "",
    target: targetNameOf(config),
    ...(ref === undefined ? {} : { webhookServerRef: ref }),
    ...(config.status?.webhookURL === undefined ? {} : { webhookURL: config.status.webhookURL }),
  };
}

/** The resolver's view of a parsed ConversionWebhookServer. */
export function serverInfoOf(server: ConversionWebhookServer): ServerInfo {
  return {
    name: server.metadata?.name ?? "",
    default: server.spec.default,
    ...(server.spec.sharding === undefined ? {} : { sharding: server.spec.sharding }),
  };
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function metadataOf(obj: unknown): Record<string, unknown> {
  return isRecord(obj) && isRecord(obj.metadata) ? obj.metadata : {};
}

function nameOf(obj: unknown): string {
  const name = metadataOf(obj).name;
  return typeof name === "string" ? name : "";
}

function beingDeleted(obj: unknown): boolean {
  const ts = metadataOf(obj).deletionTimestamp;
  return typeof ts === "string" && ts !== "";
}

function deny(message: string): AdmissionDecision {
  return { allowed: false, message };
}

function allow(warnings: string[]): AdmissionDecision {
  return warnings.length === 0 ? { allowed: true } : { allowed: true, warnings };
}

function joinCapped(items: readonly string[], sep: string): string {
  const shown = items.slice(0, MAX_LISTED).join(sep);
  return items.length > MAX_LISTED
    ? `${shown}${sep}… and ${items.length - MAX_LISTED} more`
    : shown;
}

function formatDiagnostic(d: Diagnostic): string {
  return d.path === "" ? `[${d.class}] ${d.message}` : `[${d.class}] ${d.path}: ${d.message}`;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// ---------------------------------------------------------------------------------------------
// §4.1 XRD/CRD config validation

const DISABLED_MESSAGE: Record<ConfigKind, string> = {
  XRDConversionConfig:
    "XRD conversion support is disabled on this installation (--enable-xrd-support=false)",
  CRDConversionConfig:
    "native CRD conversion support is disabled on this installation (--enable-crd-support=false)",
};

/**
 * The structure check of §4.1 rule 2 beyond the engine's `structuralError`: each rule's one
 * params block must be the block of its `strategy` (the reference leaves that to the engine's
 * translation stage; api.md asks the re-implementation to reject it here).
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
 * §4.1: validation of an XRDConversionConfig or CRDConversionConfig write. `kind` is the kind
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

/** True when `kind` is one of the two config kinds. */
export function isConfigKind(kind: string): kind is ConfigKind {
  return (CONFIG_KINDS as readonly string[]).includes(kind);
}

// ---------------------------------------------------------------------------------------------
// §4.2 ConversionWebhookServer validation

/** One flag occurrence in an argument list: `--name=value`, `--name value`, `-name`, …. */
interface FlagUse {
  name: string;
  /** The token as written. */
  token: string;
  /** undefined: no inline value and no following value token. */
  value: string | undefined;
}

/**
 * Go-flag-style scan: a token starting with `-` is a flag (one or two dashes, the single-dash form
 * included as hardening); without `=value`, a following token that does not start with `-` is
 * its value and is skipped.
 */
export function scanFlags(args: readonly string[]): FlagUse[] {
  const out: FlagUse[] = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i];
    if (!token.startsWith("-") || token === "-" || token === "--") continue;
    const body = token.startsWith("--") ? token.slice(2) : token.slice(1);
    const eq = body.indexOf("=");
    if (eq >= 0) {
      out.push({ name: body.slice(0, eq), token, value: body.slice(eq + 1) });
      continue;
    }
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith("-")) {
      out.push({ name: body, token, value: next });
      i++;
    } else {
      out.push({ name: body, token, value: undefined });
    }
  }
  return out;
}

function managedFlagError(args: readonly string[]): string | undefined {
  const managed = new Set<string>(MANAGED_WEBHOOK_SERVER_FLAGS);
  const hits = scanFlags(args).filter((f) => managed.has(f.name));
  if (hits.length === 0) return undefined;
  const names = [...new Set(hits.map((f) => `--${f.name}`))];
  return `spec.extraArgs: ${names.join(", ")} ${
    names.length === 1 ? "is" : "are"
  } managed by the operator and must not be set (managed flags: ${
    MANAGED_WEBHOOK_SERVER_FLAGS.map((f) => `--${f}`).join(", ")
  })`;
}

function rolloutTimingError(server: ConversionWebhookServer): string | undefined {
  const args = server.spec.extraArgs ?? [];
  let shutdownSeconds = DEFAULT_SHUTDOWN_TIMEOUT_SECONDS;
  let source = "default";
  const uses = scanFlags(args).filter((f) => f.name === "shutdown-timeout");
  const last = uses.at(-1); // Go's flag package: the last occurrence wins.
  if (last !== undefined) {
    const ns = last.value === undefined ? undefined : parseGoDuration(last.value);
    if (ns === undefined || ns <= 0n) {
      return `spec.extraArgs: --shutdown-timeout ${
        last.value === undefined ? "has no value" : JSON.stringify(last.value)
      } is not a positive Go duration (e.g. 30s, 1m)`;
    }
    shutdownSeconds = Number(ns) / 1e9;
    source = `--shutdown-timeout=${last.value}`;
  }
  const preStop = server.spec.rollout?.preStopSleepSeconds ?? DEFAULT_PRE_STOP_SLEEP_SECONDS;
  const grace = server.spec.rollout?.terminationGracePeriodSeconds ??
    DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  const needed = preStop + shutdownSeconds;
  if (needed <= grace) return undefined;
  return `spec.rollout: preStopSleepSeconds (${preStop}) + webhook-server shutdown timeout (${shutdownSeconds}s, ${source}) = ${needed}s exceeds terminationGracePeriodSeconds (${grace}); set terminationGracePeriodSeconds to at least ${
    Math.ceil(needed)
  }, or shorten the others`;
}

function parseServer(obj: unknown): { ok: true; server: ConversionWebhookServer } | {
  ok: false;
  message: string;
} {
  const result = ConversionWebhookServerSchema.safeParse(obj);
  if (result.success) return { ok: true, server: result.data };
  return {
    ok: false,
    message: `invalid ConversionWebhookServer: ${
      joinCapped(result.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`), "; ")
    }`,
  };
}

async function validateServerWrite(
  object: unknown,
  ctx: ServerAdmissionContext,
): Promise<AdmissionDecision> {
  const parsed = parseServer(object);
  if (!parsed.ok) return deny(parsed.message);
  const server = parsed.server;
  const name = server.metadata?.name ?? "";

  // 1. Managed flags in extraArgs.
  const managed = managedFlagError(server.spec.extraArgs ?? []);
  if (managed !== undefined) return deny(managed);

  // 2. [P14] Rollout timing.
  const timing = rolloutTimingError(server);
  if (timing !== undefined) return deny(timing);

  // 3. At most one default.
  const stored = await ctx.listServers();
  if (server.spec.default) {
    const others = stored.filter((s) => s.name !== name && s.default === true).map((s) => s.name)
      .sort(byText);
    if (others.length > 0) {
      return deny(
        `spec.default: ConversionWebhookServer ${
          others.map((n) => JSON.stringify(n)).join(", ")
        } is already marked default; only one instance may be the default`,
      );
    }
  }

  // 4. [P15] Sharding invariant on the fleet as it would be after the write.
  const fleet = [...stored.filter((s) => s.name !== name), serverInfoOf(server)];
  const pool = shardPool(fleet).map((s) => s.name);
  if (pool.length > 0) {
    const outside = fleet.filter((s) => s.default === true && !pool.includes(s.name))
      .map((s) => s.name).sort(byText);
    if (outside.length > 0) {
      return deny(
        `sharding: the default ConversionWebhookServer ${
          outside.map((n) => JSON.stringify(n)).join(", ")
        } is not a member of the shard pool [${
          pool.join(", ")
        }]; while a pool exists the default must be a member of it (enable sharding on the default first, or unset default)`,
      );
    }
  }
  return { allowed: true };
}

/** ServedBy (api.md §3.4): assigned by the resolver, or the last applied URL names its Service. */
export function servedBy(
  config: ConfigSummary,
  servers: readonly ServerInfo[],
  server: string,
): boolean {
  if (isAssignedTo(config, servers, server)) return true;
  return (config.webhookURL ?? "").startsWith(`https://${server}-webhook-server.`);
}

async function validateServerDelete(
  stored: unknown,
  ctx: ServerAdmissionContext,
): Promise<AdmissionDecision> {
  const meta = metadataOf(stored);
  const annotations = isRecord(meta.annotations) ? meta.annotations : {};
  // 1. Break-glass.
  if (annotations[FORCE_DELETE_ANNOTATION] === "true") return { allowed: true };
  // 2. Dependents.
  const name = nameOf(stored);
  const [configs, servers] = await Promise.all([ctx.listConfigs(), ctx.listServers()]);
  const dependents = configs.filter((c) => servedBy(c, servers, name))
    .map((c) => `${c.name} (${c.kind})`).sort(byText);
  if (dependents.length === 0) return { allowed: true };
  const isDefault = servers.some((s) => s.name === name && s.default === true) ||
    (isRecord(stored) && isRecord(stored.spec) && stored.spec.default === true);
  return deny(
    `ConversionWebhookServer ${JSON.stringify(name)} is in use by ${dependents.length} config(s): ${
      joinCapped(dependents, ", ")
    }; move or delete them first, or annotate the server with ${FORCE_DELETE_ANNOTATION}: "true" to force the deletion${
      isDefault
        ? "; note: it is the default instance, so unpinned configs (without webhookServerRef) depend on it too"
        : ""
    }`,
  );
}

/**
 * §4.2: validation of a ConversionWebhookServer write. On DELETE `oldObject` is the stored object
 * (the apiserver sends no `object`).
 */
export async function validateServerAdmission(
  operation: AdmissionOperation,
  object: unknown,
  oldObject: unknown,
  ctx: ServerAdmissionContext,
): Promise<AdmissionDecision> {
  switch (operation) {
    case "CREATE":
      return await validateServerWrite(object, ctx);
    case "UPDATE":
      if (beingDeleted(oldObject)) return { allowed: true };
      return await validateServerWrite(object, ctx);
    case "DELETE":
      return await validateServerDelete(oldObject ?? object, ctx);
    default:
      return { allowed: true };
  }
}
