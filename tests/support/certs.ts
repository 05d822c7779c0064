/**
 * Throwaway X.509 material for tests: a CA and leaf certificates signed by it, made with the
 * openssl CLI (WebCrypto cannot build certificates). EC P-256 keys: fast to generate and accepted
 * by kube-apiserver, etcd, Deno.serve and @kubernetes/client-node alike.
 */
import { textToBase64 } from "../../src/lib/base64.ts";

/** PEM-encoded certificate and its PKCS#8 private key. */
export interface KeyPair {
  cert: string;
  key: string;
}

/** A certificate authority that can issue leaf certificates. */
export interface CertificateAuthority extends KeyPair {
  /** Issues a leaf certificate signed by this CA. */
  issue(opts: IssueOptions): Promise<KeyPair>;
}

export interface IssueOptions {
  /** Subject common name (the user name for a client certificate). */
  commonName: string;
  /** Subject organizations (the groups for a client certificate). */
  organizations?: string[];
  /** Subject alternative names: IP addresses and DNS names, e.g. ["127.0.0.1", "localhost"]. */
  hosts?: string[];
  /** "server" (serverAuth), "client" (clientAuth) or both; default "server". */
  usage?: "server" | "client" | "both";
  /** Validity in days; default 2. */
  days?: number;
}

async function openssl(cwd: string, args: string[]): Promise<void> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("openssl", { args, cwd, stdout: "piped", stderr: "piped" })
      .output();
  } catch (e) {
    throw new Error(`openssl is required to make test certificates: ${(e as Error).message}`);
  }
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr);
    throw new Error(`openssl ${args[0]} failed (exit ${out.code}): ${err}`);
  }
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Generates a P-256 private key in PKCS#8 PEM. */
export async function generateKey(dir: string, name: string): Promise<string> {
  await openssl(dir, [
    "genpkey",
    "-algorithm",
    "EC",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-out",
    `${name}.key`,
  ]);
  return await Deno.readTextFile(`${dir}/${name}.key`);
}

/** Writes `<name>.pub` (SPKI PEM) for the key `<name>.key` in `dir`. */
export async function writePublicKey(dir: string, name: string): Promise<string> {
  await openssl(dir, ["pkey", "-in", `${name}.key`, "-pubout", "-out", `${name}.pub`]);
  return await Deno.readTextFile(`${dir}/${name}.pub`);
}

/**
 * Creates a CA in `dir` (which must exist; files are written there). Every issued certificate is
 * also left in `dir` as `<commonName>.crt/.key`.
 */
export async function createCA(
  dir: string,
  commonName = "dco-test-ca",
): Promise<CertificateAuthority> {
  const slug = safeName(commonName);
  await generateKey(dir, slug);
  await openssl(dir, [
    "req",
    "-x509",
    "-new",
    "-key",
    `${slug}.key`,
    "-subj",
    `/CN=${commonName}`,
    "-days",
    "2",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
    "-out",
    `${slug}.crt`,
  ]);
  const ca: KeyPair = {
    cert: await Deno.readTextFile(`${dir}/${slug}.crt`),
    key: await Deno.readTextFile(`${dir}/${slug}.key`),
  };
  let serial = 1;
  return {
    ...ca,
    async issue(opts: IssueOptions): Promise<KeyPair> {
      const name = safeName(opts.commonName);
      await generateKey(dir, name);
      const subject = `/CN=${opts.commonName}` +
        (opts.organizations ?? []).map((o) => `/O=${o}`).join("");
      await openssl(dir, [
        "req",
        "-new",
        "-key",
        `${name}.key`,
        "-subj",
        subject,
        "-out",
        `${name}.csr`,
      ]);
      const usage = opts.usage ?? "server";
      const eku = usage === "both" ? "serverAuth,clientAuth" : `${usage}Auth`;
      const ext = [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment",
        `extendedKeyUsage=${eku}`,
      ];
      const hosts = opts.hosts ?? [];
      if (hosts.length > 0) {
        ext.push(
          "subjectAltName=" +
            hosts.map((h) => (IPV4.test(h) || h.includes(":") ? `IP:${h}` : `DNS:${h}`))
              .join(","),
        );
      }
      await Deno.writeTextFile(`${dir}/${name}.ext`, ext.join("\n") + "\n");
      await openssl(dir, [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        `${slug}.crt`,
        "-CAkey",
        `${slug}.key`,
        "-set_serial",
        String(++serial),
        "-days",
        String(opts.days ?? 2),
        "-extfile",
        `${name}.ext`,
        "-out",
        `${name}.crt`,
      ]);
      return {
        cert: await Deno.readTextFile(`${dir}/${name}.crt`),
        key: await Deno.readTextFile(`${dir}/${name}.key`),
      };
    },
  };
}

function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, "_");
}

/** Base64 of a UTF-8 string (kubeconfig `*-data` fields, CRD `caBundle`). */
export const b64: (s: string) => string = textToBase64;

/** What {@link writeServingPair} wrote. */
export interface ServingPair {
  ca: CertificateAuthority;
  pair: KeyPair;
}

/**
 * A throwaway CA in `dir` and a leaf from it for `hosts`, written as `tls.crt`/`tls.key` (and the
 * CA as `ca.crt`): the serving-certificate directory a listener under test reads.
 */
export async function writeServingPair(
  dir: string,
  opts: { caName: string; commonName: string; hosts: string[] },
): Promise<ServingPair> {
  const ca = await createCA(dir, opts.caName);
  const pair = await ca.issue({ commonName: opts.commonName, hosts: opts.hosts });
  await Deno.writeTextFile(`${dir}/tls.crt`, pair.cert);
  await Deno.writeTextFile(`${dir}/tls.key`, pair.key);
  await Deno.writeTextFile(`${dir}/ca.crt`, ca.cert);
  return { ca, pair };
}
