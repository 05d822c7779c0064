/** The Service in front of a server's pods: the conversion port and the metrics port. */
import type { ConversionWebhookServer } from "../../api/mod.ts";
import { childName, CONVERSION_PORT, METRICS_PORT, podLabels } from "./names.ts";
import { childMeta, identityOf, type ServerChildSettings, SERVICE_DEFAULTS } from "./settings.ts";
import type { Service } from "./types.ts";

/** The Service: `conversion` (spec port, default 443 → 9443) and `metrics` (8443 → 8443). */
export function buildService(cws: ConversionWebhookServer, settings: ServerChildSettings): Service {
  const { name } = identityOf(cws);
  const svc = cws.spec.service ?? SERVICE_DEFAULTS;
  const metadata = childMeta(cws, settings, childName(name));
  if (svc.annotations && Object.keys(svc.annotations).length > 0) {
    metadata.annotations = { ...svc.annotations };
  }
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata,
    spec: {
      type: svc.type,
      selector: podLabels(name),
      ports: [
        { name: "conversion", port: svc.port, targetPort: CONVERSION_PORT, protocol: "TCP" },
        { name: "metrics", port: METRICS_PORT, targetPort: METRICS_PORT, protocol: "TCP" },
      ],
    },
  };
}
