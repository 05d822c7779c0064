/**
 * Admission of a ConversionWebhookServer write or delete
 * (docs/design/server-children.md#admission-of-a-server): managed flags, the server policy
 * (./server_policy.ts), rollout timing, one default, the shard pool; a delete is refused while configs are served by the server.
 */
import {
  type ConversionWebhookServer,
  ConversionWebhookServerSchema,
  formatPath,
  MANAGED_WEBHOOK_SERVER_FLAGS,
} from "../../api/mod.ts";
import { isAssignedTo, type ServerInfo, shardPool } from "../../assign/resolve.ts";
import { parseGoDuration } from "../../engine/units.ts";
import { isRecord } from "../../lib/json.ts";
import { scanFlags } from "../server/container_args.ts";
import { childName } from "../server/names.ts";
import {
  type AdmissionDecision,
  type AdmissionOperation,
  type ConfigSummary,
  type ServerAdmissionContext,
  serverInfoOf,
} from "./context.ts";
import { beingDeleted, byText, deny, joinCapped, metadataOf, nameOf } from "./decision.ts";
import { webhookServerPolicyViolations } from "./server_policy.ts";

/** The annotation that lets a ConversionWebhookServer in use be deleted (break-glass). */
export const FORCE_DELETE_ANNOTATION = "conversion.terasky.com/allow-force-delete";

/** The defaults the rollout-timing rule assumes for unset fields and flags. */
export const DEFAULT_PRE_STOP_SLEEP_SECONDS = 5;
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 45;
export const DEFAULT_SHUTDOWN_TIMEOUT_SECONDS = 30;

/** The flag scan of `extraArgs`, shared with the reconcile's managed-flag check. */
export { type FlagUse, scanFlags } from "../server/container_args.ts";

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

  // 2. The server policy: namespace, image, ServiceAccount, volume types, managed env.
  const policy = ctx.serverPolicy ?? { policy: {}, operatorNamespace: "" };
  const violations = webhookServerPolicyViolations(
    server.spec,
    policy.policy,
    policy.operatorNamespace,
  );
  if (violations.length > 0) return deny(joinCapped(violations, "; "));

  // 3. Rollout timing: the pod must be able to drain within its grace period.
  const timing = rolloutTimingError(server);
  if (timing !== undefined) return deny(timing);

  // 4. At most one default.
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

  // 5. Sharding invariant on the fleet as it would be after the write.
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

/**
 * Whether `server` serves `config`: the resolver assigns it there, or the config's last applied
 * URL names the server's Service (a config mid-handover still depends on its old server).
 */
export function servedBy(
  config: ConfigSummary,
  servers: readonly ServerInfo[],
  server: string,
): boolean {
  if (isAssignedTo(config, servers, server)) return true;
  return (config.webhookURL ?? "").startsWith(`https://${childName(server)}.`);
}

/** The configs `server` serves, as `name (kind)`, sorted: what blocks its deletion. */
export function serverDependents(
  configs: readonly ConfigSummary[],
  servers: readonly ServerInfo[],
  server: string,
): string[] {
  return configs.filter((c) => servedBy(c, servers, server))
    .map((c) => `${c.name} (${c.kind})`).sort(byText);
}

/**
 * Whether `server` is the default instance, by the stored object or the resolver's list: then
 * unpinned configs depend on it too, which the delete messages point out.
 */
export function isDefaultInstance(
  stored: unknown,
  servers: readonly ServerInfo[],
  server: string,
): boolean {
  return servers.some((s) => s.name === server && s.default === true) ||
    (isRecord(stored) && isRecord(stored.spec) && stored.spec.default === true);
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
  const dependents = serverDependents(configs, servers, name);
  if (dependents.length === 0) return { allowed: true };
  const isDefault = isDefaultInstance(stored, servers, name);
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
 * Validation of a ConversionWebhookServer write or delete. On DELETE `oldObject` is the stored object
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
