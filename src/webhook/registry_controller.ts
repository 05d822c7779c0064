/**
 * The registry controller's reconcile (docs/design/webhook.md#the-per-config-reconcile) and the
 * initial sync built on it (docs/design/webhook.md#the-initial-sync).
 * It decides, per config, whether this replica serves the config's target (the shared resolver
 * of src/assign), compiles it (possibly in a Worker) and installs the result in the registry.
 * Business failures (missing target, invalid rules, analysis errors) are recorded in the registry
 * and are not errors; only failed reads are, so they are retried.
 */
import { resolveServer, type ServerInfo } from "../assign/resolve.ts";
import type { JsonObject } from "../engine/mod.ts";
import type { ConfigObject } from "./compile.ts";
import { targetOf } from "./compile.ts";
import type { Compiler, SyncPlan } from "./compile_pool.ts";
import type { CompileResult, ConfigKind } from "./compiled.ts";

/** A config as read from the cache, with what the reconcile needs beyond compile. */
export interface CachedConfig extends ConfigObject {
  metadata: ConfigObject["metadata"] & { deletionTimestamp?: string };
}

/** Reads of the replica's informer caches. Throwing means an infrastructure failure. */
export interface ClusterView {
  getConfig(kind: ConfigKind, name: string): CachedConfig | undefined;
  listConfigs(kind: ConfigKind): CachedConfig[];
  listServers(): ServerInfo[];
  /** The live CRD/XRD manifest, or undefined when it does not exist. */
  getTarget(kind: ConfigKind, name: string): JsonObject | undefined;
}

/** The registry operations the controller uses. */
export interface RegistryWriter {
  install(result: CompileResult, now: Date): void;
  remove(target: string): void;
  has(target: string): boolean;
}

export interface RegistryControllerOptions {
  /** This replica's ConversionWebhookServer name. */
  serverName: string;
  view: ClusterView;
  registry: RegistryWriter;
  compile: Compiler;
  /** How long a target that moved away keeps being served after it stops pointing here. */
  drainMs?: number;
  now?: () => number;
  /** Called after every install (metrics, Lease notification). */
  onInstalled?: (result: CompileResult) => void;
  /** Called after a removal. */
  onRemoved?: (target: string) => void;
  /** Debug-level decision log (which branch a reconcile took, and why). */
  logger?: { debug(msg: string, fields?: Record<string, unknown>): void };
}

export interface ReconcileResult {
  requeueAfter?: number;
}

/** The Service name the manager gives a server's webhook Deployment. */
export function serviceNameOf(server: string): string {
  return `${server}-webhook-server`;
}

function pointedServiceName(target: JsonObject): string | undefined {
  const spec = target.spec as JsonObject | undefined;
  const conversion = spec?.conversion as JsonObject | undefined;
  const webhook = conversion?.webhook as JsonObject | undefined;
  const clientConfig = webhook?.clientConfig as JsonObject | undefined;
  const service = clientConfig?.service as JsonObject | undefined;
  return typeof service?.name === "string" ? service.name : undefined;
}

export class RegistryController {
  private readonly remembered = new Map<string, string>();
  private readonly drains = new Map<string, number>();
  private readonly drainMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: RegistryControllerOptions) {
    this.drainMs = opts.drainMs ?? 30_000;
    this.now = opts.now ?? Date.now;
  }

  private remove(target: string): void {
    if (!this.opts.registry.has(target)) return;
    this.opts.registry.remove(target);
    this.opts.onRemoved?.(target);
  }

  private install(result: CompileResult): void {
    this.opts.registry.install(result, new Date(this.now()));
    this.opts.onInstalled?.(result);
  }

  /** One reconcile of config `kind/name`; `compile` overrides the controller's compiler. */
  async reconcile(
    kind: ConfigKind,
    name: string,
    compile: Compiler = this.opts.compile,
  ): Promise<ReconcileResult> {
    const { view, serverName } = this.opts;
    const key = `${kind}/${name}`;
    const config = view.getConfig(kind, name);
    if (config === undefined) {
      // Gone (its finalizer ran the revert): the apiserver may still call for a while, as
      // after a move — drain, then forget. (The reference forgot at once.)
      const target = this.remembered.get(key);
      if (target === undefined || !this.opts.registry.has(target)) {
        this.remembered.delete(key);
        this.drains.delete(key);
        return {};
      }
      return this.drain(key, target, () => this.remembered.delete(key));
    }
    const targetName = targetOf(kind, config);
    const previous = this.remembered.get(key);
    if (previous !== undefined && previous !== targetName) this.remove(previous);
    this.remembered.set(key, targetName);

    const resolution = resolveServer(
      { target: targetName, webhookServerRef: config.spec.webhookServerRef },
      view.listServers(),
    );
    // A deleting config is nobody's any more, but while its delete is blocked (or its revert
    // not yet written) the target still points here: it keeps being served, like any target
    // still pointed at. (The reference forgot it on the deletion mark, stranding every read.)
    const deleting = config.metadata.deletionTimestamp !== undefined;
    const mine = !deleting && resolution.ok && resolution.server === serverName;
    const target = view.getTarget(kind, targetName);
    this.opts.logger?.debug("reconcile", {
      key,
      target: targetName,
      mine,
      assignment: resolution.ok ? resolution.server : resolution.error,
      targetFound: target !== undefined,
    });
    if (target === undefined) {
      this.drains.delete(key);
      if (!mine) this.remove(targetName);
      else this.install(await compile(kind, config, undefined));
      return {};
    }
    if (!mine && pointedServiceName(target) !== serviceNameOf(serverName)) {
      if (!this.opts.registry.has(targetName)) {
        this.drains.delete(key);
        return {};
      }
      // Held but no longer ours: keep serving the current plan for the drain period, since
      // the apiserver keeps calling this Service for a while after the target is repointed.
      return this.drain(key, targetName);
    }
    this.drains.delete(key);
    this.install(await compile(kind, config, target));
    return {};
  }

  /** Keeps `target`'s plan until the drain deadline of `key`, then removes it. */
  private drain(key: string, target: string, onRemoved?: () => void): ReconcileResult {
    const deadline = this.drains.get(key) ?? this.now() + this.drainMs;
    this.drains.set(key, deadline);
    const remaining = deadline - this.now();
    if (remaining > 0) return { requeueAfter: remaining };
    this.drains.delete(key);
    this.remove(target);
    onRemoved?.();
    return {};
  }
}

export interface InitialSyncResult {
  /** Configs processed. */
  targets: number;
  elapsedMs: number;
  /** How the pass compiled (with a `SyncPlan` chooser; "controller" with a lane count). */
  mode: SyncPlan["mode"] | "controller";
}

/**
 * One initial-sync pass over every config of the enabled kinds. `plan` is either a lane count
 * (reconciles in flight, each compiling with the controller's compiler) or a chooser given the
 * number of configs (`syncPlan` of src/webhook/compile_pool.ts: inline below the break-even,
 * else the pool with every config in flight). Business failures land in the registry;
 * infrastructure errors are collected over the whole pass and thrown together so the caller
 * retries the pass.
 */
export async function initialSyncPass(
  controller: RegistryController,
  view: ClusterView,
  kinds: readonly ConfigKind[],
  plan: number | ((configs: number) => SyncPlan),
): Promise<InitialSyncResult> {
  const started = performance.now();
  const work: [ConfigKind, string][] = [];
  for (const kind of kinds) {
    for (const config of view.listConfigs(kind)) work.push([kind, config.metadata.name]);
  }
  const chosen = typeof plan === "number" ? undefined : plan(work.length);
  const concurrency = chosen?.lanes ?? (plan as number);
  const errors: Error[] = [];
  let next = 0;
  const runner = async () => {
    while (next < work.length) {
      const [kind, name] = work[next++];
      try {
        await controller.reconcile(kind, name, chosen?.compile);
      } catch (e) {
        errors.push(new Error(`${kind}/${name}: ${e instanceof Error ? e.message : String(e)}`));
      }
    }
  };
  const lanes = Math.max(1, Math.min(concurrency, work.length));
  await Promise.all(Array.from({ length: lanes }, runner));
  if (errors.length > 0) {
    throw new AggregateError(
      errors,
      `initial sync: ${errors.length} of ${work.length} configs failed`,
    );
  }
  return {
    targets: work.length,
    elapsedMs: performance.now() - started,
    mode: chosen?.mode ?? "controller",
  };
}
