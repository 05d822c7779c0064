/**
 * The migrate-storage e2e tests' CRD (`things.migrate.dco.test`, versions v1 and v2 with one
 * schema and conversion `None`, so only the stored encoding differs) and etcd read directly.
 */
import assert from "node:assert/strict";
import type { KubeObject } from "../../src/kube/mod.ts";
import type { ControlPlane } from "../support/control_plane.ts";

export const GROUP = "migrate.dco.test";
export const PLURAL = "things";
export const CRD = `${PLURAL}.${GROUP}`;

export const SCHEMA = {
  openAPIV3Schema: {
    type: "object",
    properties: {
      spec: { type: "object", properties: { size: { type: "integer" } } },
    },
  },
};

export function thingsCRD(storage: "v1" | "v2"): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: CRD },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { plural: PLURAL, singular: "thing", kind: "Thing", listKind: "ThingList" },
      conversion: { strategy: "None" },
      versions: ["v1", "v2"].map((name) => ({
        name,
        served: true,
        storage: name === storage,
        schema: SCHEMA,
      })),
    },
  };
}

const b64 = (s: string) => btoa(s);

/** Every key under the things' etcd prefix and the `apiVersion` its stored JSON carries. */
export async function storedVersions(cp: ControlPlane): Promise<Map<string, string>> {
  const prefix = `/registry/${GROUP}/${PLURAL}/`;
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  const res = await fetch(`${cp.etcdURL}/v3/kv/range`, {
    method: "POST",
    body: JSON.stringify({ key: b64(prefix), range_end: b64(end) }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const body = await res.json() as { kvs?: { key: string; value: string }[] };
  const out = new Map<string, string>();
  for (const kv of body.kvs ?? []) {
    const stored = JSON.parse(atob(kv.value)) as { apiVersion: string };
    out.set(atob(kv.key), stored.apiVersion);
  }
  return out;
}

export function countBy(versions: Map<string, string>, keyPart?: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [key, v] of versions) {
    if (keyPart !== undefined && !key.includes(keyPart)) continue;
    counts[v] = (counts[v] ?? 0) + 1;
  }
  return counts;
}

/** Runs `fn` over `items` with `lanes` in flight. */
export async function pool<T>(
  items: readonly T[],
  lanes: number,
  fn: (item: T) => Promise<unknown>,
) {
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}
