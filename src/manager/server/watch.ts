/**
 * The watch predicates of the server controller (wired in src/main/manager.ts): which config and
 * server events wake which servers.
 */
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
