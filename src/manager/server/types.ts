/**
 * The Kubernetes objects a ConversionWebhookServer owns, typed as far as dco renders them;
 * pass-through values copied from the spec (resources, volumes, affinity, …) stay opaque.
 */
import type { IntOrString } from "../../api/mod.ts";
import type { KubeObject, ObjectMeta } from "../../kube/mod.ts";

/** A type alias, not an interface, so it fits `ObjectMeta.ownerReferences`' record type. */
export type OwnerReference = {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: true;
  blockOwnerDeletion: true;
};

export interface ChildMeta extends ObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  ownerReferences: OwnerReference[];
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface HttpProbe {
  httpGet: { path: string; port: number; scheme: "HTTP" | "HTTPS" };
  periodSeconds: number;
  timeoutSeconds: number;
  failureThreshold: number;
}

export interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  args: string[];
  ports: { name: string; containerPort: number; protocol: "TCP" }[];
  env: EnvVar[];
  resources?: Record<string, unknown>;
  volumeMounts: Record<string, unknown>[];
  readinessProbe: HttpProbe;
  livenessProbe: HttpProbe;
  startupProbe?: HttpProbe;
  lifecycle?: { preStop: { sleep: { seconds: number } } };
  securityContext: {
    runAsNonRoot: true;
    allowPrivilegeEscalation: false;
    readOnlyRootFilesystem: true;
    capabilities: { drop: string[] };
    seccompProfile: { type: "RuntimeDefault" };
  };
}

export interface PodSpec {
  serviceAccountName: string;
  terminationGracePeriodSeconds: number;
  securityContext: { runAsNonRoot: true; seccompProfile: { type: "RuntimeDefault" } };
  containers: Container[];
  volumes: Record<string, unknown>[];
  nodeSelector?: Record<string, string>;
  tolerations?: Record<string, unknown>[];
  affinity?: Record<string, unknown>;
  priorityClassName?: string;
  topologySpreadConstraints?: Record<string, unknown>[];
}

export interface Deployment extends KubeObject {
  apiVersion: "apps/v1";
  kind: "Deployment";
  metadata: ChildMeta;
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    strategy: {
      type: "RollingUpdate";
      rollingUpdate: { maxUnavailable: IntOrString; maxSurge: IntOrString };
    };
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: PodSpec;
    };
  };
}

export interface ServicePort {
  name: string;
  port: number;
  targetPort: number;
  protocol: "TCP";
}

export interface Service extends KubeObject {
  apiVersion: "v1";
  kind: "Service";
  metadata: ChildMeta;
  spec: { type: string; selector: Record<string, string>; ports: ServicePort[] };
}

export interface Certificate extends KubeObject {
  apiVersion: "cert-manager.io/v1";
  kind: "Certificate";
  metadata: ChildMeta;
  spec: {
    secretName: string;
    dnsNames: string[];
    issuerRef: { name: string; kind: string };
    duration?: string;
    renewBefore?: string;
  };
}

export interface HorizontalPodAutoscaler extends KubeObject {
  apiVersion: "autoscaling/v2";
  kind: "HorizontalPodAutoscaler";
  metadata: ChildMeta;
  spec: {
    scaleTargetRef: { apiVersion: "apps/v1"; kind: "Deployment"; name: string };
    minReplicas: number;
    maxReplicas: number;
    metrics: {
      type: "Resource";
      resource: { name: "cpu"; target: { type: "Utilization"; averageUtilization: number } };
    }[];
  };
}

export interface PodDisruptionBudget extends KubeObject {
  apiVersion: "policy/v1";
  kind: "PodDisruptionBudget";
  metadata: ChildMeta;
  spec: {
    selector: { matchLabels: Record<string, string> };
    minAvailable?: IntOrString;
    maxUnavailable?: IntOrString;
  };
}

/**
 * Everything a server owns, in apply order (see
 * docs/design/server-children.md#the-cws-reconcile-and-delete-guard). `hpa`/`pdb` undefined ⇒ none
 * is applied; `certificate` is set only in `CertManager` mode with an `issuerRef`.
 */
export interface ServerChildren {
  namespace: string;
  certificate?: Certificate;
  service: Service;
  deployment: Deployment;
  hpa?: HorizontalPodAutoscaler;
  pdb?: PodDisruptionBudget;
}
