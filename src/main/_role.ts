/**
 * The runtime both role mains (manager, webhook-server) run on: flags or exit 1 (one `error:`
 * line, as for every configuration mistake), SIGTERM/SIGINT
 * handling, start steps that exit 1 with a logged cause, the cache sync that fails fast, and the
 * stop: readiness false first, then every started component in reverse order of registration
 * under one deadline. Why in this order: docs/design/manager.md#shutdown.
 */
import { HelpRequested } from "../lib/flags.ts";
import { KubeClient } from "../kube/client.ts";
import { configureLogging, createLogger, type LogFields, type Logger } from "../obs/log.ts";
import { restClientMetrics } from "../obs/rest_client_metrics.ts";
import { Readiness, type ServerHandle, shutdownAll } from "../net/mod.ts";
import type { Registry } from "prom-client";

/** The logging flags, then the role's own flags; invalid ⇒ logged, exit 1. */
export function parseRoleFlags<F>(
  logger: string,
  argv: readonly string[],
  parse: (args: string[]) => F,
): F {
  try {
    const { rest } = configureLogging(argv);
    return parse(rest);
  } catch (e) {
    if (e instanceof HelpRequested) {
      console.log(
        `usage: ${logger} [flags]\n\nflags:\n${e.usage}\n` +
          "  --zap-log-level, --zap-devel, --zap-encoder, --zap-time-encoding, --zap-stacktrace-level\n" +
          "      (logging; default info, JSON lines, iso8601 time, no stack traces)",
      );
      Deno.exit(0);
    }
    if (!(e instanceof Error)) throw e;
    writeConfigError(`invalid flags: ${e.message}`);
    Deno.exit(1);
  }
}

/**
 * A configuration mistake (a bad flag value, a missing kubeconfig, unreadable certificate files):
 * one line `error: <reason>` on stderr, no stack — what the operator must fix, as Go binaries
 * print it. Errors at run time stay JSON log lines.
 */
export function writeConfigError(reason: string): void {
  console.error(`error: ${reason.replace(/\s*\n\s*/g, "; ")}`);
}

export interface RoleOptions {
  /** Logger name of the role. */
  logger: string;
  /** The one deadline of the whole stop, listeners' drain included. */
  shutdownTimeoutMs: number;
  /** Runs now (false) and on every readiness transition. */
  onReadyChange?: (ready: boolean) => void;
}

interface Component {
  name: string;
  stop(remainingMs: number): unknown;
}

export class Role {
  readonly log: Logger;
  readonly readiness: Readiness;
  readonly #shutdownTimeoutMs: number;
  readonly #shutdown = new AbortController();
  readonly #components: Component[] = [];
  readonly #listeners: ServerHandle[] = [];
  #exitCode = 0;
  #exiting: Promise<never> | undefined;

  constructor(opts: RoleOptions) {
    this.log = createLogger(opts.logger);
    this.readiness = new Readiness(opts.onReadyChange);
    this.#shutdownTimeoutMs = opts.shutdownTimeoutMs;
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      Deno.addSignalListener(signal, () => this.shutdown(`received ${signal}`));
    }
  }

  /** Aborts on a signal or {@link shutdown}. */
  get signal(): AbortSignal {
    return this.#shutdown.signal;
  }

  /** Asks the role to stop; the first call decides the exit code. */
  shutdown(reason: string, exitCode = 0): void {
    if (this.#shutdown.signal.aborted) return;
    this.#exitCode = exitCode;
    this.#shutdown.abort(new Error(reason));
  }

  /** Registers a component; {@link exit} stops components in reverse order of registration. */
  onStop(name: string, stop: (remainingMs: number) => unknown): void {
    this.#components.push({ name, stop });
  }

  /** A started listener: the listeners drain together, at the place the first one registered. */
  serve(server: ServerHandle): void {
    if (this.#listeners.length === 0) {
      this.onStop("listeners", (ms) => shutdownAll(this.#listeners, ms));
    }
    this.#listeners.push(server);
  }

  /** Starts a listener on `address` ({@link step}, then {@link serve}). */
  async listen<S extends ServerHandle>(
    failure: string,
    address: string,
    start: () => Promise<S>,
  ): Promise<S> {
    const server = await this.step(failure, { address }, start);
    this.serve(server);
    return server;
  }

  /** Runs a start step; its failure is logged as `failure` with the error, and exits 1. */
  async step<T>(failure: string, fields: LogFields, start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (e) {
      if (this.signal.aborted) return await this.exit(this.#exitCode);
      return await this.fail(failure, { ...fields, error: e });
    }
  }

  /**
   * The Kubernetes client of `--kubeconfig` (empty: in-cluster, else the default loading), its
   * requests counted in `registry` (`rest_client_*`).
   */
  async client(kubeconfig: string, registry: Registry): Promise<KubeClient> {
    try {
      return await KubeClient.fromEnvironment({
        kubeconfig: kubeconfig || undefined,
        metrics: restClientMetrics(registry),
      });
    } catch (e) {
      return await this.configError(
        `cannot load Kubernetes client configuration: ${e instanceof Error ? e.message : e}`,
      );
    }
  }

  /** A configuration mistake: one `error:` line ({@link writeConfigError}), then exits 1. */
  configError(reason: string): Promise<never> {
    writeConfigError(reason);
    return this.exit(1);
  }

  /** Waits for the caches, racing their own terminal failures: a failure exits 1. */
  async waitForSync(caches: { waitForSync(signal: AbortSignal): Promise<void> }): Promise<void> {
    try {
      await caches.waitForSync(this.signal);
    } catch (e) {
      if (this.signal.aborted) await this.exit(this.#exitCode);
      this.log.error("informer cache failed to sync; exiting", { error: e });
      await this.exit(1);
    }
  }

  /** Logs `message` and exits 1 (after stopping what started). */
  fail(message: string, fields?: LogFields): Promise<never> {
    this.log.error(message, fields);
    return this.exit(1);
  }

  /** Exits now (code of the shutdown request) when a shutdown was asked for. */
  async exitIfStopping(): Promise<void> {
    if (this.signal.aborted) await this.exit(this.#exitCode);
  }

  /** Runs until a shutdown is asked for, then stops. */
  async run(): Promise<never> {
    await new Promise<void>((resolve) => {
      if (this.signal.aborted) resolve();
      this.signal.addEventListener("abort", () => resolve());
    });
    this.log.info("shutting down", { reason: String(this.signal.reason) });
    return await this.exit(this.#exitCode);
  }

  /**
   * Readiness false first, then every component in reverse order of registration, each awaited
   * until the shared deadline; past it the rest are still told to stop, and the process exits.
   */
  exit(code: number): Promise<never> {
    this.#exiting ??= (async () => {
      this.readiness.set(false);
      const deadline = Date.now() + this.#shutdownTimeoutMs;
      for (const c of [...this.#components].reverse()) {
        const remaining = Math.max(0, deadline - Date.now());
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<"late">((r) => timer = setTimeout(() => r("late"), remaining));
        const stopped = (async () => {
          await c.stop(remaining);
          return "stopped" as const;
        })().catch((e) => {
          this.log.error("stopping failed", { component: c.name, error: e });
          return "failed" as const;
        });
        if (await Promise.race([stopped, late]) === "late" && remaining > 0) {
          this.log.warn("shutdown deadline passed while stopping", { component: c.name });
        }
        clearTimeout(timer);
      }
      Deno.exit(code);
    })();
    return this.#exiting;
  }
}
