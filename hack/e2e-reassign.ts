/**
 * Reassignment under load (issue 7): two ConversionWebhookServer
 * instances with real webhook-server Pods (the test kubelet), sustained reads and writes of
 * objects at a non-storage version through the real apiserver, and three moves of the target —
 * an explicit pin, an unpin, and a sharding-driven move — each of which must be *verified* by the
 * handover gate (HandoverReady/HandoverReady, never the unverified fallback), with zero failed
 * requests and zero wrong values. Also checks that placement matches the rendezvous hash for
 * the fixed names and that admission rejects a shard pool without the default instance.
 *
 *   deno run --allow-all hack/e2e-reassign.ts [--min-requests=20000] [--workers=8]
 *
 * Needs root (the pod network) and the control-plane binaries (hack/testenv.sh). Prints
 * progress, one line per move, and a final JSON summary line prefixed `reassign-summary `.
 * Exit 0 only when every check held.
 */
import { resolveServer, type ServerInfo } from "../src/assign/resolve.ts";
import { type ControlPlane, startControlPlane, waitFor } from "../tests/support/control_plane.ts";
import {
  fieldRenameConfig,
  findCondition,
  getJSON,
  kubectlOK,
  type Obj,
  startDcoStack,
  twoVersionCRD,
  validatingWebhook,
  WEBHOOK_SERVER_SA,
  webhookServer,
  webhookServerKubelet,
} from "../tests/support/dco_stack.ts";
import { adminHttpClient } from "../tests/support/watch_recorder.ts";

const GROUP = "reassign.dco.test";
const IMAGE = "dco.test/webhook-server:reassign";
const ALPHA = "alpha"; // the default instance, in the pool from the start
const BETA = "beta";

const args = Object.fromEntries(
  Deno.args.filter((a) => a.startsWith("--")).map((a) => {
    const [k, v] = a.slice(2).split("=");
    return [k, v ?? "true"];
  }),
);
const MIN_REQUESTS = Number(args["min-requests"] ?? 20_000);
const WORKERS = Number(args["workers"] ?? 8);
const OBJECTS_PER_WORKER = 3;

function log(msg: string): void {
  console.log(`[reassign ${new Date().toISOString().slice(11, 23)}] ${msg}`);
}

/**
 * A target name whose pool winner among {alpha, beta} (equal weights) is beta, so adding beta to
 * the pool moves it: found by the same hash the product uses, deterministic for fixed names.
 */
function pickPlural(): { plural: string; pool: ServerInfo[] } {
  const pool: ServerInfo[] = [
    { name: ALPHA, default: true, sharding: {} },
    { name: BETA, sharding: {} },
  ];
  for (let i = 0; i < 100; i++) {
    const plural = `widgets${i}`;
    const r = resolveServer({ target: `${plural}.${GROUP}` }, pool);
    if (r.ok && r.server === BETA) return { plural, pool };
  }
  throw new Error("no candidate name hashes to beta");
}

/** The target CRD: v1 (`size`, storage) and v2 (`capacity`), and a string `owner` in both. */
function crd(plural: string) {
  return twoVersionCRD({
    group: GROUP,
    plural,
    kind: "Widget",
    singular: plural.replace(/s(\d*)$/, "$1"),
    stringFields: ["owner"],
  });
}

/** A ConversionWebhookServer with two replicas of the chart's webhook-server identity. */
function cws(name: string, extra: Record<string, unknown>) {
  return webhookServer(name, {
    replicas: 2,
    serviceAccountName: WEBHOOK_SERVER_SA,
    rollout: { preStopSleepSeconds: 1, terminationGracePeriodSeconds: 35 },
    ...extra,
  });
}

/** Request counters of the load. */
interface Tally {
  requests: number;
  reads: number;
  writes: number;
  lists: number;
  failures: number;
  wrong: number;
  /** 429 + Retry-After answers retried by the client (not failures; see `call`). */
  retried429: number;
  firstErrors: string[];
}

/**
 * One worker: owns OBJECTS_PER_WORKER objects; in a loop writes a new value at v2 (merge patch,
 * converted v2→v1 for storage and back for the answer), reads it back at v2 and at v1 (GET reads
 * etcd: converted on every read), and every few rounds lists at v2.
 */
async function worker(
  cp: ControlPlane,
  client: Deno.HttpClient,
  ns: string,
  plural: string,
  id: number,
  stop: AbortSignal,
  tally: Tally,
): Promise<void> {
  const base = (v: string) => `${cp.server}/apis/${GROUP}/${v}/namespaces/${ns}/${plural}`;
  const names = Array.from({ length: OBJECTS_PER_WORKER }, (_, i) => `w${id}-${i}`);
  const last = new Map<string, number>();
  const fail = (what: string) => {
    tally.failures++;
    if (tally.firstErrors.length < 10) tally.firstErrors.push(what);
  };
  const wrong = (what: string) => {
    tally.wrong++;
    if (tally.firstErrors.length < 10) tally.firstErrors.push(`WRONG ${what}`);
  };
  const call = async (method: string, url: string, body?: unknown): Promise<Obj | undefined> => {
    tally.requests++;
    try {
      let res: Response;
      // As client-go does: a 429 with Retry-After is retried (up to 10 times). The apiserver
      // answers 429 "storage is (re)initializing" to list requests for a moment after every
      // CRD update — the conversion repoint is one — while the resource's watch cache rebuilds.
      for (let attempt = 0;; attempt++) {
        res = await fetch(url, {
          method,
          client,
          headers: body === undefined ? {} : {
            "content-type": method === "PATCH"
              ? "application/merge-patch+json"
              : "application/json",
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const retryAfter = Number(res.headers.get("retry-after") ?? "");
        if (res.status !== 429 || !(retryAfter >= 0) || attempt >= 10) break;
        await res.body?.cancel();
        tally.retried429++;
        await new Promise((r) => setTimeout(r, retryAfter * 1000));
      }
      const text = await res.text();
      if (!res.ok) {
        fail(`${method} ${url.slice(cp.server.length)} → ${res.status} ${text.slice(0, 300)}`);
        return undefined;
      }
      return JSON.parse(text);
    } catch (e) {
      fail(`${method} ${url.slice(cp.server.length)} → ${(e as Error).message}`);
      return undefined;
    }
  };
  // Create at v2 (the non-storage version).
  for (const name of names) {
    const got = await call("POST", base("v2"), {
      apiVersion: `${GROUP}/v2`,
      kind: "Widget",
      metadata: { name },
      spec: { capacity: 0, owner: `worker-${id}` },
    });
    tally.writes++;
    if (got) last.set(name, 0);
  }
  let round = 0;
  while (!stop.aborted) {
    round++;
    for (const name of names) {
      const value = round * 1000 + id;
      const patched = await call("PATCH", `${base("v2")}/${name}`, { spec: { capacity: value } });
      tally.writes++;
      if (patched) {
        if (patched.spec?.capacity !== value) {
          wrong(`PATCH ${name}: ${JSON.stringify(patched.spec)}`);
        }
        last.set(name, value);
      }
      const v2 = await call("GET", `${base("v2")}/${name}`);
      tally.reads++;
      if (v2 && v2.spec?.capacity !== last.get(name)) {
        wrong(`GET v2 ${name}: ${JSON.stringify(v2.spec)} want ${last.get(name)}`);
      }
      const v1 = await call("GET", `${base("v1")}/${name}`);
      tally.reads++;
      if (v1 && (v1.spec?.size !== last.get(name) || "capacity" in (v1.spec ?? {}))) {
        wrong(`GET v1 ${name}: ${JSON.stringify(v1.spec)} want size ${last.get(name)}`);
      }
    }
    if (round % 5 === 0) {
      const list = await call("GET", `${base("v2")}?labelSelector=`);
      tally.lists++;
      for (const item of list?.items ?? []) {
        if (item.apiVersion !== `${GROUP}/v2` || typeof item.spec?.capacity !== "number") {
          wrong(`LIST v2 item ${item.metadata?.name}: ${JSON.stringify(item.spec)}`);
        }
      }
    }
  }
}

interface MoveResult {
  move: string;
  from: string;
  to: string;
  seconds: number;
  verdict: string;
  requestsDuring: number;
}

async function main(): Promise<number> {
  if (Deno.uid?.() !== 0) {
    console.error("hack/e2e-reassign.ts needs root: the test kubelet's pod network");
    return 2;
  }
  const { plural } = pickPlural();
  const target = `${plural}.${GROUP}`;
  log(`target ${target} (its pool winner among {alpha, beta} is beta)`);
  await using cp = await startControlPlane({
    name: "reassign",
    kubelet: webhookServerKubelet(IMAGE),
  });
  await using manager = await startDcoStack(cp, {
    caName: "dco-reassign-ca",
    webhookServerImage: IMAGE,
    features: { xrd: false },
  });
  const { namespace: ns, admissionPort, ca, failing } = manager;

  // Admission for the servers, so the pool rule is enforced by the apiserver.
  await cp.apply(validatingWebhook({
    name: "dco-reassign",
    kind: "conversionwebhookserver",
    admissionPort,
    caPEM: ca.cert,
  }));

  // Through the manager's admission webhook, which may still be starting.
  await waitFor("the servers pass admission", async () => {
    try {
      await cp.apply(cws(ALPHA, { default: true, sharding: {} }));
      await cp.apply(cws(BETA, {}));
      return true;
    } catch (e) {
      if (/failed calling webhook/.test((e as Error).message)) return false;
      throw e;
    }
  }, { timeoutMs: 60_000 });
  await cp.apply(crd(plural));
  await cp.waitForCRD(target);
  await cp.apply(fieldRenameConfig({
    kind: "CRDConversionConfig",
    name: "widgets",
    target,
    spokePath: "spec.capacity",
  }));

  const ready = async (name: string) => {
    const s = await getJSON(cp, "conversionwebhookservers.terasky.com", name);
    return s.status?.readyReplicas === 2;
  };
  await waitFor("both instances ready", async () => await ready(ALPHA) && await ready(BETA), {
    timeoutMs: 180_000,
  }).catch(failing);
  const servedBy = async () => {
    const c = await getJSON(cp, "crdconversionconfigs.terasky.com", "widgets");
    const url: string = c.status?.webhookURL ?? "";
    return {
      config: c,
      server: url.startsWith(`https://${ALPHA}-`)
        ? ALPHA
        : url.startsWith(`https://${BETA}-`)
        ? BETA
        : "",
      applied: c.status?.phase === "Applied",
    };
  };
  await waitFor("the config Applied on alpha", async () => {
    const s = await servedBy();
    return s.applied && s.server === ALPHA;
  }, { timeoutMs: 120_000 }).catch(failing);
  log("both instances ready; the config is Applied on alpha (pool {alpha}); starting the load");

  const ns2 = await cp.createNamespace("objects");
  const client = adminHttpClient(cp);
  const tally: Tally = {
    requests: 0,
    reads: 0,
    writes: 0,
    lists: 0,
    failures: 0,
    wrong: 0,
    retried429: 0,
    firstErrors: [],
  };
  const stop = new AbortController();
  const workers = Array.from(
    { length: WORKERS },
    (_, i) => worker(cp, client, ns2, plural, i, stop.signal, tally),
  );
  const moves: MoveResult[] = [];
  const problems: string[] = [];
  let failuresBeforeKill = 0;
  let wrongBeforeKill = 0;
  let killPhase: Record<string, unknown> | undefined;
  // Placement: the applied server is the hash's pool winner for the fixed names.
  const checkPlacement = async () => {
    const placed = (await servedBy()).server;
    const expected = resolveServer({ target }, [
      { name: ALPHA, default: true, sharding: {} },
      { name: BETA, sharding: {} },
    ]);
    if (!expected.ok || placed !== expected.server) {
      problems.push(`placement: applied on ${placed}, the hash says ${JSON.stringify(expected)}`);
    } else log(`placement: ${placed}, as the rendezvous hash says`);
  };
  try {
    // A warm-up before the first move.
    await new Promise((r) => setTimeout(r, 5_000));
    const move = async (label: string, to: string, act: () => Promise<void>) => {
      const from = (await servedBy()).server;
      const before = tally.requests;
      const started = performance.now();
      await act();
      const done = await waitFor(`${label}: Applied on ${to}`, async () => {
        const s = await servedBy();
        return s.applied && s.server === to ? s.config : undefined;
      }, { timeoutMs: 120_000 }).catch(failing);
      const seconds = (performance.now() - started) / 1000;
      const handover = findCondition(done, "HandoverReady");
      const verdict = handover ? `${handover.status}/${handover.reason}` : "none";
      if (verdict !== "True/HandoverReady") problems.push(`${label}: verdict ${verdict}`);
      // Let the losing side's drain (30 s) pass under load, before the next move.
      await new Promise((r) => setTimeout(r, 35_000));
      const r = {
        move: label,
        from,
        to,
        seconds,
        verdict,
        requestsDuring: tally.requests - before,
      };
      moves.push(r);
      log(
        `${label}: ${from} → ${to} in ${seconds.toFixed(1)} s, ${verdict}, ` +
          `${r.requestsDuring} requests since the edit (total ${tally.requests}, ` +
          `failures ${tally.failures}, wrong ${tally.wrong})`,
      );
    };
    await move("explicit pin", BETA, async () => {
      await kubectlOK(
        cp,
        "patch",
        "crdconversionconfigs.terasky.com",
        "widgets",
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { webhookServerRef: { name: BETA } } }),
      );
    });
    await move("unpin", ALPHA, async () => {
      await kubectlOK(
        cp,
        "patch",
        "crdconversionconfigs.terasky.com",
        "widgets",
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { webhookServerRef: null } }),
      );
    });
    await move("sharding (beta joins the pool)", BETA, async () => {
      await kubectlOK(
        cp,
        "patch",
        "conversionwebhookservers.terasky.com",
        BETA,
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { sharding: {} } }),
      );
    });
    // Keep the load going until the request floor is reached.
    while (tally.requests < MIN_REQUESTS && tally.failures === 0) {
      await new Promise((r) => setTimeout(r, 1_000));
    }
    await checkPlacement();
    failuresBeforeKill = tally.failures;
    wrongBeforeKill = tally.wrong;
    // A crash of one destination replica during a move: pin to alpha and SIGKILL one alpha
    // replica's process at once (the kubelet restarts it). Its Lease is still live but does not
    // list the target, so the gate must wait for the restarted replica's own report.
    const [victim] =
      (await getJSON(cp, "pods", "-n", ns, "-l", `app.kubernetes.io/instance=${ALPHA}`))
        .items;
    const pgid = Number(victim.status.containerStatuses[0].containerID.split("://")[1]);
    await move("pin to alpha, one alpha replica killed", ALPHA, async () => {
      await kubectlOK(
        cp,
        "patch",
        "crdconversionconfigs.terasky.com",
        "widgets",
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { webhookServerRef: { name: ALPHA } } }),
      );
      Deno.kill(-pgid, "SIGKILL");
      log(`killed ${victim.metadata.name} (process group ${pgid}) right after the edit`);
    });
    const after = await getJSON(cp, "pod", victim.metadata.name, "-n", ns);
    killPhase = {
      pod: victim.metadata.name,
      restartCount: after.status.containerStatuses[0].restartCount,
      failures: tally.failures - failuresBeforeKill,
      wrong: tally.wrong - wrongBeforeKill,
    };
    log(`kill phase: ${JSON.stringify(killPhase)}`);
  } finally {
    stop.abort();
    await Promise.all(workers);
    client.close();
  }

  // Admission: a pool the default instance is not a member of is rejected.
  const rej = await cp.kubectl(
    "patch",
    "conversionwebhookservers.terasky.com",
    ALPHA,
    "--type=merge",
    "-p",
    JSON.stringify({ spec: { sharding: { enabled: false } } }),
  );
  if (rej.code === 0 || !/denied the request/.test(rej.stderr)) {
    problems.push(`admission accepted a pool without the default: ${rej.stderr || rej.stdout}`);
  } else log(`admission rejected a pool without the default: ${rej.stderr.trim().slice(0, 200)}`);

  // The three moves must be flawless; the crash phase is measured and reported (a request the
  // apiserver sent to the killed process fails — the apiserver does not retry conversions).
  if (failuresBeforeKill > 0) problems.push(`${failuresBeforeKill} failed requests`);
  if (wrongBeforeKill > 0) problems.push(`${wrongBeforeKill} wrong values`);
  if (tally.wrong > wrongBeforeKill) problems.push(`${tally.wrong - wrongBeforeKill} wrong values`);
  if (tally.requests < MIN_REQUESTS) {
    problems.push(`only ${tally.requests} requests (< ${MIN_REQUESTS})`);
  }
  const summary = { ...tally, failuresBeforeKill, killPhase, moves, problems };
  console.log(`reassign-summary ${JSON.stringify(summary)}`);
  if (problems.length > 0) {
    console.error(`FAILED:\n- ${problems.join("\n- ")}`);
    return 1;
  }
  log(
    `ok: ${tally.requests} requests (${tally.reads} reads, ${tally.writes} writes, ` +
      `${tally.lists} lists; ${tally.retried429} 429s retried), 0 failures and 0 wrong values ` +
      "over 3 verified moves; " +
      `crash phase: ${JSON.stringify(killPhase)}`,
  );
  return 0;
}

if (import.meta.main) {
  let code = 1;
  try {
    code = await main();
  } catch (e) {
    console.error(`e2e-reassign: ${(e as Error).stack ?? e}`);
  }
  Deno.exit(code);
}
