/**
 * A real Kubernetes control plane for tests: etcd + kube-apiserver on free loopback ports, with
 * fresh certificates, an admin identity (group system:masters) and a ready
 * `@kubernetes/client-node` KubeConfig.
 *
 * ```ts
 * // one control plane for a whole test (use t.step for the cases)
 * Deno.test("my e2e", withControlPlane(async (cp, t) => { ... }, { name: "my-e2e" }));
 * // or explicitly
 * await using cp = await startControlPlane({ name: "x" });
 * ```
 *
 * Binaries: TEST_ASSET_KUBE_APISERVER / TEST_ASSET_ETCD / TEST_ASSET_KUBECTL, else
 * KUBEBUILDER_ASSETS/<name> (hack/test.sh sets it), else hack/testenv.sh is run to build or reuse
 * them. If they cannot be provided, startControlPlane throws: tests fail, never skip.
 *
 * DCO_TEST_KUBECONFIG=<path>: use that existing cluster instead of starting one. Nothing is
 * started or stopped then; objects made through `apply`/`createNamespace` are deleted on dispose.
 * DCO_TEST_WEBHOOK_HOST: the address that cluster's apiserver uses to reach webhooks served by
 * the test process (default 127.0.0.1, right for the local control plane).
 *
 * Teardown (dispose) kills each process group (kube-apiserver with SIGKILL, see below; etcd with
 * SIGTERM, then SIGKILL after 10 s) and removes the temp dir. SIGINT/SIGTERM to the test process
 * and process exit do the same synchronously; and each binary runs under a guard shell that kills
 * it and removes the dir if the test process dies without cleaning up.
 */
import * as k8s from "@kubernetes/client-node";
import { setTimeout as delay } from "node:timers/promises";
import { WaitAbort, waitFor } from "./wait.ts";
import { b64, createCA, generateKey, writePublicKey } from "./certs.ts";
import { type KubeletOptions, TestKubelet } from "./kubelet.ts";
import { PodNetwork } from "./pod_network.ts";
import { crossplaneCRDsDir, type CrossplaneInstance, startCrossplane } from "./crossplane.ts";
import { freePort } from "./ports.ts";

export interface ControlPlaneOptions {
  /** Label used in temp dir names and messages. */
  name?: string;
  /** How long to wait for etcd and /readyz; default 120 s (a cold disk cache is slow). */
  readyTimeoutMs?: number;
  /** Extra kube-apiserver flags, appended after the defaults (later flags win). */
  apiServerArgs?: string[];
  /**
   * Make workloads real: run kube-controller-manager (Deployments → ReplicaSets → Pods,
   * EndpointSlices, garbage collection, default ServiceAccounts) and a test kubelet that runs
   * each Pod as a process in its own network namespace (see ./kubelet.ts). The apiserver then
   * listens on the pod network too and resolves webhook Services through EndpointSlices
   * (`--enable-aggregator-routing`), so it calls the Pods behind a Service. Needs root.
   */
  kubelet?: KubeletOptions;
  /**
   * Run kube-controller-manager with these controllers (by the names of its `--controllers`
   * flag), without a kubelet; with the `kubelet` option, added to the controllers it runs.
   */
  controllers?: string[];
  /**
   * Run real Crossplane (`crossplane core init`, then `core start`) against the apiserver, after
   * the controller-manager (see ./crossplane.ts).
   */
  crossplane?: boolean;
}

/** Options of {@link ControlPlane.restartApiServer}. */
export interface RestartOptions {
  /** How long the apiserver stays down after it was killed; default 0. */
  downMs?: number;
  /** Runs while the apiserver is down (after `downMs`), before it is started again. */
  whileDown?: () => Promise<void> | void;
}

/** Absolute paths of the control-plane binaries. */
export interface Assets {
  kubeApiServer: string;
  kubeControllerManager: string;
  etcd: string;
  kubectl: string;
  /** Only known when hack/testenv.sh or KUBEBUILDER_ASSETS provided it. */
  helm?: string;
  /** The OpenTelemetry Collector (hack/testenv.sh group otelcol); known like `helm`. */
  otelcol?: string;
  crossplane: string;
}

/** Result of running kubectl. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ControlPlane extends AsyncDisposable {
  readonly name: string;
  /** True when DCO_TEST_KUBECONFIG points at an existing cluster. */
  readonly external: boolean;
  /** A ready client configuration (admin: system:masters). */
  readonly kubeConfig: k8s.KubeConfig;
  /** Path of a kubeconfig file for the same identity (for kubectl, helm, the operator). */
  readonly kubeconfigPath: string;
  /** The apiserver URL, e.g. https://127.0.0.1:34567. */
  readonly server: string;
  /** Address webhooks served by this test process are reachable at from the apiserver. */
  readonly webhookHost: string;
  /** Temp dir of this instance (certs, etcd data, logs); undefined when external. */
  readonly dir: string | undefined;
  /** Process-group ids of etcd and kube-apiserver (empty when external). */
  readonly pgids: readonly number[];
  /**
   * The etcd client URL (plain http on loopback) when local; undefined when external. Lets a test
   * compact etcd (`POST <etcdURL>/v3/kv/compaction`) to provoke a genuine 410 Gone.
   */
  readonly etcdURL: string | undefined;
  /** The test kubelet, when started with the `kubelet` option. */
  readonly kubelet: TestKubelet | undefined;
  /** Crossplane, when started with the `crossplane` option. */
  readonly crossplane: CrossplaneInstance | undefined;
  /** A typed API client, e.g. `cp.api(k8s.CoreV1Api)`. */
  api<T extends k8s.ApiType>(cls: k8s.ApiConstructor<T>): T;
  /** Server-side apply (field manager "dco-e2e", force). Tracked for deletion when external. */
  apply<T extends k8s.KubernetesObject>(obj: T): Promise<T>;
  /** Deletes an object; a missing one is fine. */
  delete(obj: k8s.KubernetesObject): Promise<void>;
  /** Creates a namespace named `<prefix>-<random>` and returns its name. */
  createNamespace(prefix: string): Promise<string>;
  /** Waits until a CRD is Established and its names accepted. */
  waitForCRD(name: string, timeoutMs?: number): Promise<void>;
  /**
   * A scratch directory removed with this instance (inside {@link dir} when local, so the guards
   * remove it even if the test process is killed).
   */
  makeTempDir(prefix: string): Promise<string>;
  /** Runs kubectl against this cluster. */
  kubectl(...args: string[]): Promise<CommandResult>;
  /** The last lines of the apiserver and etcd logs ("" when external). */
  logTail(lines?: number): Promise<string>;
  /**
   * Kills kube-apiserver (SIGKILL, as on dispose), waits `downMs` (default 0), runs `whileDown`
   * (e.g. to act on etcd while nothing serves the API), starts it again with the same flags and
   * port (also when `whileDown` throws), and waits for /readyz. Open connections (watches) break;
   * etcd and its data stay. The new process replaces the old one in {@link pgids}. Local only:
   * rejects on an external cluster.
   */
  restartApiServer(opts?: RestartOptions): Promise<void>;
  /** Tears everything down; idempotent. */
  dispose(): Promise<void>;
}

const repoRoot = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const FIELD_MANAGER = "dco-e2e";

// ---------------------------------------------------------------------------------------------
// Binaries

let assetsPromise: Promise<Assets> | undefined;

/**
 * Finds the binaries (env overrides first); runs hack/testenv.sh when any is missing.
 * Memoized per process; hack/testenv.sh's lock makes concurrent processes build once.
 */
export function resolveAssets(): Promise<Assets> {
  assetsPromise ??= findAssets().catch((e) => {
    assetsPromise = undefined; // let a later caller retry and see the error itself
    throw e;
  });
  return assetsPromise;
}

async function isExecutable(path: string | undefined): Promise<boolean> {
  if (!path) return false;
  try {
    const st = await Deno.stat(path);
    return st.isFile && ((st.mode ?? 0o755) & 0o111) !== 0;
  } catch {
    return false;
  }
}

async function findAssets(): Promise<Assets> {
  const env = (k: string) => Deno.env.get(k) || undefined;
  const pick = (dir: string | undefined) => {
    const at = (f: string) => (dir ? `${dir}/${f}` : undefined);
    return {
      kubeApiServer: env("TEST_ASSET_KUBE_APISERVER") ?? at("kube-apiserver"),
      kubeControllerManager: env("TEST_ASSET_KUBE_CONTROLLER_MANAGER") ??
        at("kube-controller-manager"),
      etcd: env("TEST_ASSET_ETCD") ?? at("etcd"),
      kubectl: env("TEST_ASSET_KUBECTL") ?? at("kubectl"),
      helm: env("TEST_ASSET_HELM") ?? at("helm"),
      otelcol: env("TEST_ASSET_OTELCOL") ?? at("otelcol"),
      crossplane: env("TEST_ASSET_CROSSPLANE") ?? at("crossplane"),
    };
  };
  let found = pick(env("KUBEBUILDER_ASSETS"));
  const complete = async (a: typeof found) =>
    await isExecutable(a.kubeApiServer) && await isExecutable(a.etcd) &&
    await isExecutable(a.kubectl) && await isExecutable(a.kubeControllerManager) &&
    await isExecutable(a.crossplane);
  if (!await complete(found)) {
    const script = `${repoRoot}/hack/testenv.sh`;
    console.error(
      `control_plane: binaries not found in KUBEBUILDER_ASSETS/TEST_ASSET_*; running ${script}`,
    );
    let out: Deno.CommandOutput;
    try {
      out = await new Deno.Command("bash", { args: [script], stdout: "piped", stderr: "inherit" })
        .output();
    } catch (e) {
      throw new Error(`cannot run ${script}: ${(e as Error).message}`);
    }
    const dir = new TextDecoder().decode(out.stdout).trim();
    if (!out.success || !dir) {
      throw new Error(
        `control-plane binaries unavailable: ${script} exited ${out.code} (its messages are above). ` +
          "Point KUBEBUILDER_ASSETS or TEST_ASSET_* at existing binaries, or DCO_TEST_KUBECONFIG at a cluster.",
      );
    }
    found = pick(dir);
  }
  for (const [k, v] of Object.entries(found)) {
    if (k !== "helm" && k !== "otelcol" && !await isExecutable(v)) {
      throw new Error(`control-plane binary ${k} is not an executable file: ${v}`);
    }
  }
  return {
    kubeApiServer: found.kubeApiServer!,
    kubeControllerManager: found.kubeControllerManager!,
    etcd: found.etcd!,
    kubectl: found.kubectl!,
    helm: await isExecutable(found.helm) ? found.helm : undefined,
    otelcol: await isExecutable(found.otelcol) ? found.otelcol : undefined,
    crossplane: found.crossplane!,
  };
}

// ---------------------------------------------------------------------------------------------
// Process supervision

/**
 * Runs "$@" with output appended to $log. If the test process ($parent) goes away without cleaning
 * up (SIGKILL, or `deno test` exiting on Ctrl-C before our listeners run), it stops the binary and
 * removes the instance dir: the backstop no in-process cleanup can provide.
 */
const GUARD = `
parent=$1 log=$2 dir=$3; shift 3
exec >>"$log" 2>&1
"$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT HUP
while kill -0 "$parent" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1 & wait $!; done
if ! kill -0 "$parent" 2>/dev/null; then
  echo "dco-cp-guard: test process $parent is gone; stopping $1, removing $dir"
  kill -KILL "$child" 2>/dev/null # nobody is left to talk to it; its data is throwaway
  wait "$child"; code=$?
  rm -rf "$dir"
  exit "$code"
fi
wait "$child"
`;

interface Proc {
  label: string;
  /** What {@link spawn} was given, so the process can be started again the same way. */
  dir: string;
  bin: string;
  args: string[];
  child: Deno.ChildProcess;
  /** == child.pid: `detached` makes it a session and process-group leader. */
  pgid: number;
  log: string;
  exited?: Deno.CommandStatus;
  status: Promise<Deno.CommandStatus>;
  /** First signal on dispose; SIGKILL follows after a grace period. */
  stopSignal: Deno.Signal;
}

function spawn(
  label: string,
  dir: string,
  bin: string,
  args: string[],
  stopSignal: Deno.Signal = "SIGTERM",
): Proc {
  const log = `${dir}/${label}.log`;
  const child = new Deno.Command("bash", {
    args: ["-c", GUARD, "dco-cp-guard", String(Deno.pid), log, dir, bin, ...args],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true, // own process group, so one kill(-pgid) reaches the guard and the binary
  }).spawn();
  const p: Proc = {
    label,
    dir,
    bin,
    args,
    child,
    pgid: child.pid,
    log,
    status: child.status,
    stopSignal,
  };
  p.status = child.status.then((s) => (p.exited = s));
  return p;
}

function killGroup(pgid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

async function stopProc(p: Proc, graceMs = 10_000): Promise<void> {
  if (!p.exited) {
    killGroup(p.pgid, p.stopSignal);
    const ac = new AbortController();
    const escalate = delay(graceMs, undefined, { signal: ac.signal })
      .then(() => killGroup(p.pgid, "SIGKILL"), () => {});
    await p.status;
    ac.abort();
    await escalate;
  }
  killGroup(p.pgid, "SIGKILL"); // anything left in the group after the guard exited
}

/** Local instances alive in this process, for the signal and exit handlers. */
const live = new Set<LocalControlPlane>();
let signalsInstalled = false;

function onSignal(): void {
  for (const cp of live) cp.killNowSync();
  Deno.exit(130);
}

function register(cp: LocalControlPlane): void {
  live.add(cp);
  if (!signalsInstalled) {
    Deno.addSignalListener("SIGINT", onSignal);
    Deno.addSignalListener("SIGTERM", onSignal);
    signalsInstalled = true;
  }
}

function unregister(cp: LocalControlPlane): void {
  live.delete(cp);
  if (live.size === 0 && signalsInstalled) {
    // Removed when idle: a pending signal listener would trip Deno's test op sanitizer.
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
    signalsInstalled = false;
  }
}

globalThis.addEventListener("unload", () => {
  for (const cp of live) cp.killNowSync();
});

// ---------------------------------------------------------------------------------------------
// Helpers

// Waiting lives in wait.ts; re-exported because most tests import it with the control plane.
export { assertStays, WaitAbort, waitFor } from "./wait.ts";

// Ports for child processes live in ports.ts; re-exported for the same reason.
export { freePort };

async function tail(path: string, lines: number): Promise<string> {
  try {
    const text = await Deno.readTextFile(path);
    return text.split("\n").slice(-lines - 1).join("\n");
  } catch (e) {
    return `(cannot read ${path}: ${(e as Error).message})`;
  }
}

function isNotFound(e: unknown): boolean {
  return e instanceof k8s.ApiException && e.code === 404;
}

function randomSuffix(): string {
  return crypto.randomUUID().slice(0, 8);
}

// ---------------------------------------------------------------------------------------------
// Instances

abstract class BaseControlPlane implements ControlPlane {
  abstract readonly external: boolean;
  abstract readonly dir: string | undefined;
  abstract readonly pgids: readonly number[];
  abstract readonly etcdURL: string | undefined;
  abstract readonly kubelet: TestKubelet | undefined;
  abstract readonly crossplane: CrossplaneInstance | undefined;
  readonly webhookHost: string;
  #objects: k8s.KubernetesObjectApi;
  /** Made by this harness and deleted on dispose when the cluster outlives us. */
  protected created: k8s.KubernetesObject[] = [];

  constructor(
    readonly name: string,
    readonly kubeConfig: k8s.KubeConfig,
    readonly kubeconfigPath: string,
    readonly server: string,
    webhookHost: string,
  ) {
    this.webhookHost = webhookHost;
    this.#objects = k8s.KubernetesObjectApi.makeApiClient(kubeConfig);
  }

  api<T extends k8s.ApiType>(cls: k8s.ApiConstructor<T>): T {
    return this.kubeConfig.makeApiClient(cls);
  }

  /**
   * Server-side apply through kubectl: the object goes to the apiserver as written. (client-node's
   * typed serializer would drop JSON names it does not know, e.g. `x-kubernetes-*` in a CRD.)
   */
  async apply<T extends k8s.KubernetesObject>(obj: T): Promise<T> {
    const { kubectl } = await resolveAssets();
    const child = new Deno.Command(kubectl, {
      args: [
        "--kubeconfig",
        this.kubeconfigPath,
        "apply",
        "--server-side",
        "--force-conflicts",
        `--field-manager=${FIELD_MANAGER}`,
        "-o",
        "json",
        "-f",
        "-",
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(JSON.stringify(obj)));
    await writer.close();
    const out = await child.output();
    const dec = new TextDecoder();
    if (!out.success) {
      throw new Error(
        `apply ${obj.kind} ${obj.metadata?.name}: ${dec.decode(out.stderr).trim()}`,
      );
    }
    this.track(obj);
    return JSON.parse(dec.decode(out.stdout)) as T;
  }

  protected track(obj: k8s.KubernetesObject): void {
    const key = (o: k8s.KubernetesObject) =>
      `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
    if (!this.created.some((o) => key(o) === key(obj))) {
      this.created.push({
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        metadata: { name: obj.metadata?.name, namespace: obj.metadata?.namespace },
      });
    }
  }

  async delete(obj: k8s.KubernetesObject): Promise<void> {
    try {
      await this.#objects.delete(obj);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  async createNamespace(prefix: string): Promise<string> {
    const name = `${prefix}-${randomSuffix()}`;
    await this.api(k8s.CoreV1Api).createNamespace({ body: { metadata: { name } } });
    this.track({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    return name;
  }

  async waitForCRD(name: string, timeoutMs = 60_000): Promise<void> {
    const api = this.api(k8s.ApiextensionsV1Api);
    await waitFor(`CRD ${name} to be Established`, async () => {
      const crd = await api.readCustomResourceDefinition({ name });
      const cond = (t: string) => crd.status?.conditions?.find((c) => c.type === t)?.status;
      return cond("Established") === "True" && cond("NamesAccepted") === "True";
    }, { timeoutMs });
  }

  async kubectl(...args: string[]): Promise<CommandResult> {
    const { kubectl } = await resolveAssets();
    const out = await new Deno.Command(kubectl, {
      args: ["--kubeconfig", this.kubeconfigPath, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  }

  abstract makeTempDir(prefix: string): Promise<string>;
  abstract logTail(lines?: number): Promise<string>;
  abstract dispose(): Promise<void>;
  abstract restartApiServer(opts?: RestartOptions): Promise<void>;

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

class ExternalControlPlane extends BaseControlPlane {
  readonly external = true;
  readonly dir = undefined;
  readonly pgids: readonly number[] = [];
  readonly etcdURL = undefined;
  readonly kubelet = undefined;
  readonly crossplane = undefined;
  #disposed = false;
  #tempDirs: string[] = [];

  async makeTempDir(prefix: string): Promise<string> {
    const d = await Deno.makeTempDir({ prefix: `dco-${prefix}-` });
    this.#tempDirs.push(d);
    return d;
  }

  logTail(): Promise<string> {
    return Promise.resolve("");
  }

  restartApiServer(): Promise<void> {
    return Promise.reject(
      new Error(
        `control plane ${this.name}: restartApiServer is not supported on an external cluster ` +
          "(DCO_TEST_KUBECONFIG); skip the test with `ignore: cp.external`",
      ),
    );
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    // Leave the shared cluster as we found it: delete what we made, newest first.
    const errors: string[] = [];
    for (const obj of this.created.reverse()) {
      try {
        await this.delete(obj);
      } catch (e) {
        errors.push(`${obj.kind}/${obj.metadata?.name}: ${(e as Error).message}`);
      }
    }
    for (const d of this.#tempDirs) await Deno.remove(d, { recursive: true }).catch(() => {});
    if (errors.length) {
      console.error(`control_plane: cleanup of ${this.name} failed: ${errors.join("; ")}`);
    }
  }
}

class LocalControlPlane extends BaseControlPlane {
  readonly external = false;
  #procs: Proc[];
  #dir: string;
  #disposed?: Promise<void>;
  /** Set by startLocal with the `kubelet` option. */
  network: PodNetwork | undefined;
  kubelet: TestKubelet | undefined;
  kubeletClient: Deno.HttpClient | undefined;
  crossplane: CrossplaneInstance | undefined;

  constructor(
    name: string,
    kc: k8s.KubeConfig,
    kubeconfigPath: string,
    server: string,
    dir: string,
    procs: Proc[],
    readonly etcdURL: string,
  ) {
    super(name, kc, kubeconfigPath, server, "127.0.0.1");
    this.#dir = dir;
    this.#procs = procs;
  }

  get dir(): string {
    return this.#dir;
  }

  get pgids(): readonly number[] {
    return this.#procs.map((p) => p.pgid);
  }

  makeTempDir(prefix: string): Promise<string> {
    return Deno.makeTempDir({ dir: this.#dir, prefix: `${prefix}-` });
  }

  protected override track(): void {
    // Nothing to clean up one by one: the whole cluster goes away on dispose.
  }

  async logTail(lines = 40): Promise<string> {
    const parts: string[] = [];
    if (this.kubelet) parts.push(await this.kubelet.allLogs(lines));
    for (const p of [...this.#procs].reverse()) {
      parts.push(
        `----- ${p.label} log (last ${lines} lines of ${p.log}) -----`,
        await tail(p.log, lines),
      );
    }
    return parts.join("\n");
  }

  async restartApiServer({ downMs = 0, whileDown }: RestartOptions = {}): Promise<void> {
    if (this.#disposed) throw new Error(`control plane ${this.name} is disposed`);
    const i = this.#procs.findIndex((p) => p.label === "kube-apiserver");
    if (i < 0) throw new Error(`control plane ${this.name} has no kube-apiserver process`);
    const old = this.#procs[i];
    await stopProc(old); // its stopSignal is SIGKILL (see the spawn in startLocal)
    // The binary may outlive the guard shell by a moment; its port must be free before the restart.
    await waitFor("the old kube-apiserver to exit", async () => !await groupAlive(old.pgid), {
      timeoutMs: 30_000,
    });
    try {
      if (downMs > 0) await delay(downMs);
      await whileDown?.();
    } finally {
      await this.#startAgain(i, old);
    }
  }

  async #startAgain(i: number, old: Proc): Promise<void> {
    // Disposed meanwhile: dispose stopped the old process; starting one now would leak it.
    if (this.#disposed) throw new Error(`control plane ${this.name} was disposed during a restart`);
    const fresh = spawn(old.label, old.dir, old.bin, old.args, old.stopSignal);
    // In place: dispose, killNowSync and pgids see the new process (and keep the stop order).
    this.#procs[i] = fresh;
    const cluster = this.kubeConfig.getCurrentCluster();
    const user = this.kubeConfig.getCurrentUser();
    const pem = (data: string | undefined) => atob(data ?? ""); // PEM is ASCII
    const client = Deno.createHttpClient({
      caCerts: [pem(cluster?.caData)],
      cert: pem(user?.certData),
      key: pem(user?.keyData),
    });
    try {
      await waitFor(`restarted kube-apiserver ${this.server}/readyz`, async () => {
        if (fresh.exited) {
          throw new WaitAbort(
            `kube-apiserver exited with code ${fresh.exited.code} after the restart:\n` +
              await tail(fresh.log, 30),
          );
        }
        const res = await fetch(`${this.server}/readyz`, { client });
        await res.body?.cancel();
        return res.ok;
      }, { timeoutMs: 120_000 });
    } finally {
      client.close();
    }
  }

  /** Synchronous last resort for signal and exit handlers. */
  killNowSync(): void {
    this.kubelet?.killNowSync();
    for (const p of this.#procs) killGroup(p.pgid, "SIGKILL");
    this.network?.destroySync();
    try {
      Deno.removeSync(this.#dir, { recursive: true });
    } catch {
      // Already gone, or a process still writing: nothing more can be done synchronously.
    }
  }

  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      try {
        await this.kubelet?.stop();
        this.kubeletClient?.close();
        // apiserver first, so it does not log etcd connection errors while going down.
        for (const p of [...this.#procs].reverse()) await stopProc(p);
        await this.network?.destroy();
      } finally {
        unregister(this);
        await Deno.remove(this.#dir, { recursive: true }).catch((e) => {
          if (!(e instanceof Deno.errors.NotFound)) throw e;
        });
      }
    })();
    return this.#disposed;
  }
}

// ---------------------------------------------------------------------------------------------
// Start

/** Starts a control plane, or connects to DCO_TEST_KUBECONFIG's cluster when that is set. */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const name = opts.name ?? "test";
  const external = Deno.env.get("DCO_TEST_KUBECONFIG");
  if (external) {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(external);
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new Error(`DCO_TEST_KUBECONFIG=${external} has no current cluster`);
    const host = Deno.env.get("DCO_TEST_WEBHOOK_HOST") || "127.0.0.1";
    const cp = new ExternalControlPlane(name, kc, external, server, host);
    await waitFor(`the cluster of DCO_TEST_KUBECONFIG (${server})`, async () => {
      await cp.api(k8s.CoreV1Api).readNamespace({ name: "default" });
      return true;
    }, { timeoutMs: 30_000 });
    return cp;
  }

  const assets = await resolveAssets();
  let lastError: Error | undefined;
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      return await startLocal(name, assets, opts);
    } catch (e) {
      lastError = e as Error;
      // Free ports are picked before the processes bind them; another process may win the race.
      if (!/address already in use/i.test(lastError.message)) throw e;
      console.error(`control_plane ${name}: port taken, retrying (attempt ${attempt})`);
    }
  }
  throw lastError;
}

async function startLocal(
  name: string,
  assets: Assets,
  opts: ControlPlaneOptions,
): Promise<LocalControlPlane> {
  const timeoutMs = opts.readyTimeoutMs ?? 120_000;
  const dir = await Deno.makeTempDir({ prefix: `dco-cp-${name.replace(/[^A-Za-z0-9-]/g, "_")}-` });
  const procs: Proc[] = [];
  let cp: LocalControlPlane | undefined;
  let client: Deno.HttpClient | undefined;
  let network: PodNetwork | undefined;
  try {
    // The pod network first: its gateway address goes into the apiserver's certificate.
    if (opts.kubelet) network = await PodNetwork.create();
    // Certificates: CA, apiserver serving cert, admin client, service-account signing key.
    const pki = `${dir}/pki`;
    await Deno.mkdir(pki);
    const ca = await createCA(pki, "dco-test-ca");
    // Written to pki/kube-apiserver.{crt,key}, where the flags below point.
    await ca.issue({
      commonName: "kube-apiserver",
      hosts: [
        "127.0.0.1",
        "localhost",
        "10.0.0.1",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        ...(network ? [network.gateway] : []),
      ],
      usage: "server",
    });
    const admin = await ca.issue({
      commonName: "dco-admin",
      organizations: ["system:masters"],
      usage: "client",
    });
    await generateKey(pki, "service-account");
    // --service-account-key-file does not read PKCS#8 private keys; give it the public key.
    await writePublicKey(pki, "service-account");

    const [etcdPort, peerPort, apiPort] = [freePort(), freePort(), freePort()];
    const etcdURL = `http://127.0.0.1:${etcdPort}`;
    const peerURL = `http://127.0.0.1:${peerPort}`;
    const etcd = spawn("etcd", dir, assets.etcd, [
      "--name=default",
      `--data-dir=${dir}/etcd`,
      `--listen-client-urls=${etcdURL}`,
      `--advertise-client-urls=${etcdURL}`,
      `--listen-peer-urls=${peerURL}`,
      `--initial-advertise-peer-urls=${peerURL}`,
      `--initial-cluster=default=${peerURL}`,
      "--unsafe-no-fsync=true", // test data is throwaway; fsync dominates etcd latency on CI disks
    ]);
    procs.push(etcd);
    // Register at once, so a Ctrl-C during startup still cleans up.
    const kubeconfigPath = `${dir}/kubeconfig`;
    const server = `https://127.0.0.1:${apiPort}`;
    const kcText = JSON.stringify(
      {
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name, cluster: { server, "certificate-authority-data": b64(ca.cert) } }],
        users: [{
          name: "dco-admin",
          user: { "client-certificate-data": b64(admin.cert), "client-key-data": b64(admin.key) },
        }],
        contexts: [{ name, context: { cluster: name, user: "dco-admin", namespace: "default" } }],
        "current-context": name,
      },
      null,
      2,
    );
    await Deno.writeTextFile(kubeconfigPath, kcText, { mode: 0o600 });
    const kc = new k8s.KubeConfig();
    kc.loadFromString(kcText);
    cp = new LocalControlPlane(name, kc, kubeconfigPath, server, dir, procs, etcdURL);
    cp.network = network;
    register(cp);

    const exitedEarly = () => {
      const dead = procs.find((p) => p.exited);
      if (dead) {
        throw new WaitAbort(`${dead.label} exited with code ${dead.exited!.code} during startup`);
      }
    };
    await waitFor(`etcd on ${etcdURL}`, async () => {
      exitedEarly();
      const res = await fetch(`${etcdURL}/health`);
      const body = await res.text();
      return res.ok && body.includes("true");
    }, { timeoutMs });

    procs.push(spawn(
      "kube-apiserver",
      dir,
      assets.kubeApiServer,
      [
        `--etcd-servers=${etcdURL}`,
        // With pods, also on the pod network's gateway (pods reach the apiserver there).
        `--bind-address=${network ? "0.0.0.0" : "127.0.0.1"}`,
        ...(network ? ["--enable-aggregator-routing=true"] : []),
        "--advertise-address=127.0.0.1",
        `--secure-port=${apiPort}`,
        `--cert-dir=${dir}/apiserver`, // unused with explicit certs, but keeps it off /var/run
        `--tls-cert-file=${pki}/kube-apiserver.crt`,
        `--tls-private-key-file=${pki}/kube-apiserver.key`,
        `--client-ca-file=${pki}/dco-test-ca.crt`,
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${pki}/service-account.pub`,
        `--service-account-signing-key-file=${pki}/service-account.key`,
        "--service-cluster-ip-range=10.0.0.0/24",
        "--authorization-mode=RBAC",
        // The default "lease" reconciler refuses a loopback advertise address; one apiserver needs none.
        "--endpoint-reconciler-type=none",
        "--allow-privileged=true",
        // No controller-manager creates the default ServiceAccount, so its admission would block pods.
        "--disable-admission-plugins=ServiceAccount",
        ...(opts.apiServerArgs ?? []),
      ],
      // SIGKILL, not SIGTERM: a graceful stop sends HTTP/2 GOAWAY to every client connection, and
      // Deno 2.9.6's node:http2 (used by undici inside @kubernetes/client-node) can abort the
      // whole test process on it: nghttp2_session.c find_stream_on_goaway_func assertion.
      "SIGKILL",
    ));

    client = Deno.createHttpClient({ caCerts: [ca.cert], cert: admin.cert, key: admin.key });
    const c = client;
    await waitFor(`kube-apiserver ${server}/readyz`, async () => {
      exitedEarly();
      const res = await fetch(`${server}/readyz`, { client: c });
      await res.body?.cancel();
      return res.ok;
    }, { timeoutMs });
    // The bootstrap controller creates the default namespace shortly after /readyz.
    await waitFor("namespace default", async () => {
      exitedEarly();
      const res = await fetch(`${server}/api/v1/namespaces/default`, { client: c });
      await res.body?.cancel();
      return res.ok;
    }, { timeoutMs });
    const controllers = [...(opts.kubelet ? KCM_CONTROLLERS : []), ...(opts.controllers ?? [])];
    if (controllers.length > 0) {
      procs.push(spawn("kube-controller-manager", dir, assets.kubeControllerManager, [
        `--kubeconfig=${kubeconfigPath}`,
        `--controllers=${[...new Set(controllers)].join(",")}`,
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        `--secure-port=${freePort()}`,
        `--cert-dir=${dir}/kcm`,
        "--use-service-account-credentials=false",
      ]));
    }
    if (opts.kubelet && network) {
      const kubeletClient = Deno.createHttpClient({
        caCerts: [ca.cert],
        cert: admin.cert,
        key: admin.key,
      });
      cp.kubeletClient = kubeletClient;
      const call = async (method: string, path: string, body?: unknown, contentType?: string) => {
        const res = await fetch(`${server}${path}`, {
          method,
          client: kubeletClient,
          headers: body === undefined ? {} : { "content-type": contentType ?? "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        return { status: res.status, body: parsed };
      };
      const kubelet = new TestKubelet(call, network, opts.kubelet, dir, apiPort, ca.cert);
      cp.kubelet = kubelet;
      await kubelet.start();
    }
    if (opts.crossplane) {
      cp.crossplane = await startCrossplane({
        binary: assets.crossplane,
        crdsDir: await crossplaneCRDsDir(assets.crossplane),
        kubectl: assets.kubectl,
        kubeconfigPath,
        dir,
        timeoutMs,
        spawn: (label, argv) => {
          const p = spawn(label, dir, "env", argv);
          procs.push(p);
          return p;
        },
        freePort,
        tail,
      });
    }
    return cp;
  } catch (e) {
    const logs = [];
    for (const p of procs) logs.push(`----- ${p.label} log -----\n${await tail(p.log, 30)}`);
    if (cp) await cp.dispose();
    else {
      for (const p of procs) await stopProc(p);
      await network?.destroy();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
    const msg = `control plane ${name} failed to start: ${(e as Error).message}`;
    throw new Error(logs.length ? `${msg}\n${logs.join("\n")}` : msg, { cause: e });
  } finally {
    client?.close();
  }
}

/** The kube-controller-manager controllers the `kubelet` option runs. */
const KCM_CONTROLLERS = [
  "deployment-controller",
  "replicaset-controller",
  "job-controller",
  "endpoints-controller",
  "endpointslice-controller",
  "garbage-collector-controller",
  "namespace-controller",
  "serviceaccount-controller",
  "disruption-controller",
  "root-ca-certificate-publisher-controller",
];

/**
 * Wraps a test body with a control plane: started before, disposed after (also on failure),
 * with the apiserver/etcd log tail printed when the body throws.
 */
export function withControlPlane(
  fn: (cp: ControlPlane, t: Deno.TestContext) => Promise<void>,
  opts: ControlPlaneOptions = {},
): (t: Deno.TestContext) => Promise<void> {
  return async (t) => {
    const cp = await startControlPlane({ name: opts.name ?? t.name, ...opts });
    try {
      await fn(cp, t);
    } catch (e) {
      const logs = await cp.logTail();
      if (logs) console.error(`\n${t.name} failed; control plane ${cp.name}:\n${logs}`);
      throw e;
    } finally {
      await cp.dispose();
    }
  };
}

/**
 * The one way to write an e2e test: a Deno test named `name` running `fn` on its own control plane
 * ({@link withControlPlane}). The resource and op sanitizers are off: the k8s client (undici)
 * leaves keep-alive timers and pooled sockets behind after the body.
 */
export function e2eTest(
  name: string,
  fn: (cp: ControlPlane, t: Deno.TestContext) => Promise<void>,
  opts: ControlPlaneOptions = {},
): void {
  Deno.test({ name, sanitizeResources: false, sanitizeOps: false, fn: withControlPlane(fn, opts) });
}

/**
 * Processes whose command line mentions `dir` (an instance's temp dir): used to prove teardown
 * left nothing behind. Zombies have an empty cmdline and are not listed.
 */
export async function processesMentioning(
  dir: string,
): Promise<{ pid: number; cmdline: string }[]> {
  const found: { pid: number; cmdline: string }[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    let cmdline: string;
    try {
      cmdline = (await Deno.readTextFile(`/proc/${e.name}/cmdline`)).replaceAll("\0", " ").trim();
    } catch {
      continue; // exited meanwhile
    }
    if (cmdline.includes(dir)) found.push({ pid: Number(e.name), cmdline });
  }
  return found;
}

/** Whether any process is still in process group `pgid`. */
export async function groupAlive(pgid: number): Promise<boolean> {
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${e.name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // fields[0] is the state; a zombie (Z) is dead already, only not yet reaped.
      if (Number(fields[2]) === pgid && fields[0] !== "Z") return true;
    } catch {
      continue;
    }
  }
  return false;
}
