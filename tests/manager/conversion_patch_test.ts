import assert from "node:assert/strict";
import {
  buildConversionPatch,
  buildRevertPatch,
  webhookURL,
  xrdWriteApiVersion,
} from "../../src/manager/conversion_patch.ts";

/** The expected `spec.conversion.webhook`: the Service's `/convert/<target>`, caBundle `Q0E=`. */
function webhookStanza(
  service: string,
  namespace: string,
  target: string,
  port: number,
  conversionReviewVersions: string[],
) {
  return {
    clientConfig: {
      service: { name: service, namespace, path: `/convert/${target}`, port },
      caBundle: "Q0E=",
    },
    conversionReviewVersions,
  };
}

Deno.test("CRD apply patch: exact content, port and review-version defaults", () => {
  assert.deepEqual(
    buildConversionPatch({
      targetKind: "CRD",
      targetName: "widgets.example.com",
      configName: "widgets",
      planHash: "sha256:abc",
      serverName: "main",
      serverNamespace: "dco",
      caBundle: "Q0E=",
    }),
    {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: {
        name: "widgets.example.com",
        annotations: {
          "conversion.terasky.com/managed-by": "widgets",
          "conversion.terasky.com/plan-hash": "sha256:abc",
        },
      },
      spec: {
        conversion: {
          strategy: "Webhook",
          webhook: webhookStanza("main-webhook-server", "dco", "widgets.example.com", 443, ["v1"]),
        },
      },
    },
  );
});

Deno.test("XRD apply patch: v2 unless the XRD offers claims; explicit port and review versions", () => {
  const input = {
    targetKind: "XRD" as const,
    targetName: "xnets.example.org",
    configName: "nets",
    planHash: "sha256:h",
    serverName: "s",
    serverNamespace: "ns",
    servicePort: 8443,
    caBundle: "Q0E=",
    conversionReviewVersions: ["v1", "v1beta1"],
  };
  const modern = buildConversionPatch({ ...input, liveTarget: { spec: { scope: "Namespaced" } } });
  assert.equal(modern.apiVersion, "apiextensions.crossplane.io/v2");
  assert.equal(modern.kind, "CompositeResourceDefinition");
  const legacy = buildConversionPatch({
    ...input,
    liveTarget: { spec: { claimNames: { kind: "Net", plural: "nets" } } },
  });
  assert.equal(legacy.apiVersion, "apiextensions.crossplane.io/v1");
  assert.deepEqual(
    (legacy.spec as { conversion: { webhook: unknown } }).conversion.webhook,
    webhookStanza("s-webhook-server", "ns", "xnets.example.org", 8443, ["v1", "v1beta1"]),
  );
  assert.equal(xrdWriteApiVersion(undefined), "apiextensions.crossplane.io/v2");
});

Deno.test("revert patch of a CRD: identity plus strategy None only (no annotations)", () => {
  assert.deepEqual(buildRevertPatch("CRD", "widgets.example.com"), {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "widgets.example.com" },
    spec: { conversion: { strategy: "None" } },
  });
});

Deno.test("revert patch of an XRD: identity only, so the whole stanza goes (v1 and v2)", () => {
  // Crossplane's v1 XRD schema refuses a stanza that is not Webhook with a webhook.
  assert.deepEqual(
    buildRevertPatch("XRD", "x.example.org", { spec: { claimNames: { kind: "X" } } }),
    {
      apiVersion: "apiextensions.crossplane.io/v1",
      kind: "CompositeResourceDefinition",
      metadata: { name: "x.example.org" },
    },
  );
  assert.deepEqual(buildRevertPatch("XRD", "x.example.org", { spec: {} }), {
    apiVersion: "apiextensions.crossplane.io/v2",
    kind: "CompositeResourceDefinition",
    metadata: { name: "x.example.org" },
  });
});

Deno.test("webhookURL never carries a port", () => {
  assert.equal(webhookURL("main", "dco", "a.b"), "https://main-webhook-server.dco.svc/convert/a.b");
});
