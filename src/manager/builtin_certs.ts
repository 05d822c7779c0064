/**
 * The built-in certificate mode (docs/manager.md "Serving certificates"): the manager keeps its
 * own CA in the Secret {@link CA_SECRET_NAME} of the operator namespace and issues each
 * ConversionWebhookServer's serving certificate into `<cws>-webhook-server-tls` itself, so
 * clusters without cert-manager work too.
 *
 * - CA: ECDSA P-256, valid `--ca-validity` ({@link DEFAULT_CA_VALIDITY_MS}, one year, by
 *   default), created on first need; keys `tls.crt`/`tls.key` (the signing CA) and `ca.crt` (the
 *   trust bundle: the signing CA plus, during a rotation, the other one). During a rotation the
 *   incoming CA waits in `next.crt`/`next.key` until every trust store carries it; the rotation
 *   itself (when, and the order of its steps) is src/manager/ca_rotation.ts. An old Secret without
 *   `ca.crt` trusts its `tls.crt` alone.
 * - Leaf: ECDSA P-256, valid {@link LEAF_VALIDITY_MS} (90 days), SANs = the given DNS names (an IP
 *   literal becomes an IP SAN), extended key usage serverAuth; Secret type `kubernetes.io/tls`
 *   with `tls.crt`, `tls.key` and `ca.crt`, owned by the CWS (garbage-collected with it).
 *   `ca.crt` is the CA Secret's trust bundle. Re-issued when the Secret or a key is missing or
 *   does not parse, the key does not match the certificate, the SANs differ, it was not signed by
 *   the current signing CA, or less than a third of its lifetime remains ({@link renewalTime}).
 *   A `ca.crt` that differs from the bundle (a rotation began or ended) is rewritten alone: the
 *   pair is kept.
 *
 * X.509 is built with `@peculiar/x509` on WebCrypto (./x509.ts): no shell-outs (the image is distroless).
 * Cluster access goes through {@link SecretStore}, so the logic is unit-tested with fakes and a
 * fixed clock.
 */
import type { KubeObject } from "../kube/mod.ts";
import { base64ToText, textToBase64 } from "../lib/base64.ts";
import { LABEL_MANAGED_BY, MANAGED_BY } from "./server/names.ts";
import type { OwnerReference } from "./server/types.ts";

import { bundleHas, bundlePem, parseBundle } from "./ca_bundle.ts";
import { x509 } from "./x509.ts";

/** `@peculiar/x509`, loaded after its `reflect-metadata` polyfill. */
export { x509 };

/** The CA Secret in the operator namespace. */
export const CA_SECRET_NAME = "dco-webhook-ca";
export const CA_COMMON_NAME = "dco-webhook-ca";
const DAY_MS = 86_400_000;
/** `--ca-validity` by default: one year (rotated when two thirds have passed). */
export const DEFAULT_CA_VALIDITY_MS = 365 * DAY_MS;
export const LEAF_VALIDITY_MS = 90 * DAY_MS;
/** The CA Secret's keys: the trust bundle and the incoming CA of a rotation. */
export const CA_BUNDLE_KEY = "ca.crt";
export const NEXT_CERT_KEY = "next.crt";
export const NEXT_KEY_KEY = "next.key";
/** notBefore is set this far in the past, for clocks that lag the manager's. */
export const BACKDATE_MS = 5 * 60_000;
export const TLS_SECRET_TYPE = "kubernetes.io/tls";

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const IMPORT_ALG = { name: "ECDSA", namedCurve: "P-256" } as const;

/** The Secret operations the issuer needs (namespaced; read through, never cached). */
export interface SecretStore {
  /** The Secret, or undefined when not found. */
  get(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Create; an AlreadyExists error must be recognisable by `isAlreadyExists`. */
  create(namespace: string, secret: KubeObject): Promise<KubeObject>;
  /** Full update with `metadata.resourceVersion` (optimistic concurrency). */
  update(namespace: string, secret: KubeObject): Promise<KubeObject>;
}

export interface BuiltinIssuerOptions {
  store: SecretStore;
  /** The operator namespace, home of the CA Secret. */
  namespace: string;
  now?: () => number;
  /** `--ca-validity` of a CA created here; default {@link DEFAULT_CA_VALIDITY_MS}. */
  caValidityMs?: number;
  /** Tells a create that lost a race (HTTP 409 AlreadyExists). */
  isAlreadyExists?: (e: unknown) => boolean;
}

export interface ServingCertRequest {
  /** The Secret (`<cws>-webhook-server-tls`) and its namespace. */
  namespace: string;
  secretName: string;
  /** SANs; never empty. */
  dnsNames: readonly string[];
  /** Subject common name (cut to 64 characters). */
  commonName: string;
  /**
   * The CWS owner reference (the controller owner; other owners are kept). Absent for a Secret
   * nothing owns (the manager's own admission certificate): the stored owners are kept as is.
   */
  owner?: OwnerReference;
  labels?: Record<string, string>;
  /**
   * Take over an existing `Opaque` Secret in place (its type is immutable) instead of failing:
   * for the admission Secret, which older installs created by hand with `kubectl create secret
   * generic`.
   */
  acceptOpaque?: boolean;
}

/** Whether `secret` may hold the pair: type `kubernetes.io/tls`, or Opaque when accepted. */
function usableType(secret: KubeObject, req: ServingCertRequest): boolean {
  const type = (secret as { type?: string }).type ?? "Opaque";
  return type === TLS_SECRET_TYPE || (req.acceptOpaque === true && type === "Opaque");
}

export interface ServingCertResult {
  /** The Secret as stored after this call. */
  secret: KubeObject;
  /** Why it was (re-)issued; undefined when the stored one was kept. */
  issued?: string;
  /** Only `ca.crt` was rewritten (the trust bundle changed); the pair was kept. */
  bundleUpdated?: boolean;
  notAfter: number;
  /** When it is due for renewal: notAfter − lifetime/3. */
  renewAt: number;
}

/** The moment a certificate valid from `notBefore` to `notAfter` is due for renewal. */
export function renewalTime(notBefore: number, notAfter: number): number {
  return notAfter - Math.floor((notAfter - notBefore) / 3);
}

// ---------------------------------------------------------------------------------------------
// Encoding helpers

/** PEM text of a Secret value; undefined when absent, empty or not base64 text. */
function b64decode(value: unknown): string | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  try {
    return base64ToText(value);
  } catch {
    return undefined;
  }
}

function dataOf(secret: KubeObject | undefined): Record<string, unknown> {
  const data = (secret as { data?: unknown } | undefined)?.data;
  return typeof data === "object" && data !== null ? data as Record<string, unknown> : {};
}

/** PEM text ends with a newline (so bundles concatenate cleanly). */
function withNewline(pem: string): string {
  return pem.endsWith("\n") ? pem : `${pem}\n`;
}

function keyToPem(pkcs8: ArrayBuffer): string {
  return withNewline(x509.PemConverter.encode(pkcs8, "PRIVATE KEY"));
}

async function importPrivateKey(pem: string): Promise<CryptoKey> {
  const der = x509.PemConverter.decodeFirst(pem);
  return await crypto.subtle.importKey("pkcs8", der, IMPORT_ALG, true, ["sign"]);
}

/** Whether `key` (extractable) is the private half of `cert`'s public key. */
async function keyMatches(key: CryptoKey, cert: x509.X509Certificate): Promise<boolean> {
  const priv = await crypto.subtle.exportKey("jwk", key);
  const pub = await crypto.subtle.exportKey(
    "jwk",
    await crypto.subtle.importKey("spki", cert.publicKey.rawData, IMPORT_ALG, true, ["verify"]),
  );
  return priv.x === pub.x && priv.y === pub.y;
}

function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] &= 0x7f; // positive
  bytes[0] |= 0x01; // no leading zero byte
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const IPV4 = /^(?:\d{1,3}\.){3}\d{1,3}$/;

function isIP(name: string): boolean {
  return IPV4.test(name) || name.includes(":");
}

function cn(value: string): x509.JsonName {
  return [{ CN: [value.slice(0, 64)] }];
}

/** The SANs of a certificate as comparable strings (DNS names and IP literals), sorted. */
export function sansOf(cert: x509.X509Certificate): string[] {
  const ext = cert.getExtension(x509.SubjectAlternativeNameExtension);
  if (!ext) return [];
  return ext.names.items
    .filter((n) => n.type === "dns" || n.type === "ip")
    .map((n) => n.value.toLowerCase())
    .sort();
}

function normalizedNames(names: readonly string[]): string[] {
  return [...new Set(names.map((n) => n.toLowerCase()))].sort();
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

// ---------------------------------------------------------------------------------------------
// The CA

/** A CA certificate with its private key. */
export interface CAPair {
  cert: x509.X509Certificate;
  /** PEM, newline-terminated. */
  certPem: string;
  key: CryptoKey;
  /** PKCS#8 PEM of the key (to move it between Secret keys). */
  keyPem: string;
}

/** The CA Secret, parsed. */
export interface LoadedCA extends CAPair {
  resourceVersion: string;
  /** The Secret as read (to update it with its resourceVersion). */
  secret: KubeObject;
  /** The trust bundle (`ca.crt`, else `tls.crt`): PEM blocks, newline-terminated, joined. */
  bundlePem: string;
  /** The certificates of the bundle, in order. */
  bundle: x509.X509Certificate[];
  /** The incoming CA of a rotation (`next.crt`/`next.key`), trusted but not yet signing. */
  next?: CAPair;
}

/** A CA Secret that exists but cannot be used; deleting it makes a new CA. */
export class BuiltinCAError extends Error {
  override name = "BuiltinCAError";
}

/** A CA pair from two Secret values (`<prefix>.crt`, `<prefix>.key`); throws BuiltinCAError. */
async function parsePair(
  where: string,
  crtValue: unknown,
  keyValue: unknown,
  prefix: "tls" | "next",
): Promise<CAPair> {
  const certPem = b64decode(crtValue);
  const keyPem = b64decode(keyValue);
  if (certPem === undefined || keyPem === undefined) {
    throw new BuiltinCAError(
      `${where} lacks ${prefix}.crt or ${prefix}.key; delete it to have a new CA generated`,
    );
  }
  let cert: x509.X509Certificate;
  let key: CryptoKey;
  try {
    cert = new x509.X509Certificate(certPem);
    key = await importPrivateKey(keyPem);
  } catch (e) {
    throw new BuiltinCAError(
      `${where} does not hold an ECDSA P-256 CA pair in ${prefix}.crt/${prefix}.key (${
        (e as Error).message
      }); delete it to have a new CA generated`,
      { cause: e },
    );
  }
  if (!(await keyMatches(key, cert))) {
    throw new BuiltinCAError(`${where}: ${prefix}.key does not match ${prefix}.crt`);
  }
  return { cert, certPem: withNewline(cert.toString("pem")), key, keyPem: withNewline(keyPem) };
}

/** Generates a self-signed CA (ECDSA P-256) valid from `now − backdate` for `validityMs`. */
export async function generateCA(
  now: number,
  validityMs: number = DEFAULT_CA_VALIDITY_MS,
): Promise<{ certPem: string; keyPem: string }> {
  const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: cn(CA_COMMON_NAME),
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + validityMs),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign |
          x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const keyPem = keyToPem(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return { certPem: withNewline(cert.toString("pem")), keyPem };
}

/** Issues a serving certificate for `dnsNames` signed by the CA. */
export async function issueLeaf(
  ca: { cert: x509.X509Certificate; key: CryptoKey },
  req: { dnsNames: readonly string[]; commonName: string },
  now: number,
): Promise<{ certPem: string; keyPem: string }> {
  const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
  const notAfter = Math.min(now + LEAF_VALIDITY_MS, ca.cert.notAfter.getTime());
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: cn(req.commonName),
    issuer: ca.cert.subjectName,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(notAfter),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: ca.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        req.dnsNames.map((n): x509.JsonGeneralName => ({ type: isIP(n) ? "ip" : "dns", value: n })),
      ),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const keyPem = keyToPem(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return { certPem: withNewline(cert.toString("pem")), keyPem };
}

// ---------------------------------------------------------------------------------------------
// The issuer

/** The built-in issuer: the CA Secret and the per-server serving Secrets. */
export class BuiltinIssuer {
  readonly #store: SecretStore;
  readonly #namespace: string;
  readonly #now: () => number;
  readonly #isAlreadyExists: (e: unknown) => boolean;
  readonly #caValidityMs: number;
  #ca: LoadedCA | undefined;

  constructor(opts: BuiltinIssuerOptions) {
    this.#store = opts.store;
    this.#namespace = opts.namespace;
    this.#now = opts.now ?? Date.now;
    this.#isAlreadyExists = opts.isAlreadyExists ?? (() => false);
    this.#caValidityMs = opts.caValidityMs ?? DEFAULT_CA_VALIDITY_MS;
  }

  /** The operator namespace (home of the CA Secret). */
  get namespace(): string {
    return this.#namespace;
  }

  /** The CA: read from its Secret (parsed once per resourceVersion), created when missing. */
  async ca(): Promise<LoadedCA> {
    let secret = await this.#store.get(this.#namespace, CA_SECRET_NAME);
    if (secret === undefined) {
      const { certPem, keyPem } = await generateCA(this.#now(), this.#caValidityMs);
      const fresh: KubeObject = {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: CA_SECRET_NAME,
          namespace: this.#namespace,
          labels: { [LABEL_MANAGED_BY]: MANAGED_BY },
        },
        type: TLS_SECRET_TYPE,
        data: {
          "tls.crt": textToBase64(certPem),
          "tls.key": textToBase64(keyPem),
          [CA_BUNDLE_KEY]: textToBase64(certPem),
        },
      } as KubeObject;
      try {
        secret = await this.#store.create(this.#namespace, fresh);
      } catch (e) {
        if (!this.#isAlreadyExists(e)) throw e;
        secret = await this.#store.get(this.#namespace, CA_SECRET_NAME); // lost a race: reuse
        if (secret === undefined) throw e;
      }
    }
    return await this.parseCA(secret);
  }

  /** Parses a CA Secret (cached per resourceVersion); a Secret that cannot be used throws. */
  async parseCA(secret: KubeObject): Promise<LoadedCA> {
    const rv = secret.metadata?.resourceVersion ?? "";
    if (this.#ca !== undefined && rv !== "" && this.#ca.resourceVersion === rv) return this.#ca;
    const where = `Secret ${this.#namespace}/${CA_SECRET_NAME}`;
    const data = dataOf(secret);
    const current = await parsePair(where, data["tls.crt"], data["tls.key"], "tls");
    if (current.cert.notAfter.getTime() <= this.#now()) {
      throw new BuiltinCAError(
        `${where}: the CA expired at ${current.cert.notAfter.toISOString()}; delete it to have a new CA generated`,
      );
    }
    const hasNext = data[NEXT_CERT_KEY] !== undefined || data[NEXT_KEY_KEY] !== undefined;
    const next = hasNext
      ? await parsePair(where, data[NEXT_CERT_KEY], data[NEXT_KEY_KEY], "next")
      : undefined;
    const bundleText = b64decode(data[CA_BUNDLE_KEY]);
    let bundle: x509.X509Certificate[];
    try {
      bundle = bundleText === undefined ? [current.cert] : parseBundle(bundleText);
    } catch (e) {
      throw new BuiltinCAError(
        `${where}: ${CA_BUNDLE_KEY} is not a PEM certificate bundle (${(e as Error).message})`,
        { cause: e },
      );
    }
    for (const [what, c] of [["tls.crt", current], [NEXT_CERT_KEY, next]] as const) {
      if (c !== undefined && !bundleHas(bundle, c.cert)) {
        throw new BuiltinCAError(
          `${where}: ${CA_BUNDLE_KEY} does not contain the CA in ${what}; leaves it signs would not be trusted`,
        );
      }
    }
    this.#ca = {
      ...current,
      resourceVersion: rv,
      secret,
      bundle,
      bundlePem: bundlePem(bundle),
      ...(next === undefined ? {} : { next }),
    };
    return this.#ca;
  }

  /** Why the stored serving Secret must be (re-)issued, or undefined to keep it. */
  async #reissueReason(
    secret: KubeObject | undefined,
    req: ServingCertRequest,
    ca: LoadedCA,
  ): Promise<
    { reason?: string; bundleStale?: boolean; notBefore?: number; notAfter?: number }
  > {
    if (secret === undefined) return { reason: "the Secret does not exist" };
    if (!usableType(secret, req)) {
      return { reason: `the Secret is not of type ${TLS_SECRET_TYPE}` };
    }
    const data = dataOf(secret);
    const certPem = b64decode(data["tls.crt"]);
    const keyPem = b64decode(data["tls.key"]);
    if (certPem === undefined || keyPem === undefined) {
      return { reason: "tls.crt or tls.key is missing" };
    }
    let cert: x509.X509Certificate;
    try {
      cert = new x509.X509Certificate(certPem);
      if (!(await keyMatches(await importPrivateKey(keyPem), cert))) {
        return { reason: "tls.key does not match tls.crt" };
      }
    } catch {
      return { reason: "tls.crt or tls.key does not parse" };
    }
    if (!sameList(sansOf(cert), normalizedNames(req.dnsNames))) {
      return { reason: "the DNS names changed" };
    }
    let signed = false;
    try {
      signed = await cert.verify({ publicKey: ca.cert.publicKey, signatureOnly: true });
    } catch {
      signed = false;
    }
    if (!signed) return { reason: "it was signed by a different CA" };
    const notBefore = cert.notBefore.getTime();
    const notAfter = cert.notAfter.getTime();
    if (this.#now() >= renewalTime(notBefore, notAfter)) {
      return { reason: "less than a third of its lifetime remains" };
    }
    const bundleStale = b64decode(data[CA_BUNDLE_KEY])?.trim() !== ca.bundlePem.trim();
    return { notBefore, notAfter, bundleStale };
  }

  /** Ensures `req.secretName` holds a current serving certificate from the CA. */
  async ensureServingCertificate(req: ServingCertRequest): Promise<ServingCertResult> {
    if (req.dnsNames.length === 0) throw new Error("a serving certificate needs DNS names");
    const ca = await this.ca();
    const existing = await this.#store.get(req.namespace, req.secretName);
    const check = await this.#reissueReason(existing, req, ca);
    if (check.reason === undefined) {
      const renewAt = renewalTime(check.notBefore!, check.notAfter!);
      if (!check.bundleStale) return { secret: existing!, notAfter: check.notAfter!, renewAt };
      // The trust bundle changed (a rotation step): rewrite ca.crt, keep the pair.
      const data = { ...dataOf(existing), [CA_BUNDLE_KEY]: textToBase64(ca.bundlePem) };
      const secret = await this.#store.update(req.namespace, { ...existing!, data } as KubeObject);
      return { secret, notAfter: check.notAfter!, renewAt, bundleUpdated: true };
    }
    const now = this.#now();
    const { certPem, keyPem } = await issueLeaf(ca, req, now);
    const leaf = new x509.X509Certificate(certPem);
    const data = {
      "tls.crt": textToBase64(certPem),
      "tls.key": textToBase64(keyPem),
      [CA_BUNDLE_KEY]: textToBase64(ca.bundlePem),
    };
    const owner = req.owner;
    const storedOwners = existing?.metadata?.ownerReferences ?? [];
    const ownerReferences = owner === undefined
      ? storedOwners
      : [owner, ...storedOwners.filter((r) => r.uid !== owner.uid && r.controller !== true)];
    const metadata = {
      ...(existing?.metadata ?? {}),
      name: req.secretName,
      namespace: req.namespace,
      labels: { ...(existing?.metadata?.labels ?? {}), ...(req.labels ?? {}) },
      ...(ownerReferences.length > 0 ? { ownerReferences } : {}),
    };
    let stored: KubeObject;
    if (existing === undefined || !usableType(existing, req)) {
      if (existing !== undefined) {
        // The type of a Secret is immutable: this one cannot be converted in place.
        throw new Error(
          `Secret ${req.namespace}/${req.secretName} exists with type ${
            JSON.stringify((existing as { type?: string }).type ?? "Opaque")
          }, not ${TLS_SECRET_TYPE}; delete it so the manager can issue the serving certificate`,
        );
      }
      const { resourceVersion: _rv, ...fresh } = metadata as Record<string, unknown>;
      stored = await this.#store.create(req.namespace, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: fresh,
        type: TLS_SECRET_TYPE,
        data,
      } as KubeObject);
    } else {
      stored = await this.#store.update(req.namespace, {
        ...existing,
        metadata,
        type: (existing as { type?: string }).type ?? "Opaque",
        data,
      } as KubeObject);
    }
    const notBefore = leaf.notBefore.getTime();
    const notAfter = leaf.notAfter.getTime();
    return {
      secret: stored,
      issued: check.reason,
      notAfter,
      renewAt: renewalTime(notBefore, notAfter),
    };
  }
}
