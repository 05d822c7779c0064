/**
 * The test kubelet: plays the node's part where no kubelet or container runtime exists. With the
 * control plane's kube-controller-manager it makes Deployments real: the controllers create the
 * ReplicaSets and Pods and the EndpointSlices; this kubelet binds each unscheduled Pod to its one
 * Node and runs it as a real process in a network namespace of its own (the Pod IP), reports it
 * Running and Ready (by probing like a kubelet does), and stops it when the Pod is deleted.
 *
 * Containers: an image name maps to an entrypoint on this machine ({@link PodImage}; e.g. the
 * webhook-server image → `deno run <flags> src/main/webhook_server.ts`); the container's `args`
 * follow it, its `env` (with downward-API field refs) is its whole environment, plus what the
 * image carries and `KUBERNETES_SERVICE_HOST`/`_PORT` (the apiserver's address on the pod
 * network). Volumes are real mounts in a private mount namespace: Secret and ConfigMap volumes
 * (kept in sync with the API, as a kubelet does, so certificate rotation reaches the process),
 * emptyDirs, and the service-account token (TokenRequest, bound to the Pod) at
 * /var/run/secrets/kubernetes.io/serviceaccount.
 *
 * Restart policy (so kube-controller-manager's job-controller can run Jobs): with `Always` (the
 * default) an exited container is restarted with back-off (1 s doubling to 10 s, reported as
 * CrashLoopBackOff); with `Never`, or `OnFailure` and exit code 0, it is not: the container is
 * reported `terminated` (exit code, reason Completed/Error) and the Pod phase `Succeeded` (code 0)
 * or `Failed`, which the Pod keeps until it is deleted; `OnFailure` restarts only a non-zero exit.
 *
 * Deliberate differences from a kubelet: one node; one container per Pod; probes run every
 * min(periodSeconds, 1 s) so tests do not wait out production periods; liveness probes are not
 * run; an emptyDir is not mounted where it would hide this checkout or the Deno binary
 * (the "image" is the host's files). The securityContext (runAsNonRoot, readOnlyRootFilesystem,
 * dropped capabilities, seccomp) and resource limits are not enforced: Pods run as the test's
 * user on the host's filesystem. The chart's manager Deployment runs as rendered
 * (tests/e2e/chart/helm_install_test.ts): its /tmp emptyDir is skipped when it would hide the
 * control plane's directory (a TMPDIR under /tmp), its admission Secret is mounted below /tmp.
 */
import { setTimeout as delay } from "node:timers/promises";
import https from "node:https";
import type { PodNetwork } from "./pod_network.ts";
import { base64ToBytes } from "../../src/lib/base64.ts";

export interface PodImage {
  /** The image's entrypoint; a container's `command` replaces it, its `args` follow it. */
  entrypoint: string[];
  /** Environment the image carries (PATH, HOME, ...). */
  env?: Record<string, string>;
}

export interface KubeletOptions {
  /** Image name → how to run it here. A Pod with another image stays Pending (ErrImagePull). */
  images: Record<string, PodImage>;
}

/** One HTTP call to the apiserver as admin; JSON in and out. */
export type ApiCall = (
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
) => Promise<{ status: number; body: unknown }>;

// deno-lint-ignore no-explicit-any
type Obj = any;

const SA_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";
const repoRoot = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

interface Probe {
  httpGet?: { path?: string; port: number | string; scheme?: string };
  periodSeconds?: number;
  failureThreshold?: number;
  initialDelaySeconds?: number;
}

interface RunningPod {
  uid: string;
  namespace: string;
  name: string;
  dir: string;
  ip?: string;
  netns?: string;
  pod: Obj;
  child?: Deno.ChildProcess;
  pgid?: number;
  exited?: Promise<Deno.CommandStatus>;
  restartCount: number;
  started: boolean;
  ready: boolean;
  terminating: boolean;
  startedAt?: string;
  waitingReason?: string;
  waitingMessage?: string;
  lastTerminated?: Obj;
  /** Set when the container exited for good (restart policy): the Pod is Succeeded/Failed. */
  terminated?: Obj;
  volumeVersions: Map<string, string>;
  stop: AbortController;
}

const GUARD = `
parent=$1 log=$2; shift 2
exec >>"$log" 2>&1
"$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT HUP
while kill -0 "$parent" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1 & wait $!; done
if ! kill -0 "$parent" 2>/dev/null; then kill -KILL "$child" 2>/dev/null; fi
wait "$child"
`;

export class TestKubelet {
  readonly nodeName: string;
  readonly #api: ApiCall;
  readonly #net: PodNetwork;
  readonly #opts: KubeletOptions;
  readonly #dir: string;
  readonly #apiPort: number;
  readonly #caPem: string;
  readonly #pods = new Map<string, RunningPod>();
  readonly #stop = new AbortController();
  #loop?: Promise<void>;
  /** Errors of the sync loop, for the test's failure message. */
  readonly errors: string[] = [];

  constructor(
    api: ApiCall,
    net: PodNetwork,
    opts: KubeletOptions,
    dir: string,
    apiPort: number,
    caPem: string,
  ) {
    this.#api = api;
    this.#net = net;
    this.#opts = opts;
    this.#dir = dir;
    this.#apiPort = apiPort;
    this.#caPem = caPem;
    this.nodeName = "dco-test-node";
  }

  async start(): Promise<void> {
    const node = {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: this.nodeName, labels: { "kubernetes.io/hostname": this.nodeName } },
    };
    const created = await this.#api("POST", "/api/v1/nodes", node);
    if (created.status >= 300 && created.status !== 409) {
      throw new Error(`registering node: HTTP ${created.status} ${JSON.stringify(created.body)}`);
    }
    await this.#nodeStatus();
    this.#loop = this.#run();
  }

  async #nodeStatus(): Promise<void> {
    const now = new Date().toISOString();
    const res = await this.#api("PATCH", `/api/v1/nodes/${this.nodeName}/status`, {
      status: {
        conditions: [{
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "dco test kubelet",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        }],
        addresses: [{ type: "InternalIP", address: this.#net.gateway }, {
          type: "Hostname",
          address: this.nodeName,
        }],
        capacity: { cpu: "2", memory: "16Gi", pods: "110" },
        allocatable: { cpu: "2", memory: "16Gi", pods: "110" },
        nodeInfo: {
          kubeletVersion: "v0.0.0-dco-test",
          containerRuntimeVersion: "dco-test://0",
          architecture: "amd64",
          operatingSystem: "linux",
          osImage: "",
          kernelVersion: "",
          machineID: "",
          systemUUID: "",
          bootID: "",
          kubeProxyVersion: "",
        },
      },
    }, "application/merge-patch+json");
    if (res.status >= 300) throw new Error(`node status: HTTP ${res.status}`);
  }

  /** Everything a Pod's process wrote so far ("" when unknown). */
  async podLog(namespace: string, name: string): Promise<string> {
    for (const p of this.#pods.values()) {
      if (p.namespace === namespace && p.name === name) {
        return await Deno.readTextFile(`${p.dir}/log`).catch(() => "");
      }
    }
    return "";
  }

  /** The logs of every Pod this kubelet ran or runs, for failure messages. */
  async allLogs(lines = 40): Promise<string> {
    const out: string[] = [];
    for (const p of this.#pods.values()) {
      const text = await Deno.readTextFile(`${p.dir}/log`).catch(() => "");
      out.push(
        `----- pod ${p.namespace}/${p.name} -----`,
        text.split("\n").slice(-lines).join("\n"),
      );
    }
    if (this.errors.length) out.push("----- kubelet errors -----", ...this.errors.slice(-20));
    return out.join("\n");
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      try {
        await this.#sync();
      } catch (e) {
        this.#error(`sync: ${(e as Error).message}`);
      }
      await delay(200, undefined, { signal: this.#stop.signal }).catch(() => {});
    }
  }

  #error(msg: string): void {
    this.errors.push(`${new Date().toISOString()} ${msg}`);
    if (this.errors.length > 200) this.errors.shift();
  }

  async #sync(): Promise<void> {
    const res = await this.#api("GET", "/api/v1/pods");
    if (res.status !== 200) throw new Error(`listing pods: HTTP ${res.status}`);
    const items: Obj[] = (res.body as Obj).items ?? [];
    const seen = new Set<string>();
    for (const pod of items) {
      const uid = pod.metadata.uid as string;
      seen.add(uid);
      if (!pod.spec.nodeName) {
        if (!pod.metadata.deletionTimestamp) await this.#bind(pod);
        continue;
      }
      if (pod.spec.nodeName !== this.nodeName) continue;
      const known = this.#pods.get(uid);
      if (pod.metadata.deletionTimestamp) {
        if (known && !known.terminating) {
          // A termination still running when the kubelet stops (its API client closed) must not
          // become an unhandled rejection that fails the test file.
          void this.#terminate(known, pod).catch((e) =>
            this.#error(`terminating ${known.name}: ${e.message}`)
          );
        } else if (!known) await this.#finalDelete(pod);
        continue;
      }
      if (!known) {
        const rp: RunningPod = {
          uid,
          namespace: pod.metadata.namespace,
          name: pod.metadata.name,
          dir: await Deno.makeTempDir({ dir: this.#dir, prefix: `pod-${pod.metadata.name}-` }),
          pod,
          restartCount: 0,
          started: false,
          ready: false,
          terminating: false,
          volumeVersions: new Map(),
          stop: new AbortController(),
        };
        this.#pods.set(uid, rp);
        void this.#lifecycle(rp).catch((e) => this.#error(`pod ${rp.name}: ${e.message}`));
      } else known.pod = pod;
    }
    // Pods removed from the API without passing through termination (force delete).
    for (const rp of this.#pods.values()) {
      if (!seen.has(rp.uid) && !rp.terminating) {
        rp.terminating = true;
        rp.stop.abort();
        void this.#kill(rp, 0).then(() => this.#cleanup(rp));
      }
    }
  }

  async #bind(pod: Obj): Promise<void> {
    const { namespace, name } = pod.metadata;
    const res = await this.#api("POST", `/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name, namespace },
      target: { apiVersion: "v1", kind: "Node", name: this.nodeName },
    });
    if (res.status >= 300 && res.status !== 409 && res.status !== 404) {
      this.#error(`binding ${namespace}/${name}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    }
  }

  /** Sets up, runs, probes and restarts one Pod until it is deleted. */
  async #lifecycle(rp: RunningPod): Promise<void> {
    const container = rp.pod.spec.containers[0];
    const image = this.#opts.images[container.image];
    if (!image) {
      rp.waitingReason = "ErrImagePull";
      rp.waitingMessage = `the test kubelet has no image ${JSON.stringify(container.image)}`;
      await this.#status(rp);
      return;
    }
    const iface = await this.#net.attach(rp.uid);
    rp.ip = iface.ip;
    rp.netns = iface.netns;
    // Volumes and the token can wait on objects that do not exist yet: retry like a kubelet.
    let mounts: [string, string][] | undefined;
    while (!rp.stop.signal.aborted) {
      try {
        mounts = await this.#volumes(rp, container);
        break;
      } catch (e) {
        rp.waitingReason = "ContainerCreating";
        rp.waitingMessage = (e as Error).message;
        await this.#status(rp).catch(() => {});
        await delay(500, undefined, { signal: rp.stop.signal }).catch(() => {});
      }
    }
    if (!mounts) return;
    void this.#syncVolumesLoop(rp, container);
    let backoffMs = 1000;
    while (!rp.stop.signal.aborted) {
      this.#spawn(rp, container, image, mounts);
      rp.waitingReason = undefined;
      rp.waitingMessage = undefined;
      await this.#status(rp).catch((e) => this.#error(`status ${rp.name}: ${e.message}`));
      const probing = this.#probeLoop(rp, container);
      const status = await rp.exited!;
      rp.started = false;
      rp.ready = false;
      await probing;
      if (rp.terminating || rp.stop.signal.aborted) return;
      const terminated = {
        exitCode: status.code,
        reason: status.code === 0 ? "Completed" : "Error",
        startedAt: rp.startedAt,
        finishedAt: new Date().toISOString(),
      };
      const policy = rp.pod.spec.restartPolicy ?? "Always";
      if (policy === "Never" || (policy === "OnFailure" && status.code === 0)) {
        await this.#complete(rp, terminated);
        return;
      }
      rp.restartCount++;
      rp.lastTerminated = { terminated };
      rp.waitingReason = "CrashLoopBackOff";
      rp.waitingMessage = `back-off ${backoffMs / 1000}s restarting failed container`;
      await this.#status(rp).catch(() => {});
      await delay(backoffMs, undefined, { signal: rp.stop.signal }).catch(() => {});
      backoffMs = Math.min(backoffMs * 2, 10_000);
    }
  }

  /** The container exited for good: terminated state, phase Succeeded/Failed (kept until delete). */
  async #complete(rp: RunningPod, terminated: Obj): Promise<void> {
    try {
      Deno.kill(-rp.pgid!, "SIGKILL"); // anything left in the group, before its id can be reused
    } catch {
      // gone
    }
    rp.terminated = terminated;
    rp.stop.abort(); // the volume sync
    for (let attempt = 0; !this.#stop.signal.aborted && !rp.terminating; attempt++) {
      try {
        await this.#status(rp);
        return;
      } catch (e) {
        if (attempt >= 20) {
          this.#error(`status ${rp.name}: ${(e as Error).message}`);
          return;
        }
        await delay(500, undefined, { signal: this.#stop.signal }).catch(() => {});
      }
    }
  }

  /** Materializes the volumes; returns [hostDir, mountPath] pairs. */
  async #volumes(rp: RunningPod, container: Obj): Promise<[string, string][]> {
    const mounts: [string, string][] = [];
    const volumes: Obj[] = rp.pod.spec.volumes ?? [];
    const shadows = (path: string) =>
      [repoRoot, Deno.execPath(), Deno.env.get("HOME") ?? "/root", this.#dir].some((p) =>
        p === path || p.startsWith(path.endsWith("/") ? path : `${path}/`)
      );
    for (const vm of container.volumeMounts ?? []) {
      const vol = volumes.find((v) => v.name === vm.name);
      if (!vol) throw new Error(`volume ${vm.name} is not defined`);
      const host = `${rp.dir}/volumes/${vm.name}`;
      await Deno.mkdir(host, { recursive: true });
      if (vol.secret || vol.configMap) await this.#writeObjectVolume(rp, vm.name, vol);
      else if (!vol.emptyDir) continue; // other volume types: not supported here
      if (vol.emptyDir && shadows(vm.mountPath)) continue;
      mounts.push([host, vm.mountPath]);
    }
    if (rp.pod.spec.automountServiceAccountToken !== false) {
      const sa = rp.pod.spec.serviceAccountName || "default";
      const res = await this.#api(
        "POST",
        `/api/v1/namespaces/${rp.namespace}/serviceaccounts/${sa}/token`,
        {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: {
            expirationSeconds: 3600,
            boundObjectRef: { apiVersion: "v1", kind: "Pod", name: rp.name, uid: rp.uid },
          },
        },
      );
      if (res.status >= 300) {
        throw new Error(`service account ${rp.namespace}/${sa}: token: HTTP ${res.status}`);
      }
      const host = `${rp.dir}/serviceaccount`;
      await Deno.mkdir(host, { recursive: true });
      await Deno.writeTextFile(`${host}/token`, (res.body as Obj).status.token);
      await Deno.writeTextFile(`${host}/ca.crt`, this.#caPem);
      await Deno.writeTextFile(`${host}/namespace`, rp.namespace);
      mounts.push([host, SA_PATH]);
    }
    return mounts;
  }

  /** Writes a Secret/ConfigMap volume atomically (new dir + rename), as a kubelet updates it. */
  async #writeObjectVolume(rp: RunningPod, name: string, vol: Obj): Promise<void> {
    const isSecret = !!vol.secret;
    const objName = isSecret ? vol.secret.secretName : vol.configMap.name;
    const kind = isSecret ? "secrets" : "configmaps";
    const res = await this.#api("GET", `/api/v1/namespaces/${rp.namespace}/${kind}/${objName}`);
    if (res.status !== 200) {
      throw new Error(
        `${kind.slice(0, -1)} ${rp.namespace}/${objName} for volume ${name}: HTTP ${res.status}`,
      );
    }
    const obj = res.body as Obj;
    const rv = obj.metadata.resourceVersion as string;
    if (rp.volumeVersions.get(name) === rv) return;
    const host = `${rp.dir}/volumes/${name}`;
    const data: Record<string, Uint8Array> = {};
    for (const [k, v] of Object.entries(obj.data ?? {})) {
      data[k] = isSecret ? base64ToBytes(v as string) : new TextEncoder().encode(v as string);
    }
    // Files are replaced one by one through a rename, so a reader never sees a partial file.
    for (const [k, bytes] of Object.entries(data)) {
      await Deno.writeFile(`${host}/.${k}.tmp`, bytes);
      await Deno.rename(`${host}/.${k}.tmp`, `${host}/${k}`);
    }
    for await (const e of Deno.readDir(host)) {
      if (!e.name.startsWith(".") && !(e.name in data)) await Deno.remove(`${host}/${e.name}`);
    }
    rp.volumeVersions.set(name, rv);
  }

  async #syncVolumesLoop(rp: RunningPod, container: Obj): Promise<void> {
    const volumes: Obj[] = rp.pod.spec.volumes ?? [];
    while (!rp.stop.signal.aborted) {
      await delay(1000, undefined, { signal: rp.stop.signal }).catch(() => {});
      for (const vm of container.volumeMounts ?? []) {
        const vol = volumes.find((v) => v.name === vm.name);
        if (!vol?.secret && !vol?.configMap) continue;
        await this.#writeObjectVolume(rp, vm.name, vol).catch(() => {});
      }
    }
  }

  #env(rp: RunningPod, container: Obj, image: PodImage): Record<string, string> {
    const env: Record<string, string> = {
      // What a base image would set; the "image" here is this machine's files.
      PATH: Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? "/root",
      ...image.env,
      KUBERNETES_SERVICE_HOST: this.#net.gateway,
      KUBERNETES_SERVICE_PORT: String(this.#apiPort),
    };
    const fields: Record<string, string | undefined> = {
      "metadata.name": rp.name,
      "metadata.namespace": rp.namespace,
      "metadata.uid": rp.uid,
      "spec.nodeName": this.nodeName,
      "spec.serviceAccountName": rp.pod.spec.serviceAccountName,
      "status.podIP": rp.ip,
      "status.hostIP": this.#net.gateway,
    };
    for (const e of container.env ?? []) {
      if (e.value !== undefined) env[e.name] = String(e.value);
      else if (e.valueFrom?.fieldRef) env[e.name] = fields[e.valueFrom.fieldRef.fieldPath] ?? "";
      else if (e.valueFrom?.resourceFieldRef) {
        const r = e.valueFrom.resourceFieldRef.resource as string;
        const [kind, res] = r.split(".");
        env[e.name] = String(container.resources?.[kind]?.[res] ?? "");
      }
    }
    return env;
  }

  #spawn(rp: RunningPod, container: Obj, image: PodImage, mounts: [string, string][]): void {
    const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
    const setup = mounts.map(([host, path]) =>
      `mkdir -p ${q(path)} && mount --bind ${q(host)} ${q(path)}`
    ).join(" && ");
    const argv = [...(container.command ?? image.entrypoint), ...(container.args ?? [])];
    const child = new Deno.Command("bash", {
      args: [
        "-c",
        GUARD,
        "dco-pod-guard",
        String(Deno.pid),
        `${rp.dir}/log`,
        "ip",
        "netns",
        "exec",
        rp.netns!,
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        `${setup ? `${setup} && ` : ""}exec "$@"`,
        "pod",
        ...argv,
      ],
      env: this.#env(rp, container, image),
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
      detached: true,
    }).spawn();
    rp.child = child;
    rp.pgid = child.pid;
    rp.exited = child.status;
    rp.startedAt = new Date().toISOString();
  }

  async #probe(rp: RunningPod, container: Obj, probe: Probe): Promise<boolean> {
    const g = probe.httpGet;
    if (!g) return true;
    const port = typeof g.port === "number"
      ? g.port
      : container.ports?.find((p: Obj) => p.name === g.port)?.containerPort;
    const url = `${(g.scheme ?? "HTTP").toLowerCase()}://${rp.ip}:${port}${g.path ?? "/"}`;
    if (g.scheme === "HTTPS") {
      return await new Promise<boolean>((resolve) => {
        const req = https.get(url, { rejectUnauthorized: false, timeout: 1000 }, (res) => {
          res.resume();
          resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
        });
        req.on("error", () => resolve(false));
        req.on("timeout", () => req.destroy());
      });
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.body?.cancel();
      return res.status >= 200 && res.status < 400;
    } catch {
      return false;
    }
  }

  async #probeLoop(rp: RunningPod, container: Obj): Promise<void> {
    const startup: Probe | undefined = container.startupProbe;
    const readiness: Probe | undefined = container.readinessProbe;
    const period = (p: Probe | undefined) => Math.min((p?.periodSeconds ?? 10) * 1000, 1000);
    let failures = 0;
    let exited = false;
    void rp.exited!.then(() => (exited = true));
    const initial = Math.min((readiness?.initialDelaySeconds ?? 0) * 1000, 1000);
    if (initial) await delay(initial);
    while (!exited && !rp.stop.signal.aborted) {
      if (!rp.started) {
        if (!startup || await this.#probe(rp, container, startup)) {
          rp.started = true;
          failures = 0;
          await this.#status(rp).catch(() => {});
          continue;
        }
        if (++failures >= (startup.failureThreshold ?? 3) && !exited) {
          this.#error(`pod ${rp.name}: startup probe failed ${failures} times; restarting`);
          await this.#kill(rp, 0);
          return;
        }
        await delay(period(startup));
        continue;
      }
      const ok = readiness ? await this.#probe(rp, container, readiness) : true;
      if (exited || rp.terminating) return;
      if (ok) failures = 0;
      else failures++;
      const ready = ok || (rp.ready && failures < (readiness?.failureThreshold ?? 3));
      if (ready !== rp.ready) {
        rp.ready = ready;
        await this.#status(rp).catch((e) => this.#error(`status ${rp.name}: ${e.message}`));
      }
      await delay(period(readiness));
    }
  }

  async #status(rp: RunningPod): Promise<void> {
    const now = new Date().toISOString();
    const container = rp.pod.spec.containers[0];
    const terminated = rp.terminated;
    const running = !terminated && rp.child && !rp.waitingReason;
    const old: Obj[] = rp.pod.status?.conditions ?? [];
    const cond = (type: string, ok: boolean) => {
      const status = ok ? "True" : "False";
      const prev = old.find((c) => c.type === type);
      return {
        type,
        status,
        lastProbeTime: null,
        lastTransitionTime: prev?.status === status ? prev.lastTransitionTime : now,
      };
    };
    const ready = !!running && rp.ready && !rp.terminating;
    const state = terminated
      ? { terminated }
      : running
      ? { running: { startedAt: rp.startedAt } }
      : {
        waiting: { reason: rp.waitingReason ?? "ContainerCreating", message: rp.waitingMessage },
      };
    const phase = terminated
      ? (terminated.exitCode === 0 ? "Succeeded" : "Failed")
      : running || rp.restartCount > 0
      ? "Running"
      : "Pending";
    const status = {
      phase,
      hostIP: this.#net.gateway,
      hostIPs: [{ ip: this.#net.gateway }],
      ...(rp.ip ? { podIP: rp.ip, podIPs: [{ ip: rp.ip }] } : {}),
      startTime: rp.pod.status?.startTime ?? now,
      conditions: [
        cond("PodScheduled", true),
        cond("Initialized", true),
        cond("ContainersReady", ready),
        cond("Ready", ready),
      ],
      containerStatuses: [{
        name: container.name,
        image: container.image,
        imageID: "",
        containerID: rp.pgid ? `dco-test://${rp.pgid}` : undefined,
        ready,
        started: !!running && rp.started,
        restartCount: rp.restartCount,
        state,
        lastState: rp.lastTerminated ?? {},
      }],
    };
    const res = await this.#api(
      "PATCH",
      `/api/v1/namespaces/${rp.namespace}/pods/${rp.name}/status`,
      { status },
      "application/merge-patch+json",
    );
    if (res.status === 200) rp.pod = res.body;
    else if (res.status !== 404) throw new Error(`HTTP ${res.status} ${JSON.stringify(res.body)}`);
  }

  /** SIGTERM to the process group, SIGKILL after `graceMs`. */
  async #kill(rp: RunningPod, graceMs: number): Promise<void> {
    if (!rp.child || !rp.pgid || rp.terminated) return; // a completed Pod's group is gone
    const signal = (s: Deno.Signal) => {
      try {
        Deno.kill(-rp.pgid!, s);
      } catch {
        // gone
      }
    };
    signal(graceMs > 0 ? "SIGTERM" : "SIGKILL");
    const done = await Promise.race([
      rp.exited!.then(() => true),
      delay(Math.max(graceMs, 50)).then(() => false),
    ]);
    if (!done) {
      signal("SIGKILL");
      await rp.exited;
    }
    signal("SIGKILL"); // anything left in the group
  }

  /** Graceful termination of a deleted Pod: preStop sleep, SIGTERM, grace, SIGKILL, delete. */
  async #terminate(rp: RunningPod, pod: Obj): Promise<void> {
    rp.terminating = true;
    rp.pod = pod;
    const started = Date.now();
    const graceMs = (pod.metadata.deletionGracePeriodSeconds ?? 30) * 1000;
    await this.#status(rp).catch(() => {});
    const preStop = pod.spec.containers[0]?.lifecycle?.preStop?.sleep?.seconds;
    if (rp.child && preStop) await delay(Math.min(preStop * 1000, graceMs));
    rp.stop.abort();
    await this.#kill(rp, Math.max(graceMs - (Date.now() - started), 0));
    await this.#finalDelete(pod);
    await this.#cleanup(rp);
  }

  async #finalDelete(pod: Obj): Promise<void> {
    const { namespace, name, uid } = pod.metadata;
    const res = await this.#api("DELETE", `/api/v1/namespaces/${namespace}/pods/${name}`, {
      apiVersion: "v1",
      kind: "DeleteOptions",
      gracePeriodSeconds: 0,
      preconditions: { uid },
    });
    if (res.status >= 300 && res.status !== 404 && res.status !== 409) {
      this.#error(`deleting ${namespace}/${name}: HTTP ${res.status}`);
    }
  }

  async #cleanup(rp: RunningPod): Promise<void> {
    await this.#net.detach(rp.uid);
    // The directory (and its log) stays until the control plane's dir is removed.
  }

  /** Stops every Pod process (SIGKILL: the cluster goes away with them). */
  async stop(): Promise<void> {
    this.#stop.abort();
    for (const rp of this.#pods.values()) {
      rp.stop.abort();
      rp.terminating = true;
    }
    await this.#loop;
    await Promise.all([...this.#pods.values()].map((rp) => this.#kill(rp, 0)));
    for (const rp of this.#pods.values()) await this.#cleanup(rp);
  }

  killNowSync(): void {
    for (const rp of this.#pods.values()) {
      try {
        if (rp.pgid && !rp.terminated) Deno.kill(-rp.pgid, "SIGKILL");
      } catch {
        // gone
      }
    }
  }
}
