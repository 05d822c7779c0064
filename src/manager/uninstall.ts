/**
 * `manager --prepare-uninstall`: the one-shot mode the chart's Helm `pre-delete` hook Job runs
 * while the manager Deployment and its admission webhook still exist (docs/installation.md
 * "Uninstalling"). Helm deletes the kinds it does not know (ConversionWebhookServer) after the
 * manager and its admission Service, so without this step the CWS DELETE would be refused by the
 * unreachable `failurePolicy: Fail` webhook and, with the manager gone, the CWS finalizer
 * (`conversion.terasky.com/protect-in-use`) would never be removed.
 *
 * Steps ({@link prepareUninstall}, dependencies injected):
 *
 * 1. List both config kinds (a kind that is not served counts as none). Any config left ⇒ exit 1
 *    with a message naming them: uninstalling would strand the conversion of their targets (the
 *    target would keep pointing at a webhook server that is about to disappear). Deleting a
 *    config reverts its target; the delete guard's break-glass annotation is named.
 * 2. Delete every ConversionWebhookServer — all of them, not only the chart's: the manager being
 *    uninstalled is the only controller of the kind, so any server left behind would keep its
 *    finalizer (undeletable without a manual edit) and unmanaged children. With no config left,
 *    no server serves anything.
 * 3. Wait until none is left: the running manager removes their finalizers, their children are
 *    garbage-collected. On timeout ⇒ exit 1 naming the servers left (with their `DeletionBlocked`
 *    message, if any).
 *
 * `timeoutMs` (`--prepare-uninstall-timeout`) bounds the whole run: retryable API failures (e.g.
 * 429 "storage is (re)initializing" of a kind nobody listed yet) are retried within it, others
 * exit 1 at once.
 *
 * Logs JSON lines (logger `manager.uninstall`). Needs what the manager needs (list configs;
 * list/delete ConversionWebhookServers): the chart runs it with the manager's ServiceAccount.
 */
import { type ConfigKind, CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "../api/mod.ts";
import { isNonRetryable, isNotFound, KubeClient, type KubeObject } from "../kube/mod.ts";
import { createLogger, formatDuration, type Logger } from "../obs/log.ts";
import { ALLOW_UNSAFE_DELETE_ANNOTATION } from "./config/types.ts";
import { CONFIG_RESOURCES, SERVER_RESOURCE } from "../api/resources.ts";
import type { ManagerFlags } from "./flags.ts";

export interface UninstallDeps {
  /** The configs of one kind; `[]` when the kind is not served. */
  listConfigs(kind: ConfigKind): Promise<KubeObject[]>;
  /** Every ConversionWebhookServer; `[]` when the kind is not served. */
  listServers(): Promise<KubeObject[]>;
  /** DELETE one server; already gone is fine. */
  deleteServer(name: string): Promise<void>;
  /**
   * Whether a failed call is worth retrying (a busy or starting apiserver: 429, 5xx, network);
   * such calls are retried every `pollMs` within the timeout, any other failure exits 1 at once.
   */
  isRetryable(e: unknown): boolean;
  sleep(ms: number): Promise<void>;
  now(): number;
  logger: Pick<Logger, "info" | "warn" | "error">;
}

export interface UninstallOptions {
  timeoutMs: number;
  /** Between two looks at the servers (and two tries of a call); default 1 s. */
  pollMs?: number;
}

export interface UninstallResult {
  /** The process exit code: 0 prepared, 1 refused or failed. */
  code: 0 | 1;
  message: string;
}

const KINDS: readonly ConfigKind[] = [XRD_CONFIG_KIND, CRD_CONFIG_KIND];
const MAX_NAMES = 20;

function nameList(items: string[]): string {
  const shown = items.slice(0, MAX_NAMES).join(", ");
  return items.length > MAX_NAMES ? `${shown} … and ${items.length - MAX_NAMES} more` : shown;
}

function deletionBlocked(cws: KubeObject): string | undefined {
  const conds = (cws.status as { conditions?: Array<Record<string, string>> } | undefined)
    ?.conditions;
  const c = conds?.find((x) => x.type === "DeletionBlocked" && x.status === "True");
  return c?.message;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Runs the three steps; never throws (failures are a result with code 1, already logged). */
export async function prepareUninstall(
  deps: UninstallDeps,
  opts: UninstallOptions,
): Promise<UninstallResult> {
  const log = deps.logger;
  const fail = (message: string, fields?: Record<string, unknown>): UninstallResult => {
    log.error(message, fields);
    return { code: 1, message };
  };
  const deadline = deps.now() + opts.timeoutMs;
  const pollMs = opts.pollMs ?? 1000;
  const pause = () => deps.sleep(Math.max(0, Math.min(pollMs, deadline - deps.now())));
  /** `fn`, retried while it fails retryably and time is left; else its last error is thrown. */
  const retrying = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await fn();
      } catch (e) {
        if (!deps.isRetryable(e) || deps.now() >= deadline) throw e;
        log.warn(`${what} failed; retrying`, { error: e });
        await pause();
      }
    }
  };

  // 1. No config may be left.
  const configs: string[] = [];
  for (const kind of KINDS) {
    let items: KubeObject[];
    try {
      items = await retrying(`listing ${kind}s`, () => deps.listConfigs(kind));
    } catch (e) {
      return fail(`cannot prepare the uninstall: listing ${kind}s failed: ${errorText(e)}`, {
        error: e,
      });
    }
    for (const c of items) {
      const deleting = c.metadata?.deletionTimestamp ? ", being deleted" : "";
      configs.push(`${c.metadata?.name ?? "?"} (${kind}${deleting})`);
    }
  }
  if (configs.length > 0) {
    configs.sort();
    return fail(
      `cannot uninstall: ${configs.length} conversion config(s) still exist: ${
        nameList(configs)
      }. Uninstalling now would strand the conversion of their targets (they would keep ` +
        `pointing at webhook servers that are about to be removed). Delete the configs first ` +
        `(each delete reverts its target's conversion; a config whose target still serves ` +
        `more than one version or stores objects at an old version is held until its storage ` +
        `is migrated, or needs the annotation ${ALLOW_UNSAFE_DELETE_ANNOTATION}=true), ` +
        `then uninstall again`,
      { configs: configs.length },
    );
  }
  log.info("no conversion configs left", { kinds: [...KINDS] });

  // 2. Delete every server.
  let servers: KubeObject[];
  try {
    servers = await retrying("listing ConversionWebhookServers", () => deps.listServers());
  } catch (e) {
    return fail(
      `cannot prepare the uninstall: listing ConversionWebhookServers failed: ${errorText(e)}`,
      { error: e },
    );
  }
  for (const s of servers) {
    const name = s.metadata?.name ?? "";
    if (s.metadata?.deletionTimestamp) {
      log.info("ConversionWebhookServer already being deleted", { name });
      continue;
    }
    try {
      await retrying(`deleting ConversionWebhookServer ${name}`, () => deps.deleteServer(name));
      log.info("ConversionWebhookServer deleted", { name });
    } catch (e) {
      return fail(
        `cannot prepare the uninstall: deleting ConversionWebhookServer ${name} failed: ${
          errorText(e)
        }`,
        { name, error: e },
      );
    }
  }

  // 3. Wait until they are gone (the running manager removes their finalizers).
  let left = servers;
  let lastError: unknown;
  for (;;) {
    try {
      left = await deps.listServers();
      lastError = undefined;
      if (left.length === 0) break;
    } catch (e) {
      lastError = e;
      log.warn("listing ConversionWebhookServers failed; retrying", { error: e });
    }
    if (deps.now() >= deadline) {
      const what = left.map((s) => {
        const blocked = deletionBlocked(s);
        return `${s.metadata?.name ?? "?"}${blocked ? ` (${blocked})` : ""}`;
      }).sort();
      return fail(
        `cannot prepare the uninstall: after ${formatDuration(opts.timeoutMs)} ` +
          `${left.length} ConversionWebhookServer(s) still exist: ${nameList(what)}` +
          (lastError !== undefined ? ` (last list error: ${errorText(lastError)})` : "") +
          `. Is the manager running? It removes their finalizers`,
        { servers: left.length },
      );
    }
    await pause();
  }
  const message = `uninstall prepared: ${servers.length} ConversionWebhookServer(s) deleted`;
  log.info(message, { servers: servers.map((s) => s.metadata?.name ?? "") });
  return { code: 0, message };
}

/** The injected dependencies backed by a client. */
export function clientUninstallDeps(client: KubeClient, logger: Logger): UninstallDeps {
  const served = async (list: () => Promise<KubeObject[]>) => {
    try {
      return await list();
    } catch (e) {
      if (isNotFound(e)) return [];
      throw e;
    }
  };
  return {
    listConfigs: (kind) =>
      served(async () => (await client.listAll(CONFIG_RESOURCES[kind])).items ?? []),
    listServers: () => served(async () => (await client.listAll(SERVER_RESOURCE)).items ?? []),
    async deleteServer(name) {
      try {
        await client.delete(SERVER_RESOURCE, name);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    },
    isRetryable: (e) => !isNonRetryable(e),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    now: () => Date.now(),
    logger,
  };
}

/** `manager --prepare-uninstall` (src/main/manager.ts): the exit code. */
export async function runPrepareUninstall(flags: ManagerFlags): Promise<number> {
  const logger = createLogger("manager.uninstall");
  let client: KubeClient;
  try {
    client = await KubeClient.fromEnvironment({ kubeconfig: flags.kubeconfig || undefined });
  } catch (e) {
    logger.error("cannot load Kubernetes client configuration", { error: e });
    return 1;
  }
  try {
    logger.info("preparing the uninstall", {
      timeout: formatDuration(flags.prepareUninstallTimeoutMs),
    });
    const result = await prepareUninstall(clientUninstallDeps(client, logger), {
      timeoutMs: flags.prepareUninstallTimeoutMs,
    });
    return result.code;
  } finally {
    client.close();
  }
}
