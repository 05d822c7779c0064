/**
 * The kubelet harness itself: a Deployment becomes running processes behind a Service that the
 * apiserver reaches through EndpointSlices; a Pod reaches the apiserver with its bound
 * service-account token; a deleted Pod's process is stopped and replaced; Secret volumes follow
 * their Secret; a Job (restartPolicy Never) runs to completion: exit 0 ⇒ Pod Succeeded and the Job
 * Complete, exit 3 ⇒ Pod Failed, not restarted, and the Job (backoffLimit 0) Failed.
 */
import assert from "node:assert/strict";
import { e2eTest, waitFor } from "../../support/control_plane.ts";

const IMAGE = "dco.test/echo:1";
// A tiny server: /readyz answers once /tmp-free marker exists in the volume; / tells who it is
// and what the apiserver said to its service-account token.
const SERVER = `
const token = () => Deno.readTextFileSync("/var/run/secrets/kubernetes.io/serviceaccount/token");
const ca = Deno.readTextFileSync("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
const client = Deno.createHttpClient({ caCerts: [ca] });
const api = "https://" + Deno.env.get("KUBERNETES_SERVICE_HOST") + ":" + Deno.env.get("KUBERNETES_SERVICE_PORT");
Deno.serve({ port: 8080, hostname: "0.0.0.0" }, async (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/readyz") return new Response("ok");
  if (path === "/secret") return new Response(Deno.readTextFileSync("/config/greeting"));
  const res = await fetch(api + "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
    method: "POST", client,
    headers: { authorization: "Bearer " + token(), "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }),
  });
  const who = (await res.json()).status?.userInfo?.username ?? "?";
  return new Response(Deno.env.get("POD_NAME") + " " + who);
});
`;

e2eTest(
  "test kubelet: Deployment → Pods as processes behind a Service, tokens, volumes",
  async (cp, t) => {
    const ns = await cp.createNamespace("kubelet");
    const kubectl = async (...args: string[]) => {
      const r = await cp.kubectl(...args);
      assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
      return r.stdout;
    };
    /** The Secret the Pods mount, holding `greeting`. */
    const greeting = (text: string) =>
      cp.apply({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "greeting", namespace: ns },
        stringData: { greeting: text },
      } as never);
    await greeting("hello");
    await cp.apply({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "echo", namespace: ns },
    } as never);
    await cp.apply({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "echo", namespace: ns },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "echo" } },
        template: {
          metadata: { labels: { app: "echo" } },
          spec: {
            serviceAccountName: "echo",
            containers: [{
              name: "echo",
              image: IMAGE,
              args: ["eval", SERVER],
              ports: [{ name: "http", containerPort: 8080 }],
              env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
              readinessProbe: { httpGet: { path: "/readyz", port: "http" }, periodSeconds: 5 },
              volumeMounts: [{ name: "config", mountPath: "/config", readOnly: true }],
            }],
            volumes: [{ name: "config", secret: { secretName: "greeting" } }],
          },
        },
      },
    } as never);
    await cp.apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "echo", namespace: ns },
      spec: { selector: { app: "echo" }, ports: [{ port: 80, targetPort: 8080 }] },
    } as never);

    const proxy = (path: string) =>
      cp.kubectl("get", "--raw", `/api/v1/namespaces/${ns}/services/echo:80/proxy${path}`);

    await t.step("the Deployment's Pods run, become Ready and back the Service", async () => {
      await waitFor("2 ready replicas", async () => {
        const d = JSON.parse(await kubectl("get", "deployment", "echo", "-n", ns, "-o", "json"));
        return d.status?.readyReplicas === 2;
      }, { timeoutMs: 90_000 });
      // The EndpointSlice controller follows the Pods' Ready conditions a moment after the
      // Deployment counts them.
      const readyEndpoints = async () => {
        const slices = JSON.parse(
          await kubectl(
            "get",
            "endpointslices",
            "-n",
            ns,
            "-l",
            "kubernetes.io/service-name=echo",
            "-o",
            "json",
          ),
        );
        return slices.items.flatMap((s: { endpoints?: unknown[] }) => s.endpoints ?? [])
          .filter((e: { conditions?: { ready?: boolean } }) => e.conditions?.ready).length;
      };
      await waitFor("2 ready endpoints", async () => await readyEndpoints() === 2, {
        timeoutMs: 30_000,
      });
      assert.equal(await readyEndpoints(), 2);
      const out = await waitFor("the Service answers through the apiserver", async () => {
        const r = await proxy("/");
        return r.code === 0 ? r.stdout : undefined;
      }, { timeoutMs: 30_000 });
      assert.match(out, new RegExp(`^echo-[a-z0-9]+-[a-z0-9]+ system:serviceaccount:${ns}:echo$`));
    });

    await t.step("Secret volumes follow their Secret", async () => {
      assert.equal((await proxy("/secret")).stdout, "hello");
      await greeting("rotated");
      await waitFor("both replicas see the new Secret", async () => {
        const seen = new Set<string>();
        for (let i = 0; i < 8; i++) seen.add((await proxy("/secret")).stdout);
        return seen.size === 1 && seen.has("rotated");
      }, { timeoutMs: 30_000 });
    });

    await t.step("a deleted Pod's process stops and the ReplicaSet replaces it", async () => {
      const pods = JSON.parse(await kubectl("get", "pods", "-n", ns, "-o", "json")).items;
      const victim = pods[0].metadata;
      const pid = Number(pods[0].status.containerStatuses[0].containerID.split("://")[1]);
      await kubectl("delete", "pod", victim.name, "-n", ns, "--wait=true", "--timeout=60s");
      assert.throws(() => Deno.kill(pid, "SIGCONT"), "the pod's process group is gone");
      await waitFor("a replacement is ready", async () => {
        const d = JSON.parse(await kubectl("get", "deployment", "echo", "-n", ns, "-o", "json"));
        const names = JSON.parse(await kubectl("get", "pods", "-n", ns, "-o", "json")).items
          .map((p: { metadata: { name: string } }) => p.metadata.name);
        return d.status?.readyReplicas === 2 && !names.includes(victim.name);
      }, { timeoutMs: 60_000 });
    });

    await t.step("Jobs run to completion: restartPolicy Never is honoured", async () => {
      const job = (name: string, code: number) => ({
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name, namespace: ns },
        spec: {
          backoffLimit: 0,
          activeDeadlineSeconds: 120,
          template: {
            spec: {
              restartPolicy: "Never",
              serviceAccountName: "echo",
              containers: [{
                name: "main",
                image: IMAGE,
                args: ["eval", `console.log("job ${name}"); Deno.exit(${code})`],
              }],
            },
          },
        },
      });
      await cp.apply(job("ok", 0) as never);
      await cp.apply(job("bad", 3) as never);
      const jobCond = (j: { status?: { conditions?: Array<{ type: string; status: string }> } }) =>
        (j.status?.conditions ?? []).filter((c) => c.status === "True").map((c) => c.type);
      const getJob = async (name: string) =>
        JSON.parse(await kubectl("get", "job", name, "-n", ns, "-o", "json"));
      const ok = await waitFor("Job ok Complete", async () => {
        const j = await getJob("ok");
        return jobCond(j).includes("Complete") ? j : undefined;
      }, { timeoutMs: 90_000 });
      assert.equal(ok.status.succeeded, 1);
      const bad = await waitFor("Job bad Failed", async () => {
        const j = await getJob("bad");
        return jobCond(j).includes("Failed") ? j : undefined;
      }, { timeoutMs: 90_000 });
      assert.equal(bad.status.failed, 1);
      const podOf = async (name: string) =>
        JSON.parse(
          await kubectl("get", "pods", "-n", ns, "-l", `job-name=${name}`, "-o", "json"),
        ).items;
      const [okPod] = await podOf("ok");
      assert.equal(okPod.status.phase, "Succeeded");
      const okState = okPod.status.containerStatuses[0];
      assert.equal(okState.state.terminated.exitCode, 0);
      assert.equal(okState.state.terminated.reason, "Completed");
      assert.equal(okState.restartCount, 0);
      assert.match(await cp.kubelet!.podLog(ns, okPod.metadata.name), /job ok/);
      const badPods = await podOf("bad");
      assert.equal(badPods.length, 1, "backoffLimit 0: one Pod");
      assert.equal(badPods[0].status.phase, "Failed");
      assert.equal(badPods[0].status.containerStatuses[0].state.terminated.exitCode, 3);
      assert.equal(badPods[0].status.containerStatuses[0].restartCount, 0, "not restarted");
      // Deleting the Jobs garbage-collects their (completed) Pods.
      await kubectl("delete", "job", "ok", "bad", "-n", ns, "--cascade=background", "--wait");
      await waitFor("the Jobs' Pods are gone", async () => {
        const left = JSON.parse(
          await kubectl("get", "pods", "-n", ns, "-l", "job-name", "-o", "json"),
        ).items;
        return left.length === 0;
      }, { timeoutMs: 60_000 });
    });
  },
  { name: "kubelet", kubelet: { images: { [IMAGE]: { entrypoint: [Deno.execPath()] } } } },
);
