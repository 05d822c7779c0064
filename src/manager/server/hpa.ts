/** The HorizontalPodAutoscaler of a server with `spec.autoscaling`: CPU utilisation only. */
import type { ConversionWebhookServer } from "../../api/mod.ts";
import { childName } from "./names.ts";
import { type ChildBuilder, childObject, optionalChild } from "./settings.ts";
import type { HorizontalPodAutoscaler } from "./types.ts";

type Autoscaling = NonNullable<ConversionWebhookServer["spec"]["autoscaling"]>;

/** The HPA's spec: scale the Deployment `deployment` on average CPU utilisation. */
function hpaSpec(a: Autoscaling, deployment: string): HorizontalPodAutoscaler["spec"] {
  return {
    scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: deployment },
    minReplicas: a.minReplicas,
    maxReplicas: a.maxReplicas,
    metrics: [{
      type: "Resource",
      resource: {
        name: "cpu",
        target: { type: "Utilization", averageUtilization: a.targetCPUUtilizationPercentage },
      },
    }],
  };
}

/** The HPA when `spec.autoscaling` is set. */
export const buildHPA: ChildBuilder<HorizontalPodAutoscaler> = optionalChild(
  (spec) => spec.autoscaling,
  (cws, settings, a, server) => {
    const type = { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler" } as const;
    return childObject(type, cws, settings, childName(server), hpaSpec(a, childName(server)));
  },
);
