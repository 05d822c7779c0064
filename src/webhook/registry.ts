/**
 * The plan registry (docs/design/webhook.md#the-plan-registry-and-swaps): target name → what this
 * replica can serve for it.
 *
 * The main isolate owns it. Compile results arrive as plain data (possibly from a Worker) with
 * their plans encoded (src/webhook/plan_codec.ts); an entry's `Router` links them on its first
 * conversion, so the registry holds the compact bytes for every target and linked plans only for
 * the targets converted here. The hot path does one `Map` lookup and uses the entry's router. Entries are frozen and every write replaces an entry by reference, so a
 * request that already holds an entry keeps a consistent view even if a reload lands meanwhile.
 * (A copy-on-write of the whole map, as the Go reference does for its goroutines, would only cost
 * O(n) per install here: a single-threaded isolate never reads a half-written `Map`.)
 *
 * Failures never take a working plan away: a failed compile annotates the existing entry
 * (`lastError`, `lastErrorAt`) and only creates a plan-less placeholder when there was none, so
 * `/debug/registry` and the `entry_loaded` gauge show the error.
 */
import { type Lossless, Router } from "../engine/mod.ts";
import { rfc3339 } from "../lib/time.ts";
import { createLogger } from "../obs/log.ts";
import type {
  CompiledTarget,
  CompileFailureReason,
  CompileResult,
  ConfigKind,
} from "./compiled.ts";
import { deferredPlans } from "./plan_codec.ts";

const log = createLogger("webhook.registry");

/** One registry entry. Immutable: writers replace it. */
export interface RegistryEntry {
  readonly target: string;
  readonly kind: ConfigKind;
  /** `metadata.name` of the config that produced the entry. */
  readonly config: string;
  /**
   * The plans (linked on first use); null for an error-only placeholder (never compiled
   * successfully).
   */
  readonly router: Router | null;
  /**
   * No op of the plans has a cost unbounded by its input (no `cel`, no `regexSplit`): such a
   * review may be converted on the thread that read it (src/webhook/convert/inline_policy.ts).
   * True while there is no plan (answered without converting).
   */
  readonly boundedCost: boolean;
  /** "" while there is no plan. */
  readonly hubVersion: string;
  readonly reviewVersions: readonly string[];
  /** Static verdict per spoke version (drives the lossy counter). */
  readonly lossless: Readonly<Record<string, Lossless>>;
  /** "" while there is no plan. */
  readonly planHash: string;
  /** When the current plan was installed; null while there is none. */
  readonly compiledAt: Date | null;
  /** The latest compile failure since the last success; "" when none. */
  readonly lastError: string;
  readonly lastErrorReason: CompileFailureReason | null;
  readonly lastErrorAt: Date | null;
}

/** What one `install` did (the input of the reload/compile-error counters). */
export type InstallOutcome =
  | { readonly ok: true; readonly entry: RegistryEntry }
  | {
    readonly ok: false;
    readonly entry: RegistryEntry;
    readonly reason: CompileFailureReason;
    /** Whether the entry still has a servable plan (an older one). */
    readonly stale: boolean;
  };

export type RegistryChange =
  | {
    readonly type: "install";
    readonly target: string;
    readonly outcome: InstallOutcome;
    /** What was installed (the plan data the conversion Workers link for themselves). */
    readonly result: CompileResult;
  }
  | { readonly type: "remove"; readonly target: string };

export type RegistryListener = (change: RegistryChange) => void;

const NO_VERSIONS: readonly string[] = Object.freeze([]);
const NO_LOSSLESS: Readonly<Record<string, Lossless>> = Object.freeze({});

export class PlanRegistry {
  #entries = new Map<string, RegistryEntry>();
  readonly #listeners = new Set<RegistryListener>();

  /** Number of entries, placeholders included (the `registry_size` gauge). */
  get size(): number {
    return this.#entries.size;
  }

  /** The hot-path read: one lookup. */
  get(target: string): RegistryEntry | undefined {
    return this.#entries.get(target);
  }

  has(target: string): boolean {
    return this.#entries.has(target);
  }

  /**
   * Installs a compile result. Success replaces the entry (clearing any error); failure keeps
   * the existing plan and records the error, creating a plan-less placeholder when the target had
   * no entry. (Plans that cannot be linked never get here: compiling checks it,
   * src/webhook/compile.ts.)
   */
  install(result: CompileResult, now: Date = new Date()): InstallOutcome {
    const previous = this.#entries.get(result.target);
    let outcome: InstallOutcome;
    if (result.ok) {
      const entry = linkedEntry(result, now);
      this.#entries.set(result.target, entry);
      outcome = { ok: true, entry };
    } else {
      outcome = this.#recordError(previous, result, result.reason, result.message, now);
    }
    this.#emit({ type: "install", target: result.target, outcome, result });
    return outcome;
  }

  #recordError(
    previous: RegistryEntry | undefined,
    id: { target: string; kind: ConfigKind; config: string },
    reason: CompileFailureReason,
    message: string,
    now: Date,
  ): InstallOutcome {
    const entry: RegistryEntry = Object.freeze(
      previous !== undefined
        ? { ...previous, lastError: message, lastErrorReason: reason, lastErrorAt: now }
        : {
          target: id.target,
          kind: id.kind,
          config: id.config,
          router: null,
          boundedCost: true,
          hubVersion: "",
          reviewVersions: NO_VERSIONS,
          lossless: NO_LOSSLESS,
          planHash: "",
          compiledAt: null,
          lastError: message,
          lastErrorReason: reason,
          lastErrorAt: now,
        },
    );
    this.#entries.set(id.target, entry);
    return { ok: false, entry, reason, stale: entry.router !== null };
  }

  /** Removes a target; returns whether it was present. */
  remove(target: string): boolean {
    if (!this.#entries.delete(target)) return false;
    this.#emit({ type: "remove", target });
    return true;
  }

  /** Every entry, sorted by target (a copy: later writes do not show through). */
  snapshot(): RegistryEntry[] {
    return [...this.#entries.values()].sort((a, b) =>
      a.target < b.target ? -1 : a.target > b.target ? 1 : 0
    );
  }

  /** The `/debug/registry` rows of every entry. */
  debugRows(): DebugRegistryRow[] {
    return debugRows(this.snapshot());
  }

  /** Registers a change listener; returns the function that unregisters it. */
  onChange(listener: RegistryListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(change: RegistryChange): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (e) {
        // A broken observer (gauges, Lease publisher) must not undo or block a registry write.
        log.error("registry change listener failed", { target: change.target, error: e });
      }
    }
  }
}

/**
 * A compile result as a frozen, servable entry whose router links the encoded plans on its first
 * conversion. The registry and every conversion Worker build entries with this one function.
 */
export function linkedEntry(result: CompiledTarget, compiledAt: Date): RegistryEntry {
  const router = new Router(result.hubVersion, deferredPlans(result.plans, result.spokeVersions));
  return Object.freeze({
    target: result.target,
    kind: result.kind,
    config: result.config,
    router,
    boundedCost: result.boundedCost,
    hubVersion: result.hubVersion,
    reviewVersions: Object.freeze([...result.reviewVersions]),
    lossless: Object.freeze({ ...result.lossless }),
    planHash: result.planHash,
    compiledAt,
    lastError: "",
    lastErrorReason: null,
    lastErrorAt: null,
  });
}

/** Whether an entry can serve conversions. */
export function isServable(entry: RegistryEntry | undefined): entry is RegistryEntry & {
  readonly router: Router;
} {
  return entry !== undefined && entry.router !== null;
}

/** One `/debug/registry` row; the field names are the ones the tooling reads. */
export interface DebugRegistryRow {
  /** The target name (called `xrd` for both kinds). */
  xrd: string;
  kind: ConfigKind;
  config: string;
  ready: boolean;
  spokeCount: number;
  planHash: string;
  /** RFC 3339, or null when never compiled. */
  compiledAt: string | null;
  lastError: string;
  lastErrorAt: string | null;
  /** Hub first, then the spokes with a plan. */
  versions: string[];
}

export function debugRows(snapshot: readonly RegistryEntry[]): DebugRegistryRow[] {
  return snapshot.map((e) => ({
    xrd: e.target,
    kind: e.kind,
    config: e.config,
    ready: e.router !== null,
    spokeCount: e.router === null ? 0 : e.router.versions().length - 1,
    planHash: e.planHash,
    compiledAt: e.compiledAt === null ? null : rfc3339(e.compiledAt),
    lastError: e.lastError,
    lastErrorAt: e.lastErrorAt === null ? null : rfc3339(e.lastErrorAt),
    versions: e.router === null ? [] : e.router.versions(),
  }));
}
