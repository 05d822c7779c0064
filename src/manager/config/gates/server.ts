/**
 * The gates on the serving side: a ConversionWebhookServer resolves for the config, it is ready,
 * a move to another server passes the handover gate, and the server's CA bundle can be read.
 */
import type { ConversionWebhookServer } from "../../../api/mod.ts";
import { resolveServer, type ServerInfo } from "../../../assign/resolve.ts";
import { webhookServiceName } from "../../conversion_patch.ts";
import { HANDOVER_REQUEUE_MS, handoverVerdict } from "../../handover.ts";
import { aggregateServedTargets } from "../../served_targets.ts";
import type { Gate } from "../gate.ts";
import { REQUEUE_WAITING_MS } from "../types.ts";

/** `readyReplicas > 0` and `Available`, `CertificateReady`, `ServiceReady` True. */
export function isServerReady(server: ConversionWebhookServer): boolean {
  const st = server.status;
  if ((st?.readyReplicas ?? 0) <= 0) return false;
  const isTrue = (type: string) =>
    st?.conditions?.some((c) => c.type === type && c.status === "True") ?? false;
  return isTrue("Available") && isTrue("CertificateReady") && isTrue("ServiceReady");
}

/** Namespace the server's children live in. */
export function serverNamespace(server: ConversionWebhookServer, fallback: string): string {
  const ns = server.spec.namespace;
  return ns !== undefined && ns !== "" ? ns : fallback;
}

/**
 * A move: the config was applied, its last applied `webhookURL` is set and does not name the
 * resolved server's Service. Computed before `assignedWebhookServer` is updated.
 */
export function isMove(
  wasApplied: boolean,
  lastURL: string | undefined,
  server: string,
  namespace: string,
): boolean {
  if (!wasApplied || lastURL === undefined || lastURL === "") return false;
  return !lastURL.startsWith(`https://${webhookServiceName(server)}.${namespace}.svc/`);
}

/** Resolves the server (reference, else sharding, else the default); none makes it invalid. */
export const serverResolvedGate: Gate = {
  name: "serverResolved",
  async pass(run) {
    const servers = await run.deps.listServers();
    const infos: ServerInfo[] = servers.map((s) => ({
      name: s.metadata?.name ?? "",
      default: s.spec.default,
      sharding: s.spec.sharding,
    }));
    const resolution = resolveServer(
      { target: run.target, webhookServerRef: run.config.spec.webhookServerRef },
      infos,
    );
    if (!resolution.ok) {
      run.setInvalid(`could not resolve a ConversionWebhookServer: ${resolution.error}`);
      await run.patch();
      return {};
    }
    const serverName = resolution.server;
    const listed = servers.find((s) => s.metadata?.name === serverName);
    // Computed before assignedWebhookServer moves (never from it: a second reconcile would
    // think the move already happened).
    run.move = listed !== undefined &&
      isMove(
        run.wasApplied,
        run.config.status?.webhookURL,
        serverName,
        serverNamespace(listed, run.deps.operatorNamespace),
      );
    run.serverName = serverName;
    run.status.assignedWebhookServer = serverName;
    return undefined;
  },
};

/** Waits until the resolved server is ready; a server that vanished is an error (retried). */
export const serverReadyGate: Gate = {
  name: "serverReady",
  async pass(run) {
    const { serverName } = run;
    const server = await run.deps.getServer(serverName);
    if (server === undefined) {
      throw new Error(`ConversionWebhookServer ${JSON.stringify(serverName)} not found`);
    }
    if (!isServerReady(server)) {
      const message = `ConversionWebhookServer ${
        JSON.stringify(serverName)
      } is not ready (needs readyReplicas > 0 and Available, CertificateReady, ServiceReady)`;
      run.cond({ type: "WebhookServerReady", status: "False", reason: "ServerNotReady", message });
      run.waitOn("ServerNotReady", message);
      await run.patch();
      return { requeueAfter: REQUEUE_WAITING_MS };
    }
    run.cond({
      type: "WebhookServerReady",
      status: "True",
      reason: "ServerReady",
      message: `ConversionWebhookServer ${JSON.stringify(serverName)} is ready`,
    });
    run.server = server;
    run.serverNamespace = serverNamespace(server, run.deps.operatorNamespace);
    return undefined;
  },
};

/**
 * A move waits until the destination's live served-target Leases show that every ready replica
 * serves the target (or, after 30 s of silence, proceeds unverified). Not a move: no-op.
 */
export const handoverGate: Gate = {
  name: "handover",
  async pass(run) {
    if (!run.move) return undefined;
    const { deps, serverName, server } = run;
    const leases = await deps.listServedLeases(serverName, run.serverNamespace);
    const now = deps.now();
    const verdict = handoverVerdict({
      target: run.target,
      server: serverName,
      readyReplicas: server.status?.readyReplicas ?? 0,
      leases: aggregateServedTargets(leases, now),
      // As read at reconcile start: its transition time measures how long the gate is closed.
      condition: run.config.status?.conditions?.find((c) => c.type === "HandoverReady"),
      now,
    });
    run.cond({
      type: "HandoverReady",
      status: verdict.status,
      reason: verdict.reason,
      message: verdict.message,
    });
    if (!verdict.proceed) {
      run.waitOn(verdict.reason, verdict.message);
      await run.patch();
      return { requeueAfter: HANDOVER_REQUEUE_MS };
    }
    deps.log?.("handover approved", {
      target: run.target,
      server: serverName,
      verdict: verdict.reason,
    });
    return undefined;
  },
};

/** The server's CA bundle (`ca.crt`); none yet is an error (retried with backoff). */
export const caBundleGate: Gate = {
  name: "caBundle",
  async pass(run) {
    const namespace = run.serverNamespace;
    const pem = await run.deps.readCABundle(run.serverName, namespace);
    if (pem === undefined || pem === "") {
      throw new Error(
        `no CA bundle in Secret ${namespace}/${run.serverName}-webhook-server-tls: it needs ca.crt ` +
          "(the CA that signed tls.crt; the leaf itself is never trusted, it would break on renewal)",
      );
    }
    run.caBundlePEM = pem;
    return undefined;
  },
};
