/**
 * The propagation comparison the manager and `convctl test --live --verify-propagation` share:
 * one generated CRD against the expected conversion (by Service or by URL), the expected
 * conversion read off an XRD, and the verdicts summed up in `ConversionPropagated`'s order.
 */
import assert from "node:assert/strict";
import {
  type AppliedConversion,
  describeConversion,
  expectedConversionOf,
  type GeneratedCRDVerdict,
  propagationOutcome,
  sha256Hex,
  verifyGeneratedCRD,
} from "../../src/api/propagation.ts";
import type { JsonObject } from "../../src/lib/json.ts";
import { textToBase64 } from "../../src/lib/base64.ts";

const CA = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n";
const caHash = () => sha256Hex(new TextEncoder().encode(CA));

const withConversion = (conversion: JsonObject | undefined): JsonObject => ({
  metadata: { name: "x" },
  spec: conversion === undefined ? {} : { conversion },
});

const serviceConversion = (svc: JsonObject, ca = CA, reviews = ["v1"]): JsonObject => ({
  strategy: "Webhook",
  webhook: {
    conversionReviewVersions: reviews,
    clientConfig: { service: svc, caBundle: textToBase64(ca) },
  },
});

async function applied(): Promise<AppliedConversion> {
  return {
    serviceName: "main",
    serviceNamespace: "dco-system",
    path: "/convert/xnets",
    port: 443,
    conversionReviewVersions: ["v1"],
    caBundleHash: await caHash(),
  };
}

const SVC = { name: "main", namespace: "dco-system", path: "/convert/xnets" };

Deno.test("verifyGeneratedCRD by Service: propagated, port defaults to 443, each mismatch", async () => {
  const expected = await applied();
  const ok = await verifyGeneratedCRD(withConversion(serviceConversion(SVC)), expected);
  assert.deepEqual(ok, {
    state: "propagated",
    observedCABundleHash: expected.caBundleHash,
    message: "",
  });
  const none = await verifyGeneratedCRD(withConversion(undefined), expected);
  assert.equal(none.state, "mismatch");
  assert.equal(none.message, 'conversion strategy is "None", not "Webhook"');
  const path = await verifyGeneratedCRD(
    withConversion(serviceConversion({ ...SVC, path: "/other" })),
    expected,
  );
  assert.equal(path.message, 'service path is "/other", expected "/convert/xnets"');
  const reviews = await verifyGeneratedCRD(
    withConversion(serviceConversion(SVC, CA, ["v1beta1"])),
    expected,
  );
  assert.equal(reviews.message, 'conversionReviewVersions are ["v1beta1"], expected ["v1"]');
  const stale = await verifyGeneratedCRD(withConversion(serviceConversion(SVC, "old")), expected);
  assert.equal(stale.state, "stale");
  assert.equal(stale.observedCABundleHash, await sha256Hex(new TextEncoder().encode("old")));
  assert.equal((await verifyGeneratedCRD(undefined, expected)).state, "notFound");
  const failed = await verifyGeneratedCRD(new Error("boom"), expected);
  assert.deepEqual([failed.state, failed.message], ["mismatch", "read failed: boom"]);
});

Deno.test("verifyGeneratedCRD by URL: the URL is compared, a service is a mismatch", async () => {
  const url = "https://10.0.0.1:9443/convert";
  const expected = { url, conversionReviewVersions: ["v1"], caBundleHash: await caHash() };
  const byURL: JsonObject = {
    strategy: "Webhook",
    webhook: {
      conversionReviewVersions: ["v1"],
      clientConfig: { url, caBundle: textToBase64(CA) },
    },
  };
  assert.equal((await verifyGeneratedCRD(withConversion(byURL), expected)).state, "propagated");
  const other = await verifyGeneratedCRD(withConversion(serviceConversion(SVC)), expected);
  assert.equal(other.message, `webhook url is undefined, expected ${JSON.stringify(url)}`);
});

Deno.test("expectedConversionOf: a Service or URL webhook of the XRD, or why there is none", async () => {
  assert.deepEqual(
    await expectedConversionOf(withConversion(serviceConversion(SVC))),
    await applied(),
  );
  const url = await expectedConversionOf(withConversion({
    strategy: "Webhook",
    webhook: { clientConfig: { url: "https://h/convert" } },
  }));
  assert.deepEqual(url, {
    url: "https://h/convert",
    conversionReviewVersions: ["v1"],
    caBundleHash: "",
  });
  assert.equal(describeConversion(url as never), "https://h/convert");
  assert.equal(
    describeConversion(await applied()),
    "service dco-system/main:443/convert/xnets",
  );
  assert.equal(
    await expectedConversionOf(withConversion(undefined)),
    `the XRD's conversion strategy is "None", not "Webhook"`,
  );
  assert.equal(
    await expectedConversionOf(withConversion({ strategy: "Webhook", webhook: {} })),
    "the XRD's conversion webhook has no service or url client config",
  );
});

Deno.test("propagationOutcome: not found wins over mismatch, mismatch over stale", () => {
  const v = (state: GeneratedCRDVerdict["state"], message = "") => ({
    state,
    observedCABundleHash: "",
    message,
  });
  const label = "XRD xnets.example.org";
  assert.deepEqual(
    propagationOutcome(label, [
      { name: "a", verdict: v("stale", "old CA") },
      { name: "b", verdict: v("mismatch", "no service") },
      { name: "c", verdict: v("notFound") },
    ]),
    {
      reason: "GeneratedCRDNotFound",
      message: `generated CRD c of ${label} not found (Crossplane has not rendered it yet)`,
    },
  );
  assert.deepEqual(
    propagationOutcome(label, [
      { name: "a", verdict: v("stale", "old CA") },
      { name: "b", verdict: v("mismatch", "no service") },
    ]),
    {
      reason: "NotPropagated",
      message: `generated CRD b of ${label} does not carry the applied conversion: b: no service`,
    },
  );
  assert.equal(
    propagationOutcome(label, [{ name: "a", verdict: v("stale", "old CA") }]).reason,
    "CABundleStale",
  );
  assert.deepEqual(
    propagationOutcome(label, [
      { name: "a", verdict: v("propagated") },
      { name: "b", verdict: v("propagated") },
    ]),
    { reason: "Propagated", message: `the conversion of ${label} reached its generated CRD a, b` },
  );
});
