/**
 * The pieces of a server's status that come from the configs and the other servers:
 * `DefaultConflict`, `status.assignedConfigs`, and whether a handover is in flight
 * (docs/design/server-children.md#status-beyond-readiness).
 */
import { resolveServer, type ServerInfo } from "../../assign/resolve.ts";
import type { ConditionInput, KubeObject } from "../../kube/mod.ts";
import type { ConfigSummaryWithPhase } from "../caches.ts";
import { childName } from "./names.ts";

type Json = Record<string, unknown>;

/** The stored status of `obj`, undefined when it has none. */
export function statusOf(obj: KubeObject): Json | undefined {
  const s = (obj as { status?: unknown }).status;
  return typeof s === "object" && s !== null ? s as Json : undefined;
}

/** One `status.assignedConfigs` entry: `xrdName` holds the target name for both kinds. */
export interface AssignedConfig {
  name: string;
  xrdName: string;
  phase?: string;
}

/** Code-unit order, as the status lists are sorted. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `servers` with the entry of `self.name` replaced by (or extended with) `self`. */
export function withServer(servers: readonly ServerInfo[], self: ServerInfo): ServerInfo[] {
  return [...servers.filter((s) => s.name !== self.name), self];
}

/**
 * The `DefaultConflict` condition of server `name`: when it is marked default and
 * so is at least one other server — True/`MultipleDefaults`, the defaults listed sorted. Never
 * auto-fixed. `undefined` ⇒ the condition is removed (resolved, or this server is not default).
 */
export function defaultConflictCondition(
  servers: readonly ServerInfo[],
  name: string,
): ConditionInput | undefined {
  if (servers.find((s) => s.name === name)?.default !== true) return undefined;
  const defaults = servers.filter((s) => s.default === true).map((s) => s.name).sort(compare);
  if (defaults.length < 2) return undefined;
  return {
    type: "DefaultConflict",
    status: "True",
    reason: "MultipleDefaults",
    message: `multiple ConversionWebhookServers are marked default: ${defaults.join(", ")}; ` +
      "unpinned configs outside a shard pool cannot be resolved until all but one set " +
      "spec.default: false",
  };
}

/**
 * `status.assignedConfigs`: the configs of both kinds the shared resolver assigns
 * to `name` (explicit ref, shard pool or default), sorted by config name. Desired assignment, not
 * proof of loading; a config that does not resolve is assigned to nobody.
 */
export function assignedConfigsOf(
  configs: readonly ConfigSummaryWithPhase[],
  servers: readonly ServerInfo[],
  name: string,
): AssignedConfig[] {
  const out: AssignedConfig[] = [];
  for (const c of configs) {
    const r = resolveServer(c, servers);
    if (!r.ok || r.server !== name) continue;
    out.push({
      name: c.name,
      xrdName: c.target,
      ...(c.phase === undefined || c.phase === "" ? {} : { phase: c.phase }),
    });
  }
  return out.sort((a, b) => compare(a.name, b.name) || compare(a.xrdName, b.xrdName));
}

/**
 * Whether a previously applied config (phase `Applied`/`Stale`) is mid-handover to or from
 * server `name`: it resolves here while its last applied endpoint names another server, or its
 * last applied endpoint names this server while it resolves elsewhere.
 */
export function handoverInFlight(
  configs: readonly ConfigSummaryWithPhase[],
  servers: readonly ServerInfo[],
  name: string,
): boolean {
  const prefix = `https://${childName(name)}.`;
  return configs.some((c) => {
    const url = c.webhookURL ?? "";
    if (url === "" || (c.phase !== "Applied" && c.phase !== "Stale")) return false;
    const r = resolveServer(c, servers);
    return r.ok && (r.server === name) !== url.startsWith(prefix);
  });
}
