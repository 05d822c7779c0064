/**
 * The Secret store the built-in issuer and the admission certificate keeper write through, backed
 * by the client (read through, never cached: a write must build on the previous write).
 */
import { isNotFound, type KubeClient, type KubeObject } from "../kube/mod.ts";
import type { SecretStore } from "./builtin_certs.ts";
import { SECRETS } from "../kube/resources.ts";

/** `read()`, or undefined when it fails with NotFound. */
export async function undefinedIfNotFound<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** {@link SecretStore} over the client. */
export function clientSecretStore(client: KubeClient): SecretStore {
  return {
    get: (namespace: string, name: string) =>
      undefinedIfNotFound(() => client.get(SECRETS(namespace), name)),
    create: (namespace: string, secret: KubeObject) => client.create(SECRETS(namespace), secret),
    update: (namespace: string, secret: KubeObject) => client.update(SECRETS(namespace), secret),
  };
}
