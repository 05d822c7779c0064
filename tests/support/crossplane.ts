/**
 * Real Crossplane on the test control plane (`startControlPlane({ crossplane: true })`): the
 * `crossplane` binary built by hack/testenv.sh (group `crossplane`) runs out of cluster with the
 * admin kubeconfig, as the Helm chart's two containers run in a cluster:
 *
 * 1. `crossplane core init` (the chart's init container): installs Crossplane's core CRDs from
 *    `crossplane-crds/` beside the binary (`CRDS_PATH`), generates its CA and client
 *    certificate into Secrets of `crossplane-system`, creates the package Lock and the default
 *    DeploymentRuntimeConfig and ManagedResourceActivationPolicy.
 * 2. `crossplane core start` (the chart's main container): every core controller — XRD, composite
 *    and claim, Composition revisions, the package manager. The client certificate `init` made is
 *    written to files for `--tls-client-certs-dir` (what the chart mounts from the Secret).
 *
 * Differences from the chart, all deliberate: webhooks are off (`ENABLE_WEBHOOKS=false`: no
 * Service can reach a host process, and Crossplane's only webhook left is the Usage one), the
 * identity is the harness's admin (system:masters) instead of Crossplane's RBAC manager, and the
 * listeners are on free ports. Nothing can be fetched from a package registry here, so Providers,
 * Functions and Configurations never install (no Composition function ever runs).
 *
 * Crossplane runs under the harness's guard shell (see control_plane.ts), so it stops with the
 * control plane and never outlives the test process.
 */
import { WaitAbort, waitFor } from "./wait.ts";

/** The namespace Crossplane runs in (the chart's default). */
export const CROSSPLANE_NAMESPACE = "crossplane-system";

/** What {@link startCrossplane} started. */
export interface CrossplaneInstance {
  /** `http://127.0.0.1:<port>`: `/metrics` (controller-runtime's, and Crossplane's). */
  readonly metricsURL: string;
  /** `http://127.0.0.1:<port>`: `/readyz`, `/healthz`. */
  readonly healthURL: string;
  /** The `core start` process's log file. */
  readonly log: string;
  /** The `core init` process's log file. */
  readonly initLog: string;
}

/** A process the harness started under its guard (the part {@link startCrossplane} reads). */
export interface GuardedProcess {
  readonly log: string;
  readonly exited?: Deno.CommandStatus;
  readonly status: Promise<Deno.CommandStatus>;
}

/** What {@link startCrossplane} needs from the harness. */
export interface CrossplaneStart {
  /** The crossplane binary. */
  binary: string;
  /** Crossplane's core CRDs, one YAML file each (`core init`'s `CRDS_PATH`). */
  crdsDir: string;
  kubectl: string;
  kubeconfigPath: string;
  /** A directory of this control plane (caches and certificates go below it). */
  dir: string;
  timeoutMs: number;
  /** Starts `argv` under the harness's guard, logging to `<dir>/<label>.log`. */
  spawn(label: string, argv: string[]): GuardedProcess;
  freePort(): number;
  tail(path: string, lines: number): Promise<string>;
}

/**
 * The crossplane binary's CRDs directory: `TEST_ASSET_CROSSPLANE_CRDS`, else `crossplane-crds/`
 * beside the binary, else beside the file a symlinked binary points at (a mixed assets directory
 * of hack/testenv.sh).
 */
export async function crossplaneCRDsDir(binary: string): Promise<string> {
  const isDir = async (p: string) => {
    try {
      return (await Deno.stat(p)).isDirectory;
    } catch {
      return false;
    }
  };
  const env = Deno.env.get("TEST_ASSET_CROSSPLANE_CRDS");
  const dirOf = (p: string) => p.replace(/\/[^/]*$/, "") || "/";
  const candidates = env
    ? [env]
    : [`${dirOf(binary)}/crossplane-crds`, `${dirOf(await Deno.realPath(binary))}/crossplane-crds`];
  for (const c of candidates) if (await isDir(c)) return c;
  throw new Error(
    `Crossplane's CRDs not found (looked in ${candidates.join(", ")}): hack/testenv.sh puts them ` +
      "beside the binary; with TEST_ASSET_CROSSPLANE set, set TEST_ASSET_CROSSPLANE_CRDS too",
  );
}

/** `crossplane core init`, then `crossplane core start`; resolves once `/readyz` answers 200. */
export async function startCrossplane(s: CrossplaneStart): Promise<CrossplaneInstance> {
  const env = [`KUBECONFIG=${s.kubeconfigPath}`];
  const kubectl = async (...args: string[]) => {
    const out = await new Deno.Command(s.kubectl, {
      args: ["--kubeconfig", s.kubeconfigPath, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    if (!out.success) throw new Error(`kubectl ${args.join(" ")}: ${dec.decode(out.stderr)}`);
    return dec.decode(out.stdout);
  };
  await kubectl("create", "namespace", CROSSPLANE_NAMESPACE);
  // The chart's environment variables (the flags' kong names are odd: `--cr-ds-path`).
  const common = [`POD_NAMESPACE=${CROSSPLANE_NAMESPACE}`, "ENABLE_WEBHOOKS=false"];
  const clientSecret = "crossplane-tls-client";

  // Run again on a failure, as the kubelet restarts the chart's init container: right after
  // installing the CRDs its client may not map the new kinds yet ("no matches for kind Lock").
  // Every step is idempotent.
  const deadline = Date.now() + s.timeoutMs;
  let init: GuardedProcess | undefined;
  for (let attempt = 1;; attempt++) {
    init = s.spawn("crossplane-init", [
      ...env,
      ...common,
      `CRDS_PATH=${s.crdsDir}`,
      "TLS_CA_SECRET_NAME=crossplane-root-ca",
      `TLS_CLIENT_SECRET_NAME=${clientSecret}`,
      s.binary,
      "core",
      "init",
    ]);
    const run = init;
    const status = await waitFor("crossplane core init to finish", () => run.exited, {
      timeoutMs: Math.max(1, deadline - Date.now()),
      intervalMs: 200,
    }).catch(() => undefined);
    if (status?.code === 0) break;
    if (status === undefined || attempt >= 5 || Date.now() > deadline) {
      const how = status
        ? `exited with code ${status.code} (attempt ${attempt})`
        : "did not finish";
      throw new Error(`crossplane core init ${how}:\n${await s.tail(run.log, 30)}`);
    }
  }

  // What the chart mounts from the Secret `init` filled: ca.crt, tls.crt, tls.key.
  const certs = `${s.dir}/crossplane/tls-client`;
  await Deno.mkdir(certs, { recursive: true });
  const secret = JSON.parse(
    await kubectl("get", "secret", "-n", CROSSPLANE_NAMESPACE, clientSecret, "-o", "json"),
  );
  for (const key of ["ca.crt", "tls.crt", "tls.key"]) {
    const data = secret.data?.[key];
    if (typeof data !== "string") throw new Error(`Secret ${clientSecret} has no ${key}`);
    await Deno.writeTextFile(`${certs}/${key}`, atob(data), { mode: 0o600 });
  }

  const [metricsPort, healthPort] = [s.freePort(), s.freePort()];
  const start = s.spawn("crossplane", [
    ...env,
    ...common,
    s.binary,
    "--debug",
    "core",
    "start",
    `--tls-client-certs-dir=${certs}`,
    `--metrics-port=${metricsPort}`,
    `--health-probe-port=${healthPort}`,
    `--xpkg-cache-dir=${s.dir}/crossplane/xpkg`,
    `--xfn-cache-dir=${s.dir}/crossplane/xfn`,
  ]);
  const healthURL = `http://127.0.0.1:${healthPort}`;
  await waitFor("crossplane core start /readyz", async () => {
    if (start.exited) {
      throw new WaitAbort(
        `crossplane core start exited with code ${start.exited.code}:\n${await s.tail(
          start.log,
          30,
        )}`,
      );
    }
    try {
      const res = await fetch(`${healthURL}/readyz`);
      await res.body?.cancel();
      return res.ok;
    } catch {
      return false;
    }
  }, { timeoutMs: s.timeoutMs });
  return {
    metricsURL: `http://127.0.0.1:${metricsPort}`,
    healthURL,
    log: start.log,
    initLog: init.log,
  };
}
