/**
 * The committed CRDs of dco's own kinds (charts/declarative-conversion-operator/crds/, generated
 * by `deno task gen:crds`) against a real kube-apiserver: they are accepted as structural, their
 * names and printer columns work, and the apiserver's defaulting/validation agrees with the zod
 * schemas — in particular `sharding: {}` reads back as a pool member (`enabled: true`) while an
 * absent `sharding` block stays absent.
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { parse } from "yaml";
import { type ControlPlane, e2eTest } from "../support/control_plane.ts";
import { CRD_DIR, type CustomResourceDefinition } from "../../src/api/crds.ts";
import {
  ConversionWebhookServerSpecSchema,
  CRDConversionConfigSpecSchema,
  isShardMember,
} from "../../src/api/mod.ts";
import { rfc3339 } from "../../src/lib/time.ts";

const REPO = new URL("../../", import.meta.url).pathname;
const API_VERSION = "terasky.com/v1alpha1";

type Obj = k8s.KubernetesObject & { spec?: Record<string, unknown>; status?: unknown };

async function committedCRDs(): Promise<CustomResourceDefinition[]> {
  const out: CustomResourceDefinition[] = [];
  for await (const e of Deno.readDir(`${REPO}${CRD_DIR}`)) {
    if (e.isFile && e.name.endsWith(".yaml")) {
      out.push(parse(await Deno.readTextFile(`${REPO}${CRD_DIR}/${e.name}`)));
    }
  }
  return out.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

async function getJSON(cp: ControlPlane, ...args: string[]): Promise<Obj> {
  const r = await cp.kubectl("get", ...args, "-o", "json");
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Obj;
}

function cws(name: string, extra: Record<string, unknown> = {}): Obj {
  return {
    apiVersion: API_VERSION,
    kind: "ConversionWebhookServer",
    metadata: { name },
    spec: { certificate: { issuerRef: { name: "selfsigned" } }, ...extra },
  };
}

function crdConfig(name: string, extra: Record<string, unknown> = {}): Obj {
  return {
    apiVersion: API_VERSION,
    kind: "CRDConversionConfig",
    metadata: { name },
    spec: {
      targetCRD: { name: "widgets.example.com" },
      hubVersion: "v2",
      spokes: [{
        version: "v1",
        rules: [{
          strategy: "FieldRename",
          fieldRename: { hubPath: "spec.size", spokePath: "spec.capacity" },
        }],
      }],
      ...extra,
    },
  };
}

e2eTest(
  "generated dco CRDs: structural, named, defaulted and validated by a real kube-apiserver",
  async (cp: ControlPlane, t) => {
    const crds = await committedCRDs();
    assert.deepEqual(crds.map((c) => c.metadata.name), [
      "conversionwebhookservers.terasky.com",
      "crdconversionconfigs.terasky.com",
      "xrdconversionconfigs.terasky.com",
    ]);

    await t.step("the apiserver accepts all three as structural", async () => {
      for (const crd of crds) await cp.apply(crd);
      for (const crd of crds) {
        await cp.waitForCRD(crd.metadata.name);
        const live = await getJSON(cp, "crd", crd.metadata.name) as Obj & {
          status: { conditions?: { type: string; status: string; message?: string }[] };
        };
        const bad = (live.status.conditions ?? []).filter((c) =>
          c.type === "NonStructuralSchema" && c.status === "True"
        );
        assert.deepEqual(bad, [], `${crd.metadata.name}: ${JSON.stringify(bad)}`);
      }
    });

    await t.step("CRDConversionConfig: spec defaults applied by the apiserver", async () => {
      const input = crdConfig("widgets");
      await cp.apply(input);
      const live = await getJSON(cp, "crdconversionconfig", "widgets");
      const spec = live.spec!;
      assert.deepEqual(spec.conversionReviewVersions, ["v1"]);
      assert.equal(spec.unmappedFieldPolicy, "Error");
      assert.equal(spec.driftPolicy, "KeepServingStale");
      const rule = (spec.spokes as { rules: Record<string, unknown>[] }[])[0].rules[0];
      assert.equal(rule.acknowledgeLossy, false);
      assert.deepEqual(rule.fieldRename, { hubPath: "spec.size", spokePath: "spec.capacity" });
      // The offline decode applies the same top-level defaults.
      const offline = CRDConversionConfigSpecSchema.parse(input.spec);
      assert.deepEqual(offline.conversionReviewVersions, spec.conversionReviewVersions);
      assert.equal(offline.unmappedFieldPolicy, spec.unmappedFieldPolicy);
      assert.equal(offline.driftPolicy, spec.driftPolicy);
    });

    await t.step("XRDConversionConfig: accepted with its defaults", async () => {
      await cp.apply({
        apiVersion: API_VERSION,
        kind: "XRDConversionConfig",
        metadata: { name: "xnetworks" },
        spec: {
          targetXRD: { name: "xnetworks.example.org" },
          hubVersion: "v2",
          spokes: [{ version: "v1" }],
          unmappedFieldPolicy: "Warn",
          unmappedFieldReason: "legacy fields are dropped on purpose",
        },
      });
      const spec = (await getJSON(cp, "xcc", "xnetworks")).spec!;
      assert.deepEqual(spec.spokes, [{ version: "v1", rules: [] }]);
      assert.deepEqual(spec.conversionReviewVersions, ["v1"]);
      assert.equal(spec.unmappedFieldPolicy, "Warn");
    });

    await t.step("invalid enum values are rejected by the apiserver", async () => {
      for (
        const obj of [
          crdConfig("bad-policy", { unmappedFieldPolicy: "Maybe" }),
          crdConfig("bad-drift", { driftPolicy: "Sometimes" }),
          cws("bad-issuer", { certificate: { issuerRef: { name: "x", kind: "Vault" } } }),
        ]
      ) {
        await assert.rejects(cp.apply(obj), /Unsupported value/, obj.metadata?.name);
      }
      await assert.rejects(
        cp.apply(crdConfig("no-spokes", { spokes: [] })),
        /should have at least 1 items|must have at least 1 items/,
      );
      await assert.rejects(cp.apply(cws("zero-weight", { sharding: { weight: 0 } })), /weight/);
    });

    await t.step(
      "ConversionWebhookServer: sharding defaults only inside a present block",
      async () => {
        const cases: [string, Record<string, unknown>, unknown, boolean][] = [
          ["absent", {}, undefined, false],
          ["empty", { sharding: {} }, { enabled: true, weight: 1 }, true],
          ["disabled", { sharding: { enabled: false } }, { enabled: false, weight: 1 }, false],
          ["weighted", { sharding: { weight: 3 } }, { enabled: true, weight: 3 }, true],
        ];
        for (const [name, extra] of cases) await cp.apply(cws(`shard-${name}`, extra));
        for (const [name, extra, want, member] of cases) {
          const live = (await getJSON(cp, "cws", `shard-${name}`)).spec!;
          assert.deepEqual(live.sharding, want, name);
          assert.equal("sharding" in live, want !== undefined, name);
          assert.equal(isShardMember(live), member, name);
          // The zod decode defaults exactly like the apiserver (the whole spec, not just sharding).
          const offline = ConversionWebhookServerSpecSchema.parse(cws("x", extra).spec);
          assert.deepEqual(JSON.parse(JSON.stringify(offline)), live, name);
        }
        const live = (await getJSON(cp, "cws", "shard-absent")).spec!;
        assert.equal(live.replicas, 2);
        assert.equal(live.default, false);
        assert.equal(live.serviceAccountName, "declarative-conversion-webhook-server");
        assert.deepEqual(live.certificate, {
          issuerRef: { name: "selfsigned", kind: "ClusterIssuer" },
        });
        assert.equal("startupProbe" in live, false);
        assert.equal("rollout" in live, false);
      },
    );

    await t.step("nested blocks get their defaults; int-or-string fields take both", async () => {
      await cp.apply(cws("full", {
        startupProbe: {},
        rollout: { maxUnavailable: "25%" },
        service: {},
        podDisruptionBudget: { minAvailable: 1 },
        autoscaling: { minReplicas: 2, maxReplicas: 5 },
        resources: { limits: { memory: "256Mi", cpu: 1 } },
        affinity: { nodeAffinity: { anything: ["goes"] } },
      }));
      const live = (await getJSON(cp, "cws", "full")).spec!;
      assert.deepEqual(live.startupProbe, {
        enabled: true,
        periodSeconds: 5,
        failureThreshold: 60,
      });
      assert.deepEqual(live.rollout, {
        preStopSleepSeconds: 5,
        terminationGracePeriodSeconds: 45,
        maxUnavailable: "25%",
        maxSurge: 1,
        defaultTopologySpread: true,
      });
      assert.deepEqual(live.service, { type: "ClusterIP", port: 443 });
      assert.deepEqual(live.podDisruptionBudget, { minAvailable: 1 });
      assert.deepEqual(live.autoscaling, {
        minReplicas: 2,
        maxReplicas: 5,
        targetCPUUtilizationPercentage: 75,
      });
      assert.deepEqual(live.resources, { limits: { memory: "256Mi", cpu: 1 } });
      assert.deepEqual(live.affinity, { nodeAffinity: { anything: ["goes"] } });
    });

    await t.step("status subresource, condition list-map and printer columns", async () => {
      const now = rfc3339(Date.now());
      const cond = (type: string, status: string, reason: string) => ({
        type,
        status,
        reason,
        message: "",
        lastTransitionTime: now,
      });
      const status = {
        phase: "Applied",
        overallLossless: true,
        webhookURL: "https://main-webhook-server.dco.svc/convert/widgets.example.com",
        assignedWebhookServer: "main",
        conditions: [
          cond("Validated", "True", "Validated"),
          cond("HandoverReady", "True", "HandoverUnverified"),
        ],
      };
      const patchStatus = (patch: unknown) =>
        cp.kubectl(
          "patch",
          "crdconversionconfig",
          "widgets",
          "--subresource=status",
          "--type=merge",
          "-p",
          JSON.stringify({ status: patch }),
        );
      const r = await patchStatus(status);
      assert.equal(r.code, 0, r.stderr);
      const live = await getJSON(cp, "ccc", "widgets");
      assert.deepEqual(live.status, status);

      const dup = await patchStatus({
        conditions: [status.conditions[0], status.conditions[0]],
      });
      assert.notEqual(dup.code, 0, "duplicate condition type must be rejected (list-map)");
      assert.match(dup.stderr, /Duplicate value/);

      const table = await cp.kubectl("get", "ccc", "widgets");
      assert.equal(table.code, 0, table.stderr);
      const [header, row] = table.stdout.trim().split("\n").map((l) => l.trim().split(/\s+/));
      assert.deepEqual(header, ["NAME", "CRD", "HUB", "PHASE", "LOSSLESS", "AGE"]);
      assert.deepEqual(row.slice(0, 5), [
        "widgets",
        "widgets.example.com",
        "v2",
        "Applied",
        "true",
      ]);

      const patched = await cp.kubectl(
        "patch",
        "cws",
        "shard-empty",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({
          status: {
            readyReplicas: 2,
            reportingReplicas: 2,
            endpoint: "https://shard-empty-webhook-server.dco.svc:443",
            servedTargets: ["a.example.com", "b.example.com"],
          },
        }),
      );
      assert.equal(patched.code, 0, patched.stderr);
      const cwsTable = await cp.kubectl("get", "cws", "shard-empty");
      const [h2, r2] = cwsTable.stdout.trim().split("\n").map((l) => l.trim().split(/\s+/));
      assert.deepEqual(h2, ["NAME", "DEFAULT", "READY", "ENDPOINT", "AGE"]);
      assert.deepEqual(r2.slice(0, 4), [
        "shard-empty",
        "false",
        "2",
        "https://shard-empty-webhook-server.dco.svc:443",
      ]);
      const xcc = await cp.kubectl("get", "xcc");
      assert.match(xcc.stdout.split("\n")[0], /^NAME\s+XRD\s+HUB\s+PHASE\s+LOSSLESS\s+AGE$/);
    });

    await t.step("all three kinds are cluster-scoped", async () => {
      const r = await cp.kubectl("api-resources", "--api-group=terasky.com", "--namespaced=false");
      assert.equal(r.code, 0, r.stderr);
      for (
        const kind of ["CRDConversionConfig", "XRDConversionConfig", "ConversionWebhookServer"]
      ) {
        assert.match(r.stdout, new RegExp(`\\b${kind}\\b`));
      }
    });
  },
);
