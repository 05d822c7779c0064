/**
 * What compiling one config yields, as plain structured-cloneable data: the message a compile
 * Worker posts back to the main isolate (the plans as one transferable buffer,
 * src/webhook/plan_codec.ts), which installs it in the registry. Shared by the worker pool, the
 * initial sync, the registry controller and the registry.
 */
import type { Lossless } from "../engine/mod.ts";
import type { EncodedPlans } from "./plan_codec.ts";

export type ConfigKind = "xrd" | "crd";

/** Why a config has no (new) servable plan; the `reason` label of compile-error metrics. */
export type CompileFailureReason =
  | "XRDNotFound"
  | "CRDNotFound"
  | "InvalidRules"
  | "AnalyzeFailed"
  | "ValidationErrors";

/** A config compiled into plans for its target. */
export interface CompiledTarget {
  ok: true;
  /** Registry key: the target resource name (`<plural>.<group>`), also the `/convert/<target>` path. */
  target: string;
  kind: ConfigKind;
  /** `metadata.name` of the config. */
  config: string;
  hubVersion: string;
  /**
   * One plan per spoke (hub ↔ spoke), encoded; they link (checked when compiled), and are
   * linked where they are used.
   */
  plans: EncodedPlans;
  /** The spoke version of each plan, in order (what a router serves before it links). */
  spokeVersions: string[];
  /** No op of the plans has a cost unbounded by its input (the inline policy's question). */
  boundedCost: boolean;
  /** `spec.conversionReviewVersions`, default ["v1"]. */
  reviewVersions: string[];
  /** Static verdict per spoke version. */
  lossless: Record<string, Lossless>;
  /** `gen=<targetGeneration>/<configGeneration>`. */
  planHash: string;
}

/** A config that could not be compiled (a business failure: recorded, never retried). */
export interface CompileFailure {
  ok: false;
  target: string;
  kind: ConfigKind;
  config: string;
  reason: CompileFailureReason;
  message: string;
}

export type CompileResult = CompiledTarget | CompileFailure;
