/** The HorizontalPodAutoscaler of a server with `spec.autoscaling`: CPU utilisation only. */
import type { ConversionWebhookServer } from "../../api/mod.ts";
import { childName } from "./names.ts";
import { childObject, identityOf, type ServerChildSettings } from "./settings.ts";
import type { HorizontalPodAutoscaler } from "./types.ts";

/**
 * The HPA when `spec.autoscaling` is set; undefined ⇒ none is applied (one applied before stays
 * until the server is deleted).
 */
export function buildHPA(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): HorizontalPodAutoscaler | undefined {
  const a = cws.spec.autoscaling;
  if (!a) return undefined;
  const name = childName(identityOf(cws).name);
  return childObject(
    { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler" },
    cws,
    settings,
    name,
    {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name },
      minReplicas: a.minReplicas,
      maxReplicas: a.maxReplicas,
      metrics: [{
        type: "Resource",
        resource: {
          name: "cpu",
          target: { type: "Utilization", averageUtilization: a.targetCPUUtilizationPercentage },
        },
      }],
    },
  );
}
