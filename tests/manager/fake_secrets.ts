/** Shared fakes of the certificate tests: an in-memory Secret store and a fixed epoch. */
import type { KubeObject } from "../../src/kube/mod.ts";
import type { SecretStore } from "../../src/manager/builtin_certs.ts";

/** An in-memory Secret store with resourceVersions, AlreadyExists and conflicts. */
export class FakeSecretStore implements SecretStore {
  readonly objects = new Map<string, KubeObject>();
  readonly writes: string[] = [];
  #rv = 0;

  static key(ns: string, name: string): string {
    return `${ns}/${name}`;
  }
  get(namespace: string, name: string): Promise<KubeObject | undefined> {
    const o = this.objects.get(FakeSecretStore.key(namespace, name));
    return Promise.resolve(o === undefined ? undefined : structuredClone(o));
  }
  create(namespace: string, secret: KubeObject): Promise<KubeObject> {
    const k = FakeSecretStore.key(namespace, secret.metadata.name ?? "");
    if (this.objects.has(k)) return Promise.reject(new AlreadyExists(k));
    const stored = structuredClone(secret);
    stored.metadata.resourceVersion = String(++this.#rv);
    this.objects.set(k, stored);
    this.writes.push(`create ${k}`);
    return Promise.resolve(structuredClone(stored));
  }
  update(namespace: string, secret: KubeObject): Promise<KubeObject> {
    const k = FakeSecretStore.key(namespace, secret.metadata.name ?? "");
    const cur = this.objects.get(k);
    if (cur === undefined) return Promise.reject(new Error(`not found: ${k}`));
    if (cur.metadata.resourceVersion !== secret.metadata.resourceVersion) {
      return Promise.reject(new Error(`conflict: ${k}`));
    }
    const stored = structuredClone(secret);
    stored.metadata.resourceVersion = String(++this.#rv);
    this.objects.set(k, stored);
    this.writes.push(`update ${k}`);
    return Promise.resolve(structuredClone(stored));
  }
}

export class AlreadyExists extends Error {}

/** Whole seconds: X.509 times have second precision. */
export const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

export const OWNER = {
  apiVersion: "terasky.com/v1alpha1",
  kind: "ConversionWebhookServer",
  name: "alpha",
  uid: "uid-1",
  controller: true as const,
  blockOwnerDeletion: true as const,
};
