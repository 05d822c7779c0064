/**
 * The Secret store the built-in issuer and the admission certificate keeper write through, backed
 * by the client (read through, never cached: a write must build on the previous write).
 */
import { getOrUndefined, type KubeClient, type KubeObject } from "../kube/mod.ts";
import type { SecretStore } from "./builtin_certs.ts";
import { SECRETS } from "../kube/resources.ts";

/** {@link SecretStore} over the client. */
export function clientSecretStore(client: KubeClient): SecretStore {
  return {
    get: (namespace: string, name: string) => getOrUndefined(client.get(SECRETS(namespace), name)),
    create: (namespace: string, secret: KubeObject) => client.create(SECRETS(namespace), secret),
    update: (namespace: string, secret: KubeObject) => client.update(SECRETS(namespace), secret),
  };
}
