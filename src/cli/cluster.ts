/**
 * How a convctl command reaches a cluster: kubectl's kubeconfig resolution (`--kubeconfig`, else
 * the `KUBECONFIG` list merged, else in-cluster, else `~/.kube/config`; `--context` picks a context)
 * through the same REST client as the manager (src/kube), and one-line errors that name the
 * cluster: a bad kubeconfig, an unreachable server, an authentication or RBAC refusal, a missing
 * target. Every live command goes through {@link openCluster} and {@link clusterError}.
 */
import { KubeClient } from "../kube/client.ts";
import { loadConfig } from "../kube/config.ts";
import { KubeApiError, KubeNetworkError } from "../kube/errors.ts";
import { CliError, type FlagSpec, type ParsedFlags } from "./args.ts";

export const CLUSTER_FLAGS: readonly FlagSpec[] = [
  {
    name: "kubeconfig",
    kind: "string",
    value: "FILE",
    help: "kubeconfig file (default: kubectl's)",
  },
  { name: "context", kind: "string", value: "NAME", help: "kubeconfig context (default: current)" },
];

/** A connected cluster and the name errors and reports give it. */
export interface Cluster extends Disposable {
  /** The context name (given, else the kubeconfig's current one), else the server URL. */
  name: string;
  client: KubeClient;
}

/** Where to connect: a kubeconfig file (or kubectl's default search) and a context. */
export interface ClusterTarget {
  kubeconfig?: string;
  context?: string;
  /** What reports call this cluster; defaults to the context, else the server. */
  name?: string;
}

export function clusterTargetOf(flags: ParsedFlags): ClusterTarget {
  return { kubeconfig: flags.string("kubeconfig"), context: flags.string("context") };
}

/** Loads the kubeconfig and makes a client; a configuration mistake is one `CliError` line. */
export async function openCluster(target: ClusterTarget): Promise<Cluster> {
  const label = target.name ?? target.context ?? target.kubeconfig ?? "the current context";
  let connection;
  try {
    connection = await loadConfig({ kubeconfig: target.kubeconfig, context: target.context });
  } catch (e) {
    throw new CliError(`cluster ${label}: ${firstLine(e)}`);
  }
  const client = new KubeClient(connection, { userAgent: "convctl", timeoutMs: 30_000 });
  const name = target.name ?? target.context ?? connection.context ?? connection.server;
  return { name, client, [Symbol.dispose]: () => client.close() };
}

/**
 * The one-line form of a failed request to `cluster`: unreachable, unauthenticated, forbidden
 * (with the verb and resource the apiserver names), not found, or the apiserver's own message.
 */
export function clusterError(cluster: string, e: unknown, doing?: string): CliError {
  const what = doing !== undefined ? `${doing}: ` : "";
  if (e instanceof KubeNetworkError) {
    return new CliError(`cluster ${cluster}: ${what}unreachable: ${firstLine(e)}`);
  }
  if (e instanceof KubeApiError) {
    if (e.status === 401) {
      return new CliError(`cluster ${cluster}: ${what}not authenticated (check the kubeconfig)`);
    }
    if (e.status === 403) return new CliError(`cluster ${cluster}: ${what}forbidden: ${e.message}`);
    if (e.status === 404) return new CliError(`cluster ${cluster}: ${what}not found: ${e.message}`);
    return new CliError(`cluster ${cluster}: ${what}${e.reason}: ${e.message}`);
  }
  if (e instanceof CliError) return e;
  return new CliError(`cluster ${cluster}: ${what}${firstLine(e)}`);
}

function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split("\n")[0];
}
