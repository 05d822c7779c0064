/**
 * `metrics.secure`: the manager gets `--metrics-secure`, its ServiceMonitor scrapes https with the
 * scraper's own token, and the metrics-reader ClusterRole is rendered for scrapers; off (the
 * default), none of it.
 */
import assert from "node:assert/strict";
import { FULLNAME, type Obj, render } from "./_helm.ts";

const managerArgs = (objs: Obj[]): string[] =>
  objs.find((o) => o.kind === "Deployment" && o.metadata.name === `${FULLNAME}-manager`)!
    .spec.template.spec.containers[0].args;

const serviceMonitor = (objs: Obj[], name: string): Obj =>
  objs.find((o) => o.kind === "ServiceMonitor" && o.metadata.name === `${FULLNAME}-${name}`)!;

Deno.test("chart metrics.secure: --metrics-secure, https ServiceMonitor, metrics-reader", async () => {
  const objs = await render({ "metrics.secure": "true", "metrics.serviceMonitor.enabled": "true" });
  assert.ok(managerArgs(objs).includes("--metrics-secure"));
  const endpoint = serviceMonitor(objs, "manager").spec.endpoints[0];
  assert.equal(endpoint.scheme, "https");
  assert.equal(endpoint.bearerTokenFile, "/var/run/secrets/kubernetes.io/serviceaccount/token");
  assert.deepEqual(endpoint.tlsConfig, { insecureSkipVerify: true });
  // The webhook servers' metrics stay plain (their Deployments are the manager's).
  assert.equal(serviceMonitor(objs, "webhook-server").spec.endpoints[0].scheme, "http");
  const reader = objs.find((o) =>
    o.kind === "ClusterRole" && o.metadata.name === `${FULLNAME}-metrics-reader`
  );
  assert.deepEqual(reader?.rules, [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }]);
});

Deno.test("chart metrics.secure off (default): plain metrics, no review rights", async () => {
  const objs = await render({ "metrics.serviceMonitor.enabled": "true" });
  assert.ok(!managerArgs(objs).includes("--metrics-secure"));
  assert.equal(serviceMonitor(objs, "manager").spec.endpoints[0].scheme, "http");
  assert.equal(
    objs.filter((o) => o.kind === "ClusterRole" && /metrics-(reader|auth)/.test(o.metadata.name))
      .length,
    0,
  );
});
