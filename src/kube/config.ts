/**
 * Where the apiserver is and who we are to it: {@link loadConfig} finds a {@link ClusterConnection}
 * (server URL, CA and client certificate PEMs, an {@link AuthSource} for the Authorization
 * header, default namespace) from a kubeconfig file or the in-cluster ServiceAccount.
 *
 * The in-cluster path reads only the ServiceAccount directory (so it runs under exactly
 * `--allow-net --allow-env --allow-read=/var/run/secrets/kubernetes.io/serviceaccount`) and never
 * imports `@kubernetes/client-node`: that import costs ~0.6 s and ~80 MB RSS (41 → 120 MB), a
 * large share of a webhook-server replica's memory. A kubeconfig file (development, tests,
 * `--kubeconfig`) loads client-node lazily to parse the file and resolve credentials (token,
 * files, exec/OIDC providers), then hands the PEMs and the Authorization header to the client.
 *
 * Credentials: client certificates (kubeconfig), bearer tokens (kubeconfig, exec plugins), and the
 * in-cluster projected token, which the kubelet rotates: {@link TokenFileAuth} re-reads it at
 * most every 60 s and at once after a 401 (the client retries each request once after a 401).
 * Not supported: `insecure-skip-tls-verify` (Deno's client cannot turn verification off per
 * client; loading such a kubeconfig fails with that reason) and `tls-server-name` (ignored with a
 * warning). `caCerts` are trusted in addition to the system roots.
 */
import { createLogger } from "../obs/log.ts";

const log = createLogger("kube.client");

/** Default in-cluster credentials directory. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Produces the Authorization header value; `refresh` asks to bypass caches (after a 401). */
export interface AuthSource {
  authorization(opts: { refresh: boolean }): Promise<string | undefined>;
}

/** A fixed bearer token. */
export class StaticTokenAuth implements AuthSource {
  constructor(private readonly token: string) {}
  authorization(): Promise<string> {
    return Promise.resolve(`Bearer ${this.token}`);
  }
}

/**
 * A bearer token read from a file that may be rotated (the projected ServiceAccount token):
 * re-read when older than `refreshMs` (default 60 s, as client-go) and on demand after a 401.
 */
export class TokenFileAuth implements AuthSource {
  #token: string | undefined;
  #readAt = 0;
  constructor(readonly path: string, private readonly refreshMs = 60_000) {}

  async authorization({ refresh }: { refresh: boolean }): Promise<string> {
    if (refresh || this.#token === undefined || Date.now() - this.#readAt >= this.refreshMs) {
      const t = (await Deno.readTextFile(this.path)).trim();
      if (!t) throw new Error(`token file ${this.path} is empty`);
      this.#token = t;
      this.#readAt = Date.now();
    }
    return `Bearer ${this.#token}`;
  }
}

/** Everything needed to talk to one apiserver as one identity. */
export interface ClusterConnection {
  /** `https://host:port` (no trailing slash). */
  server: string;
  /** PEM CA certificates trusted for the server, in addition to the system roots. */
  caCerts?: string[];
  /** PEM client certificate and key. */
  clientCert?: { cert: string; key: string };
  auth?: AuthSource;
  /** The identity's default namespace ("default" when unknown). */
  namespace: string;
  /** For logs: where this came from. */
  description: string;
  /** The kubeconfig context used (absent in-cluster): what a person calls this cluster. */
  context?: string;
}

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** `--kubeconfig`; wins over everything else. */
  kubeconfig?: string;
  /** Context to use instead of the file's current-context. */
  context?: string;
  /** In-cluster credentials directory (tests point it elsewhere). */
  serviceAccountDir?: string;
  /** Environment lookup (default `Deno.env.get`). */
  env?: (name: string) => string | undefined;
}

/**
 * Finds the connection the way controller-runtime does: `--kubeconfig` (opts.kubeconfig), then
 * `$KUBECONFIG` (colon-separated files are merged), then in-cluster
 * (`KUBERNETES_SERVICE_HOST`/`_PORT` + the ServiceAccount dir), then `$HOME/.kube/config`.
 */
export async function loadConfig(opts: LoadConfigOptions = {}): Promise<ClusterConnection> {
  const env = opts.env ?? ((n: string) => Deno.env.get(n));
  if (opts.kubeconfig) return await loadKubeconfig([opts.kubeconfig], opts.context);
  const fromEnv = (env("KUBECONFIG") ?? "").split(":").filter((s) => s);
  if (fromEnv.length) return await loadKubeconfig(fromEnv, opts.context);
  const dir = opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  if (env("KUBERNETES_SERVICE_HOST") && env("KUBERNETES_SERVICE_PORT")) {
    return await loadInClusterConfig({ dir, env });
  }
  const home = env("HOME");
  if (home) {
    const path = `${home}/.kube/config`;
    let exists = false;
    try {
      exists = (await Deno.stat(path)).isFile;
    } catch {
      // not readable: fall through to the error below
    }
    if (exists) return await loadKubeconfig([path], opts.context);
  }
  throw new Error(
    "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, or run in a pod " +
      "(KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT and " + `${dir})`,
  );
}

/**
 * In-cluster connection: `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`, CA from
 * `<dir>/ca.crt`, the rotating token `<dir>/token`, namespace from `<dir>/namespace`.
 */
export async function loadInClusterConfig(
  opts: { dir?: string; env?: (name: string) => string | undefined } = {},
): Promise<ClusterConnection> {
  const dir = opts.dir ?? SERVICE_ACCOUNT_DIR;
  const env = opts.env ?? ((n: string) => Deno.env.get(n));
  const host = env("KUBERNETES_SERVICE_HOST");
  const port = env("KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    throw new Error("in-cluster config needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT");
  }
  const ca = await Deno.readTextFile(`${dir}/ca.crt`);
  const auth = new TokenFileAuth(`${dir}/token`);
  await auth.authorization({ refresh: true }); // fail now, not on the first request
  let namespace = "default";
  try {
    namespace = (await Deno.readTextFile(`${dir}/namespace`)).trim() || namespace;
  } catch {
    // optional
  }
  const h = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return {
    server: `https://${h}:${port}`,
    caCerts: [ca],
    auth,
    namespace,
    description: `in-cluster (${dir})`,
  };
}

/** Minimal view of client-node's KubeConfig used here (the module is imported lazily). */
interface KubeConfigLike {
  loadFromFile(file: string): void;
  mergeConfig(config: KubeConfigLike, preserveContext?: boolean): void;
  setCurrentContext(name: string): void;
  getCurrentContext(): string;
  getContextObject(name: string): { namespace?: string } | null;
  getCurrentCluster(): { server: string; skipTLSVerify?: boolean; tlsServerName?: string } | null;
  applyToHTTPSOptions(opts: Record<string, unknown>): Promise<void>;
}

function pems(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.flatMap(pems);
  if (typeof v === "string") return [v];
  if (v instanceof Uint8Array) return [new TextDecoder().decode(v)];
  return [String(v)];
}

/** Kubeconfig credentials through client-node (exec plugins, OIDC, token files, static tokens). */
class KubeConfigAuth implements AuthSource {
  #value: string | undefined;
  #at = -Infinity;
  constructor(private readonly kc: KubeConfigLike, initial: string | undefined) {
    this.#value = initial;
    this.#at = Date.now();
  }
  async authorization({ refresh }: { refresh: boolean }): Promise<string | undefined> {
    if (refresh || Date.now() - this.#at >= 60_000) {
      const o: Record<string, unknown> = {};
      await this.kc.applyToHTTPSOptions(o);
      this.#value = authHeader(o);
      this.#at = Date.now();
    }
    return this.#value;
  }
}

function authHeader(o: Record<string, unknown>): string | undefined {
  const headers = (o.headers ?? {}) as Record<string, unknown>;
  const a = headers.Authorization ?? headers.authorization;
  if (typeof a === "string" && a) return a;
  if (typeof o.auth === "string" && o.auth) return `Basic ${btoa(o.auth)}`;
  return undefined;
}

/** Connection from kubeconfig file(s); several files are merged like `$KUBECONFIG`. */
export async function loadKubeconfig(
  paths: readonly string[],
  context?: string,
): Promise<ClusterConnection> {
  if (!paths.length) throw new Error("loadKubeconfig: no file");
  const k8s = await import("@kubernetes/client-node");
  const load = (p: string): KubeConfigLike => {
    const kc = new k8s.KubeConfig() as unknown as KubeConfigLike;
    try {
      kc.loadFromFile(p);
    } catch (e) {
      throw new Error(`cannot load kubeconfig ${p}: ${(e as Error).message}`, { cause: e });
    }
    return kc;
  };
  const kc = load(paths[0]);
  for (const p of paths.slice(1)) kc.mergeConfig(load(p), true);
  if (context) kc.setCurrentContext(context);
  const ctxName = kc.getCurrentContext();
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new Error(`kubeconfig ${paths.join(":")}: no cluster for context "${ctxName}"`);
  }
  if (cluster.skipTLSVerify) {
    throw new Error(
      `kubeconfig ${paths.join(":")}: insecure-skip-tls-verify is not supported ` +
        "(Deno's HTTP client always verifies); give the cluster's CA instead",
    );
  }
  if (cluster.tlsServerName) {
    log.warn("kubeconfig tls-server-name is not supported; verifying the server URL's host", {
      tlsServerName: cluster.tlsServerName,
    });
  }
  const o: Record<string, unknown> = {};
  await kc.applyToHTTPSOptions(o);
  const cert = pems(o.cert)[0];
  const key = pems(o.key)[0];
  const initial = authHeader(o);
  return {
    server: cluster.server.replace(/\/+$/, ""),
    caCerts: pems(o.ca),
    clientCert: cert && key ? { cert, key } : undefined,
    auth: new KubeConfigAuth(kc, initial),
    namespace: kc.getContextObject(ctxName)?.namespace || "default",
    description: `kubeconfig ${paths.join(":")} context ${ctxName}`,
    context: ctxName,
  };
}
