/**
 * The ConversionWebhookServer policy: what a server's author may choose for the Deployment the
 * manager creates with its own rights (docs/security.md#conversionwebhookserver-admission-policy).
 *
 * Creating a server is a privileged act: the manager runs the pod it describes. The policy bounds
 * the fields that decide what that pod is and can reach — the namespace of its children, the image,
 * the ServiceAccount (whose token the pod gets), the types of `extraVolumes`, and the environment
 * variables the manager sets itself. The validating webhook denies a write that breaks it, with a
 * message naming the field and the allowed set, and the server reconcile checks it again before it
 * renders anything, so a server stored while the webhook was off or differently configured is not
 * deployed either.
 *
 * A dimension with no allowed list (`undefined`) is not restricted: the manager binary restricts
 * only what its flags name; the Helm chart always passes all of them.
 */
import type { ConversionWebhookServer } from "../../api/mod.ts";
import { DEFAULT_WEBHOOK_SERVICE_ACCOUNT } from "../../api/mod.ts";

/** Volume types `extraVolumes` may use unless the admin widens the list. */
export const SAFE_VOLUME_TYPES: readonly string[] = [
  "secret",
  "configMap",
  "projected",
  "emptyDir",
];

/** The env variables the manager sets on every webhook-server container (the pod's identity). */
export const MANAGED_ENV_NAMES: readonly string[] = ["POD_NAME", "POD_NAMESPACE", "POD_UID"];

/** The volume names the manager's own volumes use. */
export const RESERVED_VOLUME_NAMES: readonly string[] = ["tls", "tmp"];

/** What a server may choose. */
export interface WebhookServerPolicy {
  /** Namespaces its children may go to (`spec.namespace`, default the operator's); undefined ⇒ any. */
  namespaces?: readonly string[];
  /**
   * Allowed `spec.image.repository` values: an entry matches exactly, or, ending in `/`, as a
   * prefix. undefined ⇒ any. A server without a repository uses the manager's default image.
   */
  imageRepositories?: readonly string[];
  /** Allowed `spec.serviceAccountName` values; undefined ⇒ any. */
  serviceAccounts?: readonly string[];
  /** Allowed volume source types of `spec.extraVolumes`; default {@link SAFE_VOLUME_TYPES}. */
  volumeTypes?: readonly string[];
}

type Spec = ConversionWebhookServer["spec"];

const list = (items: readonly string[]) =>
  items.length === 0 ? "none" : items.map((s) => JSON.stringify(s)).join(", ");

/** Whether `repository` is allowed by `entries` (exact, or a prefix entry ending in `/`). */
export function imageRepositoryAllowed(repository: string, entries: readonly string[]): boolean {
  return entries.some((e) =>
    e.endsWith("/") ? repository.startsWith(e) && repository.length > e.length : repository === e
  );
}

/** The volume source types a volume names (every key besides `name`). */
export function volumeTypesOf(volume: Record<string, unknown>): string[] {
  return Object.keys(volume).filter((k) => k !== "name");
}

/**
 * Every way `spec` breaks `policy`, one message per field, each naming the field and the allowed
 * set; empty when it complies. `operatorNamespace` is where children go without `spec.namespace`.
 */
export function webhookServerPolicyViolations(
  spec: Spec,
  policy: WebhookServerPolicy,
  operatorNamespace: string,
): string[] {
  const out: string[] = [];
  if (policy.namespaces !== undefined) {
    const ns = spec.namespace || operatorNamespace;
    if (!policy.namespaces.includes(ns)) {
      out.push(
        `spec.namespace: ${JSON.stringify(ns)}${
          spec.namespace ? "" : " (the operator namespace, the default)"
        } is not a namespace webhook servers may use (allowed: ${list(policy.namespaces)})`,
      );
    }
  }
  const repo = spec.image?.repository;
  if (policy.imageRepositories !== undefined && repo) {
    if (!imageRepositoryAllowed(repo, policy.imageRepositories)) {
      out.push(
        `spec.image.repository: ${
          JSON.stringify(repo)
        } is not an allowed webhook-server image repository (allowed: ${
          list(policy.imageRepositories)
        }; an entry ending in "/" allows every repository under it)`,
      );
    }
  }
  if (policy.serviceAccounts !== undefined) {
    const sa = spec.serviceAccountName || DEFAULT_WEBHOOK_SERVICE_ACCOUNT;
    if (!policy.serviceAccounts.includes(sa)) {
      out.push(
        `spec.serviceAccountName: ${
          JSON.stringify(sa)
        } is not an allowed webhook-server ServiceAccount (allowed: ${
          list(policy.serviceAccounts)
        })`,
      );
    }
  }
  const types = policy.volumeTypes ?? SAFE_VOLUME_TYPES;
  (spec.extraVolumes ?? []).forEach((v, i) => {
    const field = `spec.extraVolumes[${i}]`;
    if (RESERVED_VOLUME_NAMES.includes(v.name)) {
      out.push(
        `${field}.name: ${JSON.stringify(v.name)} is the operator's own volume (reserved: ${
          list(RESERVED_VOLUME_NAMES)
        })`,
      );
    }
    const used = volumeTypesOf(v);
    if (used.length === 0) {
      out.push(`${field}: names no volume type (allowed: ${list(types)})`);
    }
    for (const t of used.filter((t) => !types.includes(t))) {
      out.push(
        `${field}.${t}: volume type ${
          JSON.stringify(t)
        } is not allowed for webhook servers (allowed: ${list(types)})`,
      );
    }
  });
  (spec.extraEnv ?? []).forEach((e, i) => {
    if (MANAGED_ENV_NAMES.includes(e.name)) {
      out.push(
        `spec.extraEnv[${i}].name: ${
          JSON.stringify(e.name)
        } is set by the operator and cannot be overridden (managed: ${list(MANAGED_ENV_NAMES)})`,
      );
    }
  });
  return out;
}
