/** Every child of a server, built together in apply order. */
import type { ConversionWebhookServer } from "../../api/mod.ts";
import { webhookServerPolicyViolations } from "../admission/server_policy.ts";
import { buildCertificate } from "./certificate.ts";
import { buildDeployment } from "./deployment.ts";
import { buildHPA } from "./hpa.ts";
import { buildPDB } from "./pdb.ts";
import { buildService } from "./service.ts";
import { childNamespace, type ServerChildSettings, ServerSpecError } from "./settings.ts";
import type { ServerChildren } from "./types.ts";

/**
 * All children of `cws`; throws `ServerSpecError` for an unrenderable spec or one the server
 * policy forbids (checked here too, so a server admission never saw is not deployed either).
 */
export function serverChildren(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): ServerChildren {
  const violations = webhookServerPolicyViolations(
    cws.spec,
    settings.policy ?? {},
    settings.operatorNamespace,
  );
  if (violations.length > 0) {
    throw new ServerSpecError(`the server policy forbids this spec: ${violations.join("; ")}`);
  }
  const out: ServerChildren = {
    namespace: childNamespace(cws, settings),
    service: buildService(cws, settings),
    deployment: buildDeployment(cws, settings),
  };
  const certificate = buildCertificate(cws, settings);
  if (certificate) out.certificate = certificate;
  const hpa = buildHPA(cws, settings);
  if (hpa) out.hpa = hpa;
  const pdb = buildPDB(cws, settings);
  if (pdb) out.pdb = pdb;
  return out;
}
