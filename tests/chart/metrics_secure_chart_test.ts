/**
 * `metrics.secure`: the manager gets `--metrics-secure`, its ServiceMonitor scrapes https with the
 * scraper's own token, and the metrics-reader ClusterRole is rendered for scrapers; off (the
 * default), none of it. `webhookServers.metrics.secure` does the same for the webhook servers:
 * the manager's `--webhook-server-metrics-secure`, the review rights for the webhook-server
 * ServiceAccount of every server namespace, an https webhook-server ServiceMonitor.
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

const bindingSubjects = (objs: Obj[], name: string): string[] | undefined =>
  objs.find((o) => o.kind === "ClusterRoleBinding" && o.metadata.name === `${FULLNAME}-${name}`)
    ?.subjects.map((s: Obj) => `${s.namespace}/${s.name}`).sort();

Deno.test("chart webhookServers.metrics.secure: the manager flag, review rights, https scrape", async () => {
  const objs = await render({
    "webhookServers.metrics.secure": "true",
    "webhookServers.namespaces[0]": "team-a",
    "metrics.serviceMonitor.enabled": "true",
  }, "dco-system");
  const args = managerArgs(objs);
  assert.ok(args.includes("--webhook-server-metrics-secure"));
  assert.ok(!args.includes("--metrics-secure"), "the manager's own listener stays plain");
  const endpoint = serviceMonitor(objs, "webhook-server").spec.endpoints[0];
  assert.equal(endpoint.scheme, "https");
  assert.equal(endpoint.bearerTokenFile, "/var/run/secrets/kubernetes.io/serviceaccount/token");
  assert.deepEqual(endpoint.tlsConfig, { insecureSkipVerify: true });
  assert.equal(serviceMonitor(objs, "manager").spec.endpoints[0].scheme, "http");
  const role = objs.find((o) =>
    o.kind === "ClusterRole" && o.metadata.name === `${FULLNAME}-metrics-auth-role`
  );
  assert.deepEqual(role?.rules, [
    { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
    { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
  ]);
  assert.deepEqual(bindingSubjects(objs, "webhook-server-metrics-auth-rolebinding"), [
    `dco-system/${FULLNAME}-webhook-server`,
    `team-a/${FULLNAME}-webhook-server`,
  ]);
  assert.equal(bindingSubjects(objs, "metrics-auth-rolebinding"), undefined, "not the manager");
  assert.ok(
    objs.some((o) => o.kind === "ClusterRole" && o.metadata.name === `${FULLNAME}-metrics-reader`),
  );
  // The chart's server follows the manager default: no spec.metrics of its own.
  const server = objs.find((o) => o.kind === "ConversionWebhookServer")!;
  assert.equal(server.spec.metrics, undefined);
});

Deno.test("chart metrics.secure off (default): plain metrics, no review rights", async () => {
  const objs = await render({ "metrics.serviceMonitor.enabled": "true" });
  assert.ok(!managerArgs(objs).includes("--metrics-secure"));
  assert.ok(!managerArgs(objs).includes("--webhook-server-metrics-secure"));
  assert.equal(serviceMonitor(objs, "manager").spec.endpoints[0].scheme, "http");
  assert.equal(serviceMonitor(objs, "webhook-server").spec.endpoints[0].scheme, "http");
  assert.equal(
    objs.filter((o) => o.kind === "ClusterRole" && /metrics-(reader|auth)/.test(o.metadata.name))
      .length,
    0,
  );
});
