/**
 * Repro (not a test): a graceful kube-apiserver stop sends HTTP/2 GOAWAY to the k8s client, and
 * Deno 2.9.6's node:http2 (undici 8 inside @kubernetes/client-node 2.0.1 negotiates h2 by default)
 * can kill the whole process: nghttp2 assertion `find_stream_on_goaway_func` or a segfault.
 *
 *   KUBEBUILDER_ASSETS=$(bash hack/testenv.sh) \
 *     deno run -A tests/support/testdata/goaway_repro.ts 12 h2   # crashed in 3 of 7 runs
 *   ... goaway_repro.ts 12 h1                                    # allowH2: false: 0 of 3 runs
 *
 * Each round: start a control plane, 5 parallel lists + a watch, SIGTERM the apiserver (GOAWAY),
 * wait until it is gone, dispose.
 */
import * as k8s from "@kubernetes/client-node";
import { groupAlive, startControlPlane } from "../control_plane.ts";

/** The parts of KubeConfig this repro overrides (internal API of client-node 2.0.1). */
interface DispatcherHooks {
  createDispatcher(cluster: unknown, opts: unknown): unknown;
  createDispatcherOptions(cluster: unknown, opts: unknown): { type: string; connect?: unknown };
}

const rounds = Number(Deno.args[0] ?? 5);
const h1 = Deno.args[1] === "h1";
for (let i = 0; i < rounds; i++) {
  const cp = await startControlPlane({ name: "goaway" });
  if (h1) {
    // Same dispatcher, but HTTP/1.1 only.
    const kc = cp.kubeConfig as unknown as DispatcherHooks;
    const orig = kc.createDispatcher.bind(kc);
    kc.createDispatcher = (cluster, opts) => {
      const d = orig(cluster, opts) as { constructor: new (o: unknown) => unknown } | undefined;
      const o = kc.createDispatcherOptions(cluster, opts);
      return d && o.type === "agent"
        ? new d.constructor({ connect: o.connect, allowH2: false })
        : d;
    };
  }
  const core = cp.api(k8s.CoreV1Api);
  await Promise.all([1, 2, 3, 4, 5].map(() => core.listNamespace()));
  await new k8s.Watch(cp.kubeConfig).watch("/api/v1/namespaces", {}, () => {}, () => {});
  await new Promise((r) => setTimeout(r, 200));
  Deno.kill(-cp.pgids[1], "SIGTERM"); // graceful stop: GOAWAY on every client connection
  while (await groupAlive(cp.pgids[1])) await new Promise((r) => setTimeout(r, 50));
  await cp.dispose();
  console.log("round", i, "ok");
}
