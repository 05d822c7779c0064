/**
 * The metrics listener of both roles, plain or — with `--metrics-secure` — the way
 * controller-runtime serves secure metrics: TLS, and `/metrics` (and `/debug/registry`) only for a
 * bearer token the apiserver authenticates (TokenReview) whose user may `get` that path as a
 * nonResourceURL (SubjectAccessReview); src/kube/delegated_auth.ts decides and caches. `/healthz`
 * and `/readyz` stay open on the same port so kubelet probes keep working.
 *
 * The serving certificate: the role's own serving pair when its directory holds one (reloaded like
 * the role's other TLS listener), else a self-signed pair made at start and kept in memory
 * (controller-runtime does the same when it has no cert dir). Scrapers then skip verification or
 * trust the role's serving CA. docs/security.md#metrics.
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type AccessDecision, DelegatedAuth, type ReviewClient } from "../kube/delegated_auth.ts";
import {
  createPlainListener,
  type KeyPairPem,
  type NodeListener,
  type PlainListenerOptions,
  readKeyPair,
  type ServerHandle,
  startPlainServer,
  TlsServer,
} from "../net/mod.ts";
import type { Logger } from "../obs/log.ts";

x509.cryptoProvider.set(globalThis.crypto);

/** Paths that need authorisation on a secure listener (everything else is a probe). */
const PROTECTED_PATHS: ReadonlySet<string> = new Set(["/metrics", "/debug/registry"]);

/** How often a secure listener re-reads a serving pair from its directory. */
const CERT_RELOAD_INTERVAL_MS = 30_000;

/** The authoriser a secure listener asks (src/kube/delegated_auth.ts `DelegatedAuth`). */
export interface RequestAuthorizer {
  check(authorization: string | undefined, method: string, path: string): Promise<AccessDecision>;
}

/** Wraps `inner` so the protected paths answer 401/403/500 unless `auth` lets them through. */
export function authorizingListener(
  inner: NodeListener,
  auth: RequestAuthorizer,
  log: Pick<Logger, "info" | "error">,
): NodeListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    if (!PROTECTED_PATHS.has(path)) return inner(req, res);
    auth.check(req.headers.authorization, req.method ?? "GET", path).then((d) => {
      if (d.status === 200) return inner(req, res);
      if (d.status === 500) log.error(d.message, { path, error: d.detail });
      else if (d.status === 403) log.info(d.message, { path });
      const body = new TextEncoder().encode(d.message + "\n");
      res.writeHead(d.status, {
        "content-type": "text/plain; charset=utf-8",
        "x-content-type-options": "nosniff",
        "content-length": String(body.byteLength),
      });
      res.end(req.method === "HEAD" ? undefined : body);
    }, () => res.destroy());
  };
}

/** A self-signed ECDSA P-256 serving pair for `localhost`, valid for one year from now. */
export async function selfSignedPair(now = Date.now()): Promise<KeyPairPem> {
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
  const keys = await crypto.subtle.generateKey(alg, true, ["sign", "verify"]);
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = (serial[0] & 0x7f) | 0x01; // positive, no leading zero byte
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Array.from(serial, (b) => b.toString(16).padStart(2, "0")).join(""),
    name: [{ CN: ["localhost"] }],
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * 24 * 3_600_000),
    signingAlgorithm: alg,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: "dns", value: "localhost" },
        { type: "ip", value: "127.0.0.1" },
      ]),
    ],
  });
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return {
    cert: cert.toString("pem") + "\n",
    key: x509.PemConverter.encode(pkcs8, "PRIVATE KEY") + "\n",
  };
}

export interface MetricsListenerOptions {
  address: string;
  /** `--metrics-secure`. */
  secure: boolean;
  /** The role's serving pair's directory; used when it holds `tls.crt`/`tls.key`. */
  certDir?: string;
  /** Who reviews tokens and access (secure only). */
  client: ReviewClient;
  routes: PlainListenerOptions;
  log: Logger;
}

/** Starts the metrics/health listener; throws on a bind error. */
export async function startMetricsListener(opts: MetricsListenerOptions): Promise<ServerHandle> {
  const plain = createPlainListener(opts.routes);
  if (!opts.secure) return await startPlainServer({ address: opts.address, listener: plain });
  const listener = authorizingListener(plain, new DelegatedAuth(opts.client), opts.log);
  const hasPair = opts.certDir !== undefined &&
    await readKeyPair(opts.certDir).then(() => true, () => false);
  if (hasPair) {
    opts.log.info("serving metrics over TLS with authentication and authorization", {
      address: opts.address,
      certDir: opts.certDir,
    });
    return await TlsServer.start({
      address: opts.address,
      certDir: opts.certDir,
      reloadIntervalMs: CERT_RELOAD_INTERVAL_MS,
      listener,
      logger: opts.log,
    });
  }
  const pair = await selfSignedPair();
  opts.log.info("serving metrics over TLS with authentication and authorization", {
    address: opts.address,
    certificate: "self-signed, generated at start",
  });
  return await TlsServer.start({
    address: opts.address,
    loadPair: () => Promise.resolve(pair),
    source: "self-signed (in memory)",
    reloadIntervalMs: 0,
    listener,
    logger: opts.log,
  });
}
