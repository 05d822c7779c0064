/**
 * The cert-manager Certificate of a server in `CertManager` mode, and the DNS names its serving
 * certificate covers in every mode (see
 * docs/design/server-children.md#service-certificate-hpa-and-pdb).
 */
import type { ConversionWebhookServer } from "../../api/mod.ts";
import { certificateName, defaultDnsNames, tlsSecretName } from "./names.ts";
import { childNamespace, childObject, identityOf, type ServerChildSettings } from "./settings.ts";
import type { Certificate } from "./types.ts";

/** `certificate.dnsNames`, else (absent or empty) {@link defaultDnsNames}. */
export function servingDnsNames(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): string[] {
  const { name } = identityOf(cws);
  const names = cws.spec.certificate?.dnsNames;
  // An empty list would make an invalid certificate: treated like an absent one.
  return names && names.length > 0
    ? [...names]
    : defaultDnsNames(name, childNamespace(cws, settings));
}

/** The message of CertificateReady=False for a cert-manager-mode server without an issuer. */
export const MISSING_ISSUER_MESSAGE =
  "the manager runs in cert-manager certificate mode but spec.certificate.issuerRef is not set; " +
  "set spec.certificate.issuerRef.name (and kind) or run the manager with " +
  "--certificate-mode=builtin";

/**
 * The cert-manager Certificate; undefined outside `CertManager` mode, and undefined when the
 * spec has no `certificate.issuerRef` (the reconciler reports {@link MISSING_ISSUER_MESSAGE}).
 */
export function buildCertificate(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): Certificate | undefined {
  if ((settings.certMode ?? "CertManager") !== "CertManager") return undefined;
  const { name } = identityOf(cws);
  const c = cws.spec.certificate;
  if (c?.issuerRef === undefined) return undefined;
  const spec: Certificate["spec"] = {
    secretName: tlsSecretName(name),
    dnsNames: servingDnsNames(cws, settings),
    issuerRef: { name: c.issuerRef.name, kind: c.issuerRef.kind },
  };
  if (c.duration) spec.duration = c.duration;
  if (c.renewBefore) spec.renewBefore = c.renewBefore;
  return childObject(
    { apiVersion: "cert-manager.io/v1", kind: "Certificate" },
    cws,
    settings,
    certificateName(name),
    spec,
  );
}
