// Run by tests/e2e/kube/client_test.ts as a child process under the operator's exact Deno flags:
// loads the connection from the environment (in-cluster or KUBECONFIG), lists and briefly watches
// ConfigMaps, prints one JSON line. Args: <serviceAccountDir or ""> <namespace>.
import { KubeClient } from "../../../../src/kube/mod.ts";

const [saDir, namespace] = Deno.args;
using client = await KubeClient.fromEnvironment({ serviceAccountDir: saDir || undefined });
const ref = { group: "", version: "v1", plural: "configmaps", namespace };
const list = await client.list(ref);
let events = 0;
for await (const _ev of client.watch(ref, { resourceVersion: "0", timeoutSeconds: 1 })) events++;
console.log(JSON.stringify({
  items: list.items.length,
  watchEvents: events,
  source: client.connection.description,
}));
