/**
 * CA trust bundles: the PEM text a `caBundle` (and a Secret's `ca.crt`) holds — one or more
 * certificates, concatenated. During a CA rotation a bundle carries the old and the new CA; these
 * helpers parse one, compare certificates by their DER bytes and write a bundle back in one
 * canonical form (each block newline-terminated), so equal bundles are equal text.
 */
import { x509 } from "./x509.ts";

/** The certificates of a PEM bundle, in order; throws when it holds none or one does not parse. */
export function parseBundle(pem: string): x509.X509Certificate[] {
  const blocks = x509.PemConverter.decodeWithHeaders(pem).filter((b) => b.type === "CERTIFICATE");
  if (blocks.length === 0) throw new Error("no CERTIFICATE block");
  return blocks.map((b) => new x509.X509Certificate(b.rawData));
}

/** The certificates of a PEM bundle, or [] when it is empty or does not parse. */
export function tryParseBundle(pem: string | undefined): x509.X509Certificate[] {
  if (pem === undefined || pem.trim() === "") return [];
  try {
    return parseBundle(pem);
  } catch {
    return [];
  }
}

function sameBytes(a: ArrayBuffer, b: ArrayBuffer): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  return x.every((v, i) => v === y[i]);
}

/** Whether `bundle` holds `cert` (the same DER bytes). */
export function bundleHas(bundle: readonly x509.X509Certificate[], cert: x509.X509Certificate) {
  return bundle.some((c) => sameBytes(c.rawData, cert.rawData));
}

/** The canonical PEM text of `certs` (each block newline-terminated, in order, no duplicates). */
export function bundlePem(certs: readonly x509.X509Certificate[]): string {
  const out: x509.X509Certificate[] = [];
  for (const c of certs) if (!bundleHas(out, c)) out.push(c);
  return out.map((c) => {
    const pem = c.toString("pem");
    return pem.endsWith("\n") ? pem : `${pem}\n`;
  }).join("");
}
