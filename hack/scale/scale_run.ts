/**
 * One scale run on a control plane running dco ({@link startScaleStack}): generate the fleet,
 * apply it (CRDs Established, configs Applied), create the instances, roll the webhook-server
 * Deployment (a cold start of every replica against the whole fleet, after the creates' traffic
 * and before measuring), benchmark List/Get at v1 and v2, observe the replicas, and assemble the
 * result JSON. A failing phase does not lose the result: what was measured is kept, the rest is
 * zero, and the failure is listed in `problems`.
 */
import type { ControlPlane } from "../../tests/support/control_plane.ts";
import { adminHttpClient } from "../../tests/support/watch_recorder.ts";
import { Api } from "./api.ts";
import { type ColdStartReplica, ColdStartTrace } from "./cold_start_trace.ts";
import { type FleetOptions, generateFleet } from "./generate.ts";
import { TokenBucket } from "./limiter.ts";
import type { Measurement } from "./measure.ts";
import {
  observationCollectedNothing,
  observedOf,
  observeFleet,
  registrySizes,
  type ReplicaObservation,
} from "./observe.ts";
import { MEASUREMENT_KEYS, SCALE_RESULT_SCHEMA_VERSION, type ScaleResult } from "./result.ts";
import { applyFleet, benchmark, createInstances, type FleetSetup, type Log } from "./run.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { rollWebhookServer, type ScaleStack, setMemoryLimit } from "./stack.ts";

export interface ScaleRunOptions extends FleetOptions {
  parallel: number;
  listRepeats: number;
  getRepeats: number;
  qps: number;
  burst: number;
  /** The whole run's deadline (`--timeout`). */
  timeoutMs: number;
  /** Only apply the fleet and cold-start the replicas: no instances, no benchmark. */
  syncOnly?: boolean;
  /** How long to let the replicas settle before observing them; default 0. */
  settleMs?: number;
  /**
   * After the observation, set this memory limit on the replicas (the manager derives their V8
   * heap limit from it and rolls them) and trace and observe that second cold start too.
   */
  thenMemoryLimit?: string;
  log: Log;
}

/** A cold start of the whole fleet and the replicas observed after it. */
export interface ColdStart {
  rollSeconds: number;
  coldStart: ColdStartReplica[];
  replicas: ReplicaObservation[];
}

export interface ScaleRunOutcome {
  result: ScaleResult;
  /** Distinct error messages per benchmark phase (printed, not stored in the result). */
  errorSamples: Record<string, string[]>;
  /** Seconds the roll took (restart until the new replicas were all Ready, the old gone). */
  rollSeconds?: number;
  coldStart: ColdStartReplica[];
  replicas: ReplicaObservation[];
  /** Setup failures and observation gaps, one message each. */
  problems: string[];
  /**
   * Seconds the CRDs and the configs took to apply: `configSeconds` until all were `Applied`, or
   * (sync-only) `registrySeconds` until every replica's registry held every target.
   */
  setup?: FleetSetup & { registrySeconds?: number };
  /** The second cold start, under `thenMemoryLimit`. */
  limited?: ColdStart;
}

const EMPTY: Measurement = {
  n: 0,
  errors: 0,
  p50Ms: 0,
  p99Ms: 0,
  maxMs: 0,
  throughputPerSecond: 0,
  elapsedMs: 0,
};

export async function scaleRun(
  cp: ControlPlane,
  stack: ScaleStack,
  o: ScaleRunOptions,
): Promise<ScaleRunOutcome> {
  const fleet = generateFleet(o);
  const client = adminHttpClient(cp);
  const deadline = AbortSignal.timeout(o.timeoutMs);
  const api = new Api({
    server: cp.server,
    client,
    limiter: new TokenBucket(o.qps, o.burst),
    deadline,
  });
  // The observer and the cold-start trace are not part of the measured load: no rate limit.
  const watcher = new Api({ server: cp.server, client, deadline });
  const problems: string[] = [];
  const out: ScaleRunOutcome = {
    result: {
      schemaVersion: SCALE_RESULT_SCHEMA_VERSION,
      recordedAt: new Date().toISOString(),
      targets: o.targets,
      instances: o.instances,
      totalObjects: 0,
      envelope: {
        targets: String(o.targets),
        instances: String(o.instances),
        parallel: String(o.parallel),
        listRepeats: String(o.listRepeats),
        getRepeats: String(o.getRepeats),
        strategiesMin: String(o.strategiesMin),
        strategiesMax: String(o.strategiesMax),
        seed: String(o.seed),
        qps: String(o.qps),
        burst: String(o.burst),
      },
      createMs: 0,
      measurements: Object.fromEntries(
        MEASUREMENT_KEYS.map((k) => [k, { ...EMPTY }]),
      ) as ScaleResult["measurements"],
      strategyCoverage: fleet.strategyCoverage,
    },
    errorSamples: {},
    coldStart: [],
    replicas: [],
    problems,
  };
  try {
    // A sync-only run measures the replicas' registries, which load every config whatever its
    // phase: it waits for them, not for each config's `Applied` (at 1,000 targets each patch of a
    // CRD's conversion costs the apiserver seconds).
    out.setup = await applyFleet(api, fleet, { ...o, waitApplied: !o.syncOnly }, o.log);
    if (o.syncOnly) {
      const t0 = performance.now();
      await waitFor(`every replica's registry holds ${o.targets} targets`, async () => {
        const sizes = [...(await registrySizes(watcher, stack.namespace)).values()];
        return sizes.length > 0 && sizes.every((n) => n >= o.targets);
      }, { timeoutMs: o.timeoutMs, intervalMs: 2_000 });
      out.setup.registrySeconds = (performance.now() - t0) / 1000;
      o.log(
        `every replica's registry holds ${o.targets} targets after ` +
          `${out.setup.registrySeconds.toFixed(1)} s more`,
      );
    }
    if (!o.syncOnly) {
      const created = await createInstances(api, fleet, o);
      out.result.createMs = created.createMs;
      out.result.totalObjects = fleet.targets.length * o.instances;
      o.log(
        `${out.result.totalObjects} instances created in ${
          (created.createMs / 1000).toFixed(1)
        } s` +
          ` (${created.retries} retries)`,
      );
    }
    const trace = await ColdStartTrace.start(watcher, stack.namespace);
    try {
      out.rollSeconds = await rollWebhookServer(cp, stack);
    } finally {
      out.coldStart = await trace.stop();
    }
    o.log(
      `webhook-server rolled (cold start against ${o.targets} targets) in ` +
        `${out.rollSeconds.toFixed(1)} s`,
    );
    if (!o.syncOnly) {
      const bench = await benchmark(api, fleet, o);
      for (const k of MEASUREMENT_KEYS) out.result.measurements[k] = bench[k];
      out.errorSamples = bench.errorSamples;
    }
  } catch (e) {
    problems.push(`run: ${(e as Error).message}`);
  }
  if (o.settleMs) await new Promise((r) => setTimeout(r, o.settleMs));
  try {
    out.replicas = await observeFleet(watcher, stack.namespace);
    out.result.observed = observedOf(out.replicas);
    problems.push(...out.replicas.flatMap((r) => r.problems));
    if (observationCollectedNothing(out.result.observed)) {
      problems.push("observation collected neither the initial sync nor the working set");
    }
  } catch (e) {
    problems.push(`observe: ${(e as Error).message}`);
  }
  if (o.thenMemoryLimit) {
    try {
      const trace = await ColdStartTrace.start(watcher, stack.namespace);
      let rollSeconds: number;
      try {
        rollSeconds = await setMemoryLimit(cp, stack, o.thenMemoryLimit);
      } finally {
        out.limited = { rollSeconds: 0, coldStart: await trace.stop(), replicas: [] };
      }
      out.limited.rollSeconds = rollSeconds;
      if (o.settleMs) await new Promise((r) => setTimeout(r, o.settleMs));
      out.limited.replicas = await observeFleet(watcher, stack.namespace);
      o.log(`rolled again with memory limit ${o.thenMemoryLimit} in ${rollSeconds.toFixed(1)} s`);
    } catch (e) {
      problems.push(`memory-limit roll: ${(e as Error).message}`);
    }
  }
  client.close();
  return out;
}
