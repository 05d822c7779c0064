/**
 * What an informer reports about itself: its phase, a health snapshot (for logs, readiness and
 * tests) and the context passed to failure observers. ./informer.ts keeps them current.
 */

/** Where the informer is in its life. */
export type InformerPhase = "new" | "listing" | "watching" | "backoff" | "failed" | "stopped";

/** A snapshot of the informer's health, for logs, readiness and tests. */
export interface InformerStatus {
  readonly phase: InformerPhase;
  readonly synced: boolean;
  /** The resourceVersion the next watch resumes from. */
  readonly resourceVersion: string;
  readonly objects: number;
  /** Completed LISTs (1 after the initial sync; more after 410 relists). */
  readonly lists: number;
  /** WATCH requests opened. */
  readonly watches: number;
  readonly bookmarks: number;
  /** 410 Gone answers and ERROR events seen (each one triggers a relist). */
  readonly expired: number;
  /** Failures since the last successful LIST or productive WATCH. */
  readonly consecutiveFailures: number;
  readonly lastError?: Error;
}

/** Context of a failure passed to {@link Informer.onError} handlers. */
export interface InformerErrorInfo {
  readonly operation: "list" | "watch";
  /** True when the informer gave up (only before the first sync). */
  readonly terminal: boolean;
  /** Delay before the next attempt (absent when terminal or relisting at once). */
  readonly retryInMs?: number;
  readonly consecutiveFailures: number;
}
