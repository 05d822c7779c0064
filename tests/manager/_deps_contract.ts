/**
 * What every {@link ConfigReconcileDeps} must do, as the reconcile relies on it: one list of
 * expectations run against the in-memory World (tests/manager/world_contract_test.ts) and against
 * the real adapter over a real kube-apiserver (tests/e2e/config_deps_contract_test.ts), so the
 * fake the unit tests use cannot drift from the product.
 */
import assert from "node:assert/strict";
import {
  type ConfigKind,
  type ConversionConfig,
  type ConversionWebhookServer,
  CRD_CONFIG_KIND,
} from "../../src/api/mod.ts";
import { readServedReport } from "../../src/api/served_lease.ts";
import { isConflict } from "../../src/kube/mod.ts";
import { isJsonObject, type JsonObject } from "../../src/lib/json.ts";
import { textToBase64 } from "../../src/lib/base64.ts";
import type { ConfigReconcileDeps, ConfigStatus } from "../../src/manager/config/mod.ts";
import {
  buildConversionPatch,
  buildRevertPatch,
  MANAGED_BY_ANNOTATION,
  PLAN_HASH_ANNOTATION,
} from "../../src/manager/conversion_patch.ts";
import {
  CA_PEM,
  type LeaseObject,
  netXRD,
  servedLease,
  type TLSSecretData,
  webhookServer,
  widgetConfig,
  widgetCRD,
  WIDGETS,
  XNETS,
} from "./_world.ts";

/** A cluster the contract writes to as a user would, and the deps under test that read it. */
export interface ContractCluster {
  readonly deps: ConfigReconcileDeps;
  /** An existing namespace for servers' Secrets and Leases. */
  readonly namespace: string;
  putConfig(config: ConversionConfig): Promise<void>;
  /** Deletes a config (held by its finalizers, if any). */
  deleteConfig(kind: ConfigKind, name: string): Promise<void>;
  /** A CRD or an XRD. */
  putTarget(obj: JsonObject): Promise<void>;
  /** A server, with its status. */
  putServer(server: ConversionWebhookServer): Promise<void>;
  putTLSSecret(namespace: string, server: string, data: TLSSecretData): Promise<void>;
  putLease(lease: LeaseObject): Promise<void>;
  /** Retries `check` until it passes (cached reads follow writes with a lag); once for a fake. */
  eventually(check: () => Promise<void>): Promise<void>;
}

export interface ContractCase {
  readonly name: string;
  run(c: ContractCluster): Promise<void>;
}

/** `widgetConfig()` named `name`. */
function configNamed(name: string): ConversionConfig {
  const cfg = widgetConfig();
  cfg.metadata = { name };
  return cfg;
}

function serverIn(namespace: string, name: string, ready = true): ConversionWebhookServer {
  const s = webhookServer(name, ready);
  s.spec = { ...s.spec, namespace };
  return s;
}

const nameOf = (obj: JsonObject | undefined) =>
  isJsonObject(obj?.metadata) ? obj.metadata.name : undefined;

const at = (obj: JsonObject | undefined, ...path: string[]): unknown => {
  let v: unknown = obj;
  for (const p of path) {
    v = Array.isArray(v) ? v[Number(p)] : isJsonObject(v) ? v[p] : undefined;
  }
  return v;
};

export const CONFIG_DEPS_CONTRACT: readonly ContractCase[] = [
  {
    name: "getConfig: undefined when absent, the decoded config when present",
    async run(c) {
      assert.equal(await c.deps.getConfig(CRD_CONFIG_KIND, "absent"), undefined);
      await c.putConfig(configNamed("present"));
      const got = await c.deps.getConfig(CRD_CONFIG_KIND, "present");
      assert.equal(got?.kind, CRD_CONFIG_KIND);
      assert.equal(got?.metadata?.name, "present");
      assert.deepEqual(got?.spec.targetCRD, { name: WIDGETS });
      assert.equal(got?.spec.hubVersion, "v2");
      assert.ok((got?.metadata?.resourceVersion ?? "") !== "", "carries its resourceVersion");
      assert.equal(await c.deps.getConfig("XRDConversionConfig", "present"), undefined, "by kind");
    },
  },
  {
    name: "patchStatus: the config reads back with the status written",
    async run(c) {
      await c.putConfig(configNamed("status"));
      const before = await c.deps.getConfig(CRD_CONFIG_KIND, "status");
      const after: ConfigStatus = {
        observedGeneration: 1,
        phase: "Pending",
        message: "waiting",
        conditions: [{
          type: "Validated",
          status: "True",
          reason: "Validated",
          message: "ok",
          lastTransitionTime: "2026-11-29T20:00:00Z",
          observedGeneration: 1,
        }],
      };
      await c.deps.patchStatus(CRD_CONFIG_KIND, "status", before?.status, after);
      const got = await c.deps.getConfig(CRD_CONFIG_KIND, "status");
      assert.equal(got?.status?.phase, "Pending");
      assert.equal(got?.status?.message, "waiting");
      assert.equal(got?.status?.observedGeneration, 1);
      assert.deepEqual(got?.status?.conditions, after.conditions);
      // A second patch from that status replaces what changed and drops what it leaves out.
      await c.deps.patchStatus(CRD_CONFIG_KIND, "status", got?.status, {
        ...after,
        phase: "Applied",
        message: undefined,
      });
      const again = await c.deps.getConfig(CRD_CONFIG_KIND, "status");
      assert.equal(again?.status?.phase, "Applied");
      assert.equal(again?.status?.message, undefined);
    },
  },
  {
    name:
      "updateFinalizers: sets them; a stale read conflicts; emptying a deleted config removes it",
    async run(c) {
      await c.putConfig(configNamed("final"));
      const read = (await c.deps.getConfig(CRD_CONFIG_KIND, "final"))!;
      const updated = await c.deps.updateFinalizers(read, ["example.com/a"]);
      assert.deepEqual(updated.metadata?.finalizers, ["example.com/a"]);
      assert.notEqual(updated.metadata?.resourceVersion, read.metadata?.resourceVersion);
      const reread = await c.deps.getConfig(CRD_CONFIG_KIND, "final");
      assert.deepEqual(reread?.metadata?.finalizers, ["example.com/a"]);
      await assert.rejects(c.deps.updateFinalizers(read, []), (e) => isConflict(e));
      await c.deleteConfig(CRD_CONFIG_KIND, "final");
      const deleting = (await c.deps.getConfig(CRD_CONFIG_KIND, "final"))!;
      assert.ok(deleting.metadata?.deletionTimestamp, "held by its finalizer");
      await c.deps.updateFinalizers(deleting, []);
      assert.equal(await c.deps.getConfig(CRD_CONFIG_KIND, "final"), undefined);
    },
  },
  {
    name: "getTarget, getTargetLive, getGeneratedCRD: undefined when absent, else the object",
    async run(c) {
      assert.equal(await c.deps.getTarget("CRD", WIDGETS), undefined);
      assert.equal(await c.deps.getTargetLive!("CRD", WIDGETS), undefined);
      assert.equal(await c.deps.getGeneratedCRD!(WIDGETS), undefined);
      assert.equal(await c.deps.getTarget("XRD", XNETS), undefined);
      await c.putTarget(widgetCRD());
      await c.putTarget(netXRD());
      assert.equal(nameOf(await c.deps.getTargetLive!("CRD", WIDGETS)), WIDGETS);
      assert.equal(nameOf(await c.deps.getTargetLive!("XRD", XNETS)), XNETS);
      await c.eventually(async () => {
        const crd = await c.deps.getTarget("CRD", WIDGETS);
        assert.equal(nameOf(crd), WIDGETS);
        assert.equal(at(crd, "spec", "versions", "1", "name"), "v2");
        assert.equal(nameOf(await c.deps.getGeneratedCRD!(WIDGETS)), WIDGETS);
        assert.equal(nameOf(await c.deps.getTarget("XRD", XNETS)), XNETS);
        assert.equal(await c.deps.getTarget("CRD", XNETS), undefined, "an XRD is not a CRD");
      });
    },
  },
  {
    name: "getCRDLive: undefined when absent; the CRD as stored now, with status.storedVersions",
    async run(c) {
      assert.equal(await c.deps.getCRDLive("absents.example.com"), undefined);
      await c.putTarget(widgetCRD());
      // Read through: no waiting for a cache.
      const crd = await c.deps.getCRDLive(WIDGETS);
      assert.equal(nameOf(crd), WIDGETS);
      assert.deepEqual(at(crd, "status", "storedVersions"), ["v2"]);
      assert.equal(at(crd, "spec", "versions", "0", "served"), true);
      assert.equal(await c.deps.getCRDLive(XNETS), undefined, "an XRD is not a CRD");
    },
  },
  {
    name: "applyTarget: the conversion stanza and dco's annotations; a revert drops both",
    async run(c) {
      await c.putTarget(widgetCRD());
      const live = (await c.deps.getTargetLive!("CRD", WIDGETS))!;
      await c.deps.applyTarget(buildConversionPatch({
        targetKind: "CRD",
        targetName: WIDGETS,
        liveTarget: live,
        configName: "widgets",
        planHash: "sha256:plan",
        serverName: "main",
        serverNamespace: c.namespace,
        caBundle: textToBase64(CA_PEM),
      }));
      const applied = await c.deps.getTargetLive!("CRD", WIDGETS);
      assert.equal(at(applied, "spec", "conversion", "strategy"), "Webhook");
      assert.deepEqual(at(applied, "spec", "conversion", "webhook", "clientConfig", "service"), {
        name: "main-webhook-server",
        namespace: c.namespace,
        path: `/convert/${WIDGETS}`,
        port: 443,
      });
      assert.equal(at(applied, "metadata", "annotations", MANAGED_BY_ANNOTATION), "widgets");
      assert.equal(at(applied, "spec", "versions", "0", "name"), "v1", "the rest untouched");
      await c.eventually(async () => {
        const cached = await c.deps.getTarget("CRD", WIDGETS);
        assert.equal(at(cached, "spec", "conversion", "strategy"), "Webhook");
      });
      await c.deps.applyTarget(buildRevertPatch("CRD", WIDGETS, applied!));
      const reverted = await c.deps.getTargetLive!("CRD", WIDGETS);
      assert.deepEqual(at(reverted, "spec", "conversion"), { strategy: "None" });
      assert.equal(at(reverted, "metadata", "annotations", MANAGED_BY_ANNOTATION), undefined);
    },
  },
  {
    name: "applyTarget: a legacy XRD's revert (at v1) removes the whole stanza and the annotations",
    async run(c) {
      const name = "xlegacies.example.org";
      const base = netXRD({ claims: true, plural: "xlegacies" });
      // Offering claims, so written at v1, where Crossplane admits only a Webhook stanza.
      await c.putTarget({
        ...base,
        apiVersion: "apiextensions.crossplane.io/v1",
        metadata: { name },
      });
      const live = (await c.deps.getTargetLive!("XRD", name))!;
      await c.deps.applyTarget(buildConversionPatch({
        targetKind: "XRD",
        targetName: name,
        liveTarget: live,
        configName: "legacies",
        planHash: "sha256:plan",
        serverName: "main",
        serverNamespace: c.namespace,
        caBundle: textToBase64(CA_PEM),
      }));
      const applied = (await c.deps.getTargetLive!("XRD", name))!;
      assert.equal(at(applied, "spec", "conversion", "strategy"), "Webhook");
      assert.equal(at(applied, "metadata", "annotations", MANAGED_BY_ANNOTATION), "legacies");
      // What Crossplane's v1 schema refuses: a stanza naming only `strategy: None`.
      await assert.rejects(
        c.deps.applyTarget({
          apiVersion: "apiextensions.crossplane.io/v1",
          kind: "CompositeResourceDefinition",
          metadata: { name },
          spec: { conversion: { strategy: "None" } },
        }),
        /Webhook configuration is required/,
      );
      const revert = buildRevertPatch("XRD", name, applied);
      assert.equal(revert.apiVersion, "apiextensions.crossplane.io/v1");
      await c.deps.applyTarget(revert);
      const reverted = await c.deps.getTargetLive!("XRD", name);
      assert.equal(at(reverted, "spec", "conversion"), undefined);
      assert.equal(at(reverted, "metadata", "annotations", MANAGED_BY_ANNOTATION), undefined);
      assert.equal(at(reverted, "metadata", "annotations", PLAN_HASH_ANNOTATION), undefined);
      assert.deepEqual(at(reverted, "spec", "claimNames"), { kind: "Net", plural: "nets" });
    },
  },
  {
    name: "listServers, getServer: the decoded servers with their status; undefined for others",
    async run(c) {
      await c.putServer(serverIn(c.namespace, "alpha"));
      await c.putServer(serverIn(c.namespace, "beta", false));
      await c.eventually(async () => {
        const servers = await c.deps.listServers();
        assert.deepEqual(servers.map((s) => s.metadata?.name).sort(), ["alpha", "beta"]);
        const alpha = await c.deps.getServer("alpha");
        assert.equal(alpha?.spec.namespace, c.namespace);
        assert.equal(alpha?.status?.readyReplicas, 2);
        assert.equal(
          alpha?.status?.conditions?.find((x) => x.type === "Available")?.status,
          "True",
        );
        assert.equal((await c.deps.getServer("beta"))?.status?.readyReplicas, 0);
      });
      assert.equal(await c.deps.getServer("gamma"), undefined);
    },
  },
  {
    name: "readCABundle: ca.crt only (a tls.crt leaf is never the bundle); by server and namespace",
    async run(c) {
      const ns = c.namespace;
      assert.equal(await c.deps.readCABundle("alpha", ns), undefined, "no Secret");
      await c.putTLSSecret(ns, "alpha", { "ca.crt": CA_PEM, "tls.crt": "leaf" });
      assert.equal(await c.deps.readCABundle("alpha", ns), CA_PEM);
      await c.putTLSSecret(ns, "beta", { "ca.crt": "", "tls.crt": "leaf" });
      assert.equal(await c.deps.readCABundle("beta", ns), undefined, "empty ca.crt, leaf present");
      await c.putTLSSecret(ns, "gamma", {});
      assert.equal(await c.deps.readCABundle("gamma", ns), undefined, "neither key");
      assert.equal(await c.deps.readCABundle("alpha", "default"), undefined, "other namespace");
    },
  },
  {
    name: "listServedLeases: the Leases of that server in that namespace, as written",
    async run(c) {
      const now = Date.UTC(2026, 10, 29, 20, 0, 0);
      await c.putLease(servedLease(c.namespace, "alpha", "a-0", [WIDGETS], now));
      await c.putLease(servedLease(c.namespace, "alpha", "a-1", [], now));
      await c.putLease(servedLease(c.namespace, "beta", "b-0", [WIDGETS], now));
      await c.putLease(servedLease("default", "alpha", "a-2", [WIDGETS], now));
      const leases = await c.deps.listServedLeases("alpha", c.namespace);
      const byName = Object.fromEntries(leases.map((l) => [l.metadata?.name, l]));
      assert.deepEqual(Object.keys(byName).sort(), ["dco-served-a-0", "dco-served-a-1"]);
      assert.deepEqual(readServedReport(byName["dco-served-a-0"]), {
        ok: true,
        targets: [WIDGETS],
      });
      assert.deepEqual(readServedReport(byName["dco-served-a-1"]), { ok: true, targets: [] });
      assert.equal(Date.parse(byName["dco-served-a-0"].spec?.renewTime ?? ""), now);
    },
  },
];
