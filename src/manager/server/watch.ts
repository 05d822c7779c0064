/**
 * The watch predicates of the server controller (wired in src/manager/server_controller.ts): which
 * config, server and served-target Lease events wake which servers.
 */
import {
  SERVED_TARGETS_ANNOTATION,
  SERVED_TARGETS_TRUNCATED_ANNOTATION,
  WEBHOOK_SERVER_LABEL,
} from "../../api/served_lease.ts";
import type { KubeObject } from "../../kube/mod.ts";
import { compare } from "./status.ts";

type WatchEvent = "add" | "update" | "delete";

function assignmentView(obj: KubeObject | undefined): unknown {
  const o = obj as {
    spec?: {
      webhookServerRef?: unknown;
      targetXRD?: { name?: unknown };
      targetCRD?: { name?: unknown };
    };
    status?: { phase?: unknown; webhookURL?: unknown };
  } | undefined;
  return [
    o?.spec?.webhookServerRef ?? null,
    o?.spec?.targetXRD?.name ?? null,
    o?.spec?.targetCRD?.name ?? null,
    o?.status?.phase ?? null,
    o?.status?.webhookURL ?? null,
  ];
}

/**
 * Config → every server: creates and deletes pass; an update passes only when what the servers'
 * status reads changed (`webhookServerRef`, the target name, `status.phase`, `status.webhookURL`),
 * so the config controller's own status writes do not wake every server.
 */
export function configAffectsServers(
  event: WatchEvent,
  obj: KubeObject,
  old?: KubeObject,
): boolean {
  if (event !== "update") return true;
  return JSON.stringify(assignmentView(obj)) !== JSON.stringify(assignmentView(old));
}

function isDefaultServer(obj: KubeObject | undefined): boolean {
  return (obj as { spec?: { default?: unknown } } | undefined)?.spec?.default === true;
}

/**
 * Server → every default server (for `DefaultConflict`): a default server created or
 * deleted, or `spec.default` flipped.
 */
export function defaultFlagChanged(event: WatchEvent, obj: KubeObject, old?: KubeObject): boolean {
  return event === "update" ? isDefaultServer(obj) !== isDefaultServer(old) : isDefaultServer(obj);
}

/** The names of the servers marked default in `servers` (the DefaultConflict fan-out). */
export function defaultServerNames(servers: readonly KubeObject[]): string[] {
  return servers.filter(isDefaultServer).map((s) => s.metadata?.name ?? "").sort(compare);
}

/** The server a served-target Lease reports for (its `conversion.terasky.com/webhook-server`). */
export function leaseServer(obj: KubeObject): string | undefined {
  const name = obj.metadata?.labels?.[WEBHOOK_SERVER_LABEL];
  return name === undefined || name === "" ? undefined : name;
}

function servedReport(obj: KubeObject | undefined): [string | null, string | null] {
  const a = obj?.metadata?.annotations;
  return [a?.[SERVED_TARGETS_ANNOTATION] ?? null, a?.[SERVED_TARGETS_TRUNCATED_ANNOTATION] ?? null];
}

/**
 * Lease → its server: creates and deletes pass; an update only when the report (the
 * served-targets or the truncated annotation) or the instance label changed, so the replicas'
 * 30 s heartbeats (`renewTime`) wake nothing. Staleness is evaluated whenever the server is next
 * reconciled.
 */
export function servedReportChanged(
  event: WatchEvent,
  obj: KubeObject,
  old?: KubeObject,
): boolean {
  if (event !== "update") return true;
  return JSON.stringify([servedReport(obj), leaseServer(obj) ?? null]) !==
    JSON.stringify([servedReport(old), old === undefined ? null : leaseServer(old) ?? null]);
}
