/**
 * The one in-memory cluster of the config-reconcile tests: a {@link ConfigReconcileDeps} that
 * records every call in order, keeps one config, the CRDs and XRDs by name, the servers, their
 * TLS Secrets and served-target Leases, and counts the metric hooks. It behaves like the real
 * adapter (src/manager/config/adapter.ts) where the reconcile can tell: the contract in
 * tests/manager/_deps_contract.ts runs against both (tests/manager/world_contract_test.ts here,
 * tests/e2e/config_deps_contract_test.ts on a real apiserver).
 *
 * What it does not model: cache lag (`liveTarget` stands in for a cache that has not seen a write
 * yet), the merge semantics of the status patch (the status is replaced) and the apiserver's
 * validation of what is applied (a caBundle must parse as a certificate, for one).
 */
import {
  type ConfigKind,
  type ConversionConfig,
  type ConversionWebhookServer,
  parseConfig,
  targetNameOf,
  XRD_CONFIG_KIND,
} from "../../src/api/mod.ts";
import {
  servedAnnotations,
  servedLeaseLabels,
  type ServedLeaseLike,
  servedLeaseName,
  WEBHOOK_SERVER_LABEL,
} from "../../src/api/served_lease.ts";
import { KubeApiError } from "../../src/kube/mod.ts";
import type { StatusCondition } from "../../src/kube/status.ts";
import { isJsonObject, type JsonObject } from "../../src/lib/json.ts";
import { rfc3339Micro } from "../../src/lib/time.ts";
import type { ConfigReconcileDeps, ConfigStatus } from "../../src/manager/config/mod.ts";
import type { TargetKind } from "../../src/manager/conversion_patch.ts";

/** The tests' epoch (whole seconds). */
export const T0 = Date.UTC(2026, 10, 29, 20, 0, 0);
export const OPERATOR_NAMESPACE = "dco-system";
export const WIDGETS = "widgets.example.com";
export const XNETS = "xnets.example.org";
/**
 * A parseable self-signed certificate (an apiserver rejects a conversion caBundle that is not one;
 * the contract applies it to a real CRD).
 */
export const CA_PEM = "-----BEGIN CERTIFICATE-----\n" +
  "MIIBlTCCATugAwIBAgIUF+Y0PN6FIsCUxW6zW0bObxSm9GQwCgYIKoZIzj0EAwIw\n" +
  "HzEdMBsGA1UEAwwUZGNvLWNvbnRyYWN0LXRlc3QtY2EwIBcNMjYxMjAxMjAyMTMy\n" +
  "WhgPMjEyNjExMDcyMDIxMzJaMB8xHTAbBgNVBAMMFGRjby1jb250cmFjdC10ZXN0\n" +
  "LWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEVnbBe4mK/uJr0RTL2WyOTyQ\n" +
  "qTgfG63pYwz96EsZ5WTtDbMVdinQWj7HNDp3MxRnvtsRfEn7D1sp2KeEk954saNT\n" +
  "MFEwHQYDVR0OBBYEFAV3uqWovb9KNu+2eIPE3dNgEpE2MB8GA1UdIwQYMBaAFAV3\n" +
  "uqWovb9KNu+2eIPE3dNgEpE2MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID\n" +
  "SAAwRQIhAMtkaMV+wFzRTy2EQwXF954DmWFZSJ/8JL7XvIQabKnCAiA4UonD7sPl\n" +
  "fiC+xf8c6e0jmJ7a21TJtCehMzWt3r8xvQ==\n" +
  "-----END CERTIFICATE-----\n";

/** An OpenAPI schema whose `spec` has `props`. */
export function specSchema(props: Record<string, JsonObject>): JsonObject {
  return {
    openAPIV3Schema: {
      type: "object",
      properties: { spec: { type: "object", properties: props } },
    },
  };
}

export interface WidgetCRDOptions {
  established?: boolean;
  generation?: number;
  servedV1?: boolean;
  /** `status.storedVersions`; default `["v2"]` (only the storage version). */
  storedVersions?: string[];
  /** Extra hub-only fields (schema drift). */
  hubExtra?: Record<string, JsonObject>;
}

/** The CRD `widgets.example.com`: v1 and v2 (storage, the hub) with `spec.size`. */
export function widgetCRD(o: WidgetCRDOptions = {}): JsonObject {
  const size = { size: { type: "string" } };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: WIDGETS, generation: o.generation ?? 3 },
    spec: {
      group: "example.com",
      scope: "Namespaced",
      names: { kind: "Widget", plural: "widgets" },
      versions: [
        { name: "v1", served: o.servedV1 ?? true, storage: false, schema: specSchema(size) },
        {
          name: "v2",
          served: true,
          storage: true,
          schema: specSchema({ ...size, ...(o.hubExtra ?? {}) }),
        },
      ],
    },
    status: {
      conditions: [{ type: "Established", status: o.established === false ? "False" : "True" }],
      storedVersions: o.storedVersions ?? ["v2"],
    },
  };
}

export interface WidgetConfigOptions {
  rules?: unknown[];
  driftPolicy?: string;
  generation?: number;
}

/** The CRDConversionConfig `widgets` of {@link widgetCRD}, hub v2, one spoke v1. */
export function widgetConfig(opts: WidgetConfigOptions = {}): ConversionConfig {
  return decoded({
    apiVersion: "terasky.com/v1alpha1",
    kind: "CRDConversionConfig",
    metadata: { name: "widgets", generation: opts.generation ?? 2 },
    spec: {
      targetCRD: { name: WIDGETS },
      hubVersion: "v2",
      spokes: [{ version: "v1", rules: opts.rules ?? [] }],
      ...(opts.driftPolicy ? { driftPolicy: opts.driftPolicy } : {}),
    },
  });
}

export interface NetXRDOptions {
  claims?: boolean;
  owner?: JsonObject;
  plural?: string;
  established?: boolean;
}

/** The XRD `xnets.example.org`: v1 and v2 (referenceable, the hub) with `spec.cidr`. */
export function netXRD(o: NetXRDOptions = {}): JsonObject {
  const schema = specSchema({ cidr: { type: "string" } });
  return {
    apiVersion: "apiextensions.crossplane.io/v2",
    kind: "CompositeResourceDefinition",
    metadata: {
      name: XNETS,
      generation: 1,
      ...(o.owner ? { ownerReferences: [o.owner] } : {}),
    },
    spec: {
      group: "example.org",
      ...(o.claims ? { claimNames: { kind: "Net", plural: "nets" } } : { scope: "Namespaced" }),
      names: { kind: "XNet", plural: o.plural ?? "xnets" },
      versions: [
        { name: "v1", served: true, referenceable: false, schema },
        { name: "v2", served: true, referenceable: true, schema },
      ],
    },
    status: {
      conditions: [{ type: "Established", status: o.established === false ? "False" : "True" }],
    },
  };
}

/** The XRDConversionConfig `nets` of {@link netXRD}, hub v2, one spoke v1. */
export function netConfig(reviewVersions?: string[]): ConversionConfig {
  return decoded({
    apiVersion: "terasky.com/v1alpha1",
    kind: "XRDConversionConfig",
    metadata: { name: "nets", generation: 1 },
    spec: {
      targetXRD: { name: XNETS },
      hubVersion: "v2",
      spokes: [{ version: "v1" }],
      ...(reviewVersions ? { conversionReviewVersions: reviewVersions } : {}),
    },
  });
}

function decoded(obj: unknown): ConversionConfig {
  const parsed = parseConfig(obj);
  if (!parsed.ok) throw new Error(parsed.errors.join("\n"));
  return parsed.config;
}

/** A default ConversionWebhookServer in dco-system with 2 replicas, ready or not. */
export function webhookServer(name = "main", ready = true): ConversionWebhookServer {
  const cond = (type: string) => ({
    type,
    status: ready ? "True" as const : "False" as const,
    reason: "x",
    message: "",
    lastTransitionTime: "2026-01-01T00:00:00Z",
  });
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    metadata: { name },
    spec: {
      default: name === "main",
      namespace: OPERATOR_NAMESPACE,
      replicas: 2,
      serviceAccountName: "sa",
      certificate: { issuerRef: { name: "ca", kind: "ClusterIssuer" } },
    },
    status: {
      readyReplicas: ready ? 2 : 0,
      conditions: ["Available", "CertificateReady", "ServiceReady"].map(cond),
    },
  } as ConversionWebhookServer;
}

/** A served-target Lease as a replica of `server` writes it, renewed at `renewMs`. */
export interface LeaseObject extends ServedLeaseLike {
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  };
  readonly spec: { readonly renewTime: string };
}

export function servedLease(
  namespace: string,
  server: string,
  pod: string,
  targets: readonly string[],
  renewMs: number,
): LeaseObject {
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(servedAnnotations(targets).annotations)) {
    if (v !== undefined) annotations[k] = v;
  }
  return {
    metadata: {
      name: servedLeaseName(pod),
      namespace,
      labels: servedLeaseLabels(server),
      annotations,
    },
    spec: { renewTime: rfc3339Micro(renewMs) },
  };
}

/** The decoded keys of a `<server>-webhook-server-tls` Secret. */
export interface TLSSecretData {
  "ca.crt"?: string;
  "tls.crt"?: string;
}

const tlsKey = (namespace: string, server: string) => `${namespace}/${server}`;

/** In-memory cluster that records calls in order. */
export class World implements ConfigReconcileDeps {
  calls: string[] = [];
  applied: JsonObject[] = [];
  statusPatches: ConfigStatus[] = [];
  cfg: ConversionConfig | undefined;
  /** CRDs by name (targets and generated ones); an Error is what reading it fails with. */
  crds = new Map<string, JsonObject | Error>();
  xrds = new Map<string, JsonObject>();
  /** What a live read of the target returns; undefined ⇒ the same as the (cached) target. */
  liveTarget: JsonObject | undefined;
  servers: ConversionWebhookServer[] = [webhookServer()];
  tlsSecrets = new Map<string, TLSSecretData>([
    [tlsKey(OPERATOR_NAMESPACE, "main"), { "ca.crt": CA_PEM }],
  ]);
  leases: LeaseObject[] = [];
  applyError: Error | undefined;
  clock = T0;
  operatorNamespace = OPERATOR_NAMESPACE;
  #resourceVersion = 0;

  // What the metric and log hooks saw.
  transitions: string[] = [];
  failures: string[] = [];
  reverts: string[] = [];
  gauge = new Map<string, number>();
  lags: number[] = [];
  logs: string[] = [];
  metrics = {
    phaseTransition: (l: { fromPhase: string; toPhase: string; reason: string }) =>
      this.transitions.push(`${l.fromPhase}->${l.toPhase} (${l.reason})`),
    analyzeFailure: (l: { reason: string }) => this.failures.push(l.reason),
    conversionRevert: (l: { configKind: string; target: string }) =>
      this.reverts.push(`${l.configKind}/${l.target}`),
    conversionPropagated: (t: string, ok: boolean) => this.gauge.set(t, ok ? 1 : 0),
    propagationLag: (_t: string, s: number) => this.lags.push(s),
  };
  log = (msg: string) => this.logs.push(msg);

  /** A world holding `cfg` and, when given, its target (a CRD or an XRD by its kind). */
  constructor(cfg?: ConversionConfig, target?: JsonObject) {
    if (cfg !== undefined) this.putConfig(cfg);
    if (target !== undefined) this.target = target;
  }

  now = () => this.clock;

  // -------------------------------------------------------------------------------------------
  // Setup, as a user or another controller would write

  /** Stores `cfg` as a new object version. */
  putConfig(cfg: ConversionConfig): void {
    const stored = structuredClone(cfg);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.#resourceVersion) };
    this.cfg = stored;
  }

  /** Stores a CRD or an XRD by its kind and name. */
  putTarget(obj: JsonObject): void {
    const name = nameOf(obj);
    if (obj.kind === "CustomResourceDefinition") this.crds.set(name, structuredClone(obj));
    else this.xrds.set(name, structuredClone(obj));
  }

  /** The config's target as stored (the CRD or XRD its spec names). */
  get target(): JsonObject | undefined {
    if (this.cfg === undefined) return undefined;
    const t = this.#store(this.#targetKind()).get(targetNameOf(this.cfg));
    return t instanceof Error ? undefined : t;
  }
  set target(obj: JsonObject | undefined) {
    if (this.cfg === undefined) throw new Error("no config, so no target");
    const store = this.#store(this.#targetKind());
    if (obj === undefined) store.delete(targetNameOf(this.cfg));
    else store.set(targetNameOf(this.cfg), obj);
  }

  /** The CA of the default server's Secret (`ca.crt`); undefined removes the Secret. */
  set ca(pem: string | undefined) {
    const key = tlsKey(OPERATOR_NAMESPACE, "main");
    if (pem === undefined) this.tlsSecrets.delete(key);
    else this.tlsSecrets.set(key, { "ca.crt": pem });
  }

  putTLSSecret(namespace: string, server: string, data: TLSSecretData): void {
    this.tlsSecrets.set(tlsKey(namespace, server), { ...data });
  }

  /** Marks the config deleted (with `annotations`, when given), as a delete with finalizers does. */
  markDeleted(annotations?: Record<string, string>): void {
    const cfg = this.cfg!;
    this.cfg = {
      ...cfg,
      metadata: {
        ...cfg.metadata,
        deletionTimestamp: "2026-11-29T21:00:00Z",
        ...(annotations === undefined ? {} : { annotations }),
      },
    } as ConversionConfig;
  }

  // -------------------------------------------------------------------------------------------
  // ConfigReconcileDeps

  getConfig(kind: ConfigKind, name: string) {
    this.calls.push("getConfig");
    const cfg = this.cfg;
    const found = cfg !== undefined && cfg.kind === kind && cfg.metadata?.name === name;
    return Promise.resolve(found ? structuredClone(cfg) : undefined);
  }
  getTarget(kind: TargetKind, name: string) {
    this.calls.push(`getTarget ${kind} ${name}`);
    return this.#read(this.#store(kind).get(name));
  }
  getTargetLive(kind: TargetKind, name: string) {
    this.calls.push(`getTargetLive ${kind} ${name}`);
    return this.#read(this.liveTarget ?? this.#store(kind).get(name));
  }
  getGeneratedCRD(name: string) {
    this.calls.push(`getGeneratedCRD ${name}`);
    return this.#read(this.crds.get(name));
  }
  getCRDLive(name: string) {
    this.calls.push(`getCRDLive ${name}`);
    return this.#read(this.crds.get(name));
  }
  listServedLeases(server: string, namespace: string) {
    this.calls.push(`listServedLeases ${namespace}/${server}`);
    return Promise.resolve(structuredClone(
      this.leases.filter((l) =>
        l.metadata.namespace === namespace && l.metadata.labels[WEBHOOK_SERVER_LABEL] === server
      ),
    ));
  }
  listServers() {
    this.calls.push("listServers");
    return Promise.resolve(structuredClone(this.servers));
  }
  getServer(name: string) {
    this.calls.push(`getServer ${name}`);
    const s = this.servers.find((s) => s.metadata?.name === name);
    return Promise.resolve(s === undefined ? undefined : structuredClone(s));
  }
  readCABundle(server: string, namespace: string) {
    this.calls.push(`readCABundle ${namespace}/${server}`);
    const data = this.tlsSecrets.get(tlsKey(namespace, server));
    const pem = data?.["ca.crt"];
    return Promise.resolve(pem === "" ? undefined : pem);
  }
  /**
   * Applies like SSA would for the fields dco owns: the conversion (gone when the patch names none,
   * as an XRD's revert) and the two annotations. At `apiextensions.crossplane.io/v1` a stanza
   * other than Webhook with a webhook is refused, as Crossplane's v1 XRD schema does.
   */
  applyTarget(obj: JsonObject) {
    const spec = obj.spec as JsonObject | undefined;
    const conversion = spec?.conversion === undefined
      ? undefined
      : structuredClone(spec.conversion as JsonObject);
    this.calls.push(`apply ${conversion?.strategy ?? "(no conversion)"}`);
    if (this.applyError) return Promise.reject(this.applyError);
    if (
      obj.apiVersion === "apiextensions.crossplane.io/v1" && conversion !== undefined &&
      (conversion.strategy !== "Webhook" || conversion.webhook === undefined)
    ) {
      return Promise.reject(
        new KubeApiError(
          422,
          "Invalid",
          "spec.conversion: Invalid value: Webhook configuration is required when conversion " +
            "strategy is Webhook",
        ),
      );
    }
    this.applied.push(obj);
    const stored = this.#store(obj.kind === "CustomResourceDefinition" ? "CRD" : "XRD")
      .get(nameOf(obj));
    if (stored !== undefined && !(stored instanceof Error)) {
      const t = stored as JsonObject & { metadata: JsonObject; spec: JsonObject };
      if (conversion === undefined) delete t.spec.conversion;
      else t.spec.conversion = conversion;
      const ann = (obj.metadata as JsonObject).annotations as Record<string, string> | undefined;
      if (ann) t.metadata.annotations = { ...ann };
      else delete t.metadata.annotations;
    }
    return Promise.resolve();
  }
  patchStatus(kind: ConfigKind, name: string, _before: unknown, after: ConfigStatus) {
    this.calls.push("patchStatus");
    this.statusPatches.push(structuredClone(after));
    const cfg = this.cfg;
    if (cfg === undefined || cfg.kind !== kind || cfg.metadata?.name !== name) {
      return Promise.reject(notFound(kind, name));
    }
    this.putConfig({ ...cfg, status: structuredClone(after) } as ConversionConfig);
    return Promise.resolve();
  }
  updateFinalizers(cfg: ConversionConfig, finalizers: string[]) {
    this.calls.push(`finalizers [${finalizers.join(",")}]`);
    const stored = this.cfg;
    const name = cfg.metadata?.name ?? "";
    if (stored === undefined || stored.kind !== cfg.kind || stored.metadata?.name !== name) {
      return Promise.reject(notFound(cfg.kind, name));
    }
    if (stored.metadata?.resourceVersion !== cfg.metadata?.resourceVersion) {
      return Promise.reject(
        new KubeApiError(409, "Conflict", `${cfg.kind} ${JSON.stringify(name)}: stale write`),
      );
    }
    const next = structuredClone(stored);
    next.metadata = { ...next.metadata, finalizers };
    if (next.metadata.deletionTimestamp && finalizers.length === 0) {
      this.cfg = undefined;
      return Promise.resolve(next);
    }
    this.putConfig(next);
    return Promise.resolve(structuredClone(this.cfg!));
  }

  // -------------------------------------------------------------------------------------------
  // Reading the outcome

  get status(): ConfigStatus {
    return (this.cfg?.status ?? {}) as ConfigStatus;
  }
  cond(type: string): StatusCondition | undefined {
    return this.status.conditions?.find((c) => c.type === type);
  }
  /** Forgets the calls, applies and metric counts seen so far. */
  reset() {
    this.calls = [];
    this.applied = [];
    this.transitions = [];
    this.failures = [];
  }

  #targetKind(): TargetKind {
    return this.cfg?.kind === XRD_CONFIG_KIND ? "XRD" : "CRD";
  }
  #store(kind: TargetKind): Map<string, JsonObject | Error> {
    return kind === "CRD" ? this.crds : this.xrds as Map<string, JsonObject | Error>;
  }
  #read(obj: JsonObject | Error | undefined): Promise<JsonObject | undefined> {
    if (obj instanceof Error) return Promise.reject(obj);
    return Promise.resolve(obj === undefined ? undefined : structuredClone(obj));
  }
}

function nameOf(obj: JsonObject): string {
  const name = isJsonObject(obj.metadata) ? obj.metadata.name : undefined;
  return typeof name === "string" ? name : "";
}

function notFound(kind: string, name: string): KubeApiError {
  return new KubeApiError(404, "NotFound", `${kind} ${JSON.stringify(name)} not found`);
}
