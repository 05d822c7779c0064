/**
 * `manager --check-installation`: the one-shot mode the chart's `helm test` Pod runs. It checks
 * the two services an installation exists for, each by sending it a real review and requiring an
 * answer to that review (same `uid`):
 *
 * 1. the manager's admission webhook: an AdmissionReview (CREATE of an empty CRDConversionConfig,
 *    which validation denies) to the admission Service (`--check-admission-service`, in the
 *    operator namespace);
 * 2. a ConversionWebhookServer's conversion endpoint: a ConversionReview for a target no config
 *    exists for (answered with a Failure) to the server's Service (`--check-webhook-server`,
 *    `<namespace>/<server>`; the Service is `<server>-webhook-server`).
 *
 * Both go through the apiserver's service proxy (`services/<scheme>:<name>:<port>/proxy`), which
 * resolves the Service to a ready endpoint itself — the path the apiserver takes to call these
 * webhooks, without needing cluster DNS or a Service network in the test Pod. The proxy does not
 * verify the serving certificate; the apiserver's own webhook calls do (the e2e tests cover that).
 * The answers' contents are logged, not judged: an allowed or denied admission and a conversion
 * Failure all prove the service answers.
 *
 * Each check is retried every `pollMs` until it passes or `--check-timeout` (a Go duration) runs
 * out ⇒ exit 1 naming what did not answer. Needs `get` on the two Services and `create` on their
 * `services/proxy`: the chart's test ServiceAccount has exactly that.
 */
import { KubeClient } from "../kube/mod.ts";
import { createLogger, formatDuration, type Logger } from "../obs/log.ts";
import { childName } from "./server/names.ts";

/** What one check sends through the service proxy, and the review kind it expects back. */
export interface ServiceProbe {
  /** For messages: `admission webhook` or `conversion webhook`. */
  what: string;
  namespace: string;
  service: string;
  /** The path on the service, after the proxy prefix. */
  path: string;
  review: Record<string, unknown>;
}

export interface InstallCheckDeps {
  /** The Service's first port (the one the webhook configurations and CRDs call). */
  servicePort(namespace: string, service: string): Promise<number>;
  /** POSTs `body` to `path` of the Service through the apiserver's service proxy (https). */
  postThroughProxy(
    namespace: string,
    service: string,
    port: number,
    path: string,
    body: unknown,
  ): Promise<unknown>;
  sleep(ms: number): Promise<void>;
  now(): number;
  logger: Pick<Logger, "info" | "warn" | "error">;
}

export interface InstallCheckOptions {
  timeoutMs: number;
  /** Between two tries of a check; default 2 s. */
  pollMs?: number;
}

/** The probes of an installation: its admission Service and one ConversionWebhookServer's. */
export function installProbes(
  operatorNamespace: string,
  admissionService: string,
  webhookServer: { namespace: string; name: string } | undefined,
  uid: (what: string) => string,
): ServiceProbe[] {
  const probes: ServiceProbe[] = [];
  if (admissionService) {
    probes.push({
      what: "admission webhook",
      namespace: operatorNamespace,
      service: admissionService,
      path: "/validate-terasky-com-v1alpha1-crdconversionconfig",
      review: {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
          uid: uid("admission"),
          kind: { group: "terasky.com", version: "v1alpha1", kind: "CRDConversionConfig" },
          resource: { group: "terasky.com", version: "v1alpha1", resource: "crdconversionconfigs" },
          name: "dco-installation-check",
          operation: "CREATE",
          userInfo: { username: "system:serviceaccount:dco-installation-check" },
          object: {
            apiVersion: "terasky.com/v1alpha1",
            kind: "CRDConversionConfig",
            metadata: { name: "dco-installation-check" },
            spec: {},
          },
          dryRun: true,
        },
      },
    });
  }
  if (webhookServer) {
    probes.push({
      what: "conversion webhook",
      namespace: webhookServer.namespace,
      service: childName(webhookServer.name),
      path: "/convert/installation-check.dco.invalid",
      review: {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "ConversionReview",
        request: { uid: uid("conversion"), desiredAPIVersion: "dco.invalid/v2", objects: [] },
      },
    });
  }
  return probes;
}

/** The `uid` of a review answer, when it is one. */
function answeredUid(answer: unknown): string | undefined {
  if (typeof answer !== "object" || answer === null) return undefined;
  const response = (answer as { response?: unknown }).response;
  if (typeof response !== "object" || response === null) return undefined;
  const uid = (response as { uid?: unknown }).uid;
  return typeof uid === "string" ? uid : undefined;
}

/** What an answer said, for the log: allowed/denied (admission) or the result status. */
function summary(answer: unknown): Record<string, unknown> {
  const r = (answer as { response: Record<string, unknown> }).response;
  const status = r.status ?? r.result;
  return { allowed: r.allowed, status };
}

/** Runs the probes in order; 0 when every one was answered in time, else 1. */
export async function checkInstallation(
  probes: readonly ServiceProbe[],
  deps: InstallCheckDeps,
  opts: InstallCheckOptions,
): Promise<number> {
  const pollMs = opts.pollMs ?? 2_000;
  const deadline = deps.now() + opts.timeoutMs;
  if (probes.length === 0) {
    deps.logger.error(
      "nothing to check: give --check-admission-service and/or --check-webhook-server",
    );
    return 1;
  }
  for (const p of probes) {
    const where = `service ${p.namespace}/${p.service}`;
    const want = answeredUid({ response: p.review.request });
    let lastError = "";
    for (;;) {
      try {
        const port = await deps.servicePort(p.namespace, p.service);
        const answer = await deps.postThroughProxy(p.namespace, p.service, port, p.path, p.review);
        const got = answeredUid(answer);
        if (got === want) {
          deps.logger.info(`${p.what} answers`, {
            service: where,
            path: p.path,
            ...summary(answer),
          });
          break;
        }
        lastError = `answer is not a review for uid ${want}: ${JSON.stringify(answer)}`;
      } catch (e) {
        lastError = (e as Error).message;
      }
      if (deps.now() + pollMs > deadline) {
        deps.logger.error(`${p.what} does not answer`, {
          service: where,
          path: p.path,
          timeout: formatDuration(opts.timeoutMs),
          error: lastError,
        });
        return 1;
      }
      deps.logger.warn(`${p.what} not answering yet; retrying`, {
        service: where,
        error: lastError,
      });
      await deps.sleep(pollMs);
    }
  }
  return 0;
}

/** The dependencies over a real client. */
export function clientInstallCheckDeps(client: KubeClient, logger: Logger): InstallCheckDeps {
  const svcPath = (ns: string, name: string) =>
    `/api/v1/namespaces/${encodeURIComponent(ns)}/services/${encodeURIComponent(name)}`;
  return {
    async servicePort(ns, name) {
      const svc = await client.call<{ spec?: { ports?: Array<{ port?: number }> } }>(
        "GET",
        svcPath(ns, name),
      );
      const port = svc.spec?.ports?.[0]?.port;
      if (typeof port !== "number") throw new Error(`service ${ns}/${name} has no port`);
      return port;
    },
    postThroughProxy(ns, name, port, path, body) {
      const proxy = `/api/v1/namespaces/${encodeURIComponent(ns)}/services/https:${
        encodeURIComponent(name)
      }:${port}/proxy`;
      return client.call("POST", proxy + path, { body });
    },
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    now: () => Date.now(),
    logger,
  };
}

/** `--check-webhook-server` `<namespace>/<server>`; undefined when empty. */
export function parseWebhookServerRef(
  raw: string,
): { namespace: string; name: string } | undefined {
  if (raw === "") return undefined;
  const [namespace, name, ...rest] = raw.split("/");
  if (!namespace || !name || rest.length > 0) {
    throw new Error(`--check-webhook-server: ${JSON.stringify(raw)} is not <namespace>/<server>`);
  }
  return { namespace, name };
}

/** The mode's entry point: exit code 0 (every service answered) or 1. */
export async function runInstallCheck(
  flags: {
    kubeconfig: string;
    checkAdmissionService: string;
    checkWebhookServer: string;
    checkTimeoutMs: number;
  },
  operatorNamespace: string,
): Promise<number> {
  const logger = createLogger("manager.check");
  let client: KubeClient;
  try {
    client = await KubeClient.fromEnvironment({ kubeconfig: flags.kubeconfig || undefined });
  } catch (e) {
    logger.error("cannot load Kubernetes client configuration", { error: e });
    return 1;
  }
  try {
    const run = crypto.randomUUID();
    const probes = installProbes(
      operatorNamespace,
      flags.checkAdmissionService,
      parseWebhookServerRef(flags.checkWebhookServer),
      (what) => `${run}-${what}`,
    );
    logger.info("checking the installation", {
      services: probes.map((p) => `${p.namespace}/${p.service}`),
      timeout: formatDuration(flags.checkTimeoutMs),
    });
    return await checkInstallation(probes, clientInstallCheckDeps(client, logger), {
      timeoutMs: flags.checkTimeoutMs,
    });
  } catch (e) {
    logger.error("installation check failed", { error: e });
    return 1;
  } finally {
    client.close();
  }
}
