/**
 * Playing Crossplane's part in the XRD e2e tests that do not run real Crossplane
 * (`manager_test.ts`, `end_to_end_test.ts` through `_targets.ts`, `convctl_live_diff_test.ts`,
 * `convctl_retarget_test.ts`; `config_deps_contract_test.ts` and `migrate_storage_test.ts` use only
 * the XRD CRD). Real Crossplane v2 runs in `crossplane_real_test.ts` (tests/support/crossplane.ts),
 * which shows what this stand-in relies on: Crossplane copies an XRD's `spec.conversion` into every
 * CRD it generates and renders their versions from the XRD's.
 *
 * Why a stand-in remains: `manager_test.ts` needs states real Crossplane never holds still (an XRD
 * with no generated CRD, a CRD rendered without the stanza, then the copy) and runs without a
 * kubelet; the others stay free of Crossplane's ~14 s start-up and of the crossplane build. What
 * real Crossplane cannot do in any test here: install packages (no registry), so no Composition
 * function runs and no package establisher rewrites an XRD.
 *
 * - `XRD_CRD`: a minimal stand-in of Crossplane's CompositeResourceDefinition CRD
 *   (`testdata/crossplane_xrd_crd.yaml`); `COMPOSITION_CRD`, of its Composition CRD
 *   (`testdata/crossplane_composition_crd.yaml`, for the convctl commands that read Compositions).
 *   Like Crossplane's, the stand-in's v1 schema admits a `spec.conversion` only with
 *   `strategy: Webhook` and a `webhook` (the same CEL rule), so a revert to `None` at v1 is refused
 *   here too.
 * - `FakeCrossplane`: marks XRDs Established, renders the CRDs Crossplane generates from an XRD
 *   (composite, plus the claim CRD when the XRD offers claims, owned by the XRD, versions and
 *   schemas taken from the XRD, `storage` = `referenceable`) and, while asked to, keeps their
 *   `spec.conversion` equal to the XRD's, `None` when the XRD has none (a small background loop).
 *
 * What real Crossplane's generated CRDs contain that these do not: the schema roots it injects
 * (`spec.crossplane.*` — composition ref/selector/revision/update policy, resourceRefs — and
 * `status.conditions` on a modern XR; `spec.compositionRef`, `spec.claimRef`,
 * `spec.writeConnectionSecretToRef`, `status.connectionDetails`, … on a legacy one;
 * `spec.compositeDeletePolicy`/`spec.resourceRef` on a claim), the `crossplane`/`composite`/`claim`
 * categories and printer columns, and the status subresource; nor does the stand-in XRD get
 * Crossplane's status (`controllers`, `Offered`). Only conversion of the XRD's own fields is
 * exercised with it.
 */
import type * as k8s from "@kubernetes/client-node";
import { parse } from "yaml";
import { isNotFound, type KubeClient } from "../../src/kube/mod.ts";
import { jsonEqual, rfc3339 } from "../../src/lib/mod.ts";

export const XRD_CRD = parse(
  Deno.readTextFileSync(new URL("testdata/crossplane_xrd_crd.yaml", import.meta.url)),
) as k8s.KubernetesObject;
/** A minimal stand-in of Crossplane's Composition CRD (`testdata/crossplane_composition_crd.yaml`). */
export const COMPOSITION_CRD = parse(
  Deno.readTextFileSync(new URL("testdata/crossplane_composition_crd.yaml", import.meta.url)),
) as k8s.KubernetesObject;
export const XRDS = (version = "v2") => ({
  group: "apiextensions.crossplane.io",
  version,
  plural: "compositeresourcedefinitions",
});
export const CRDS = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
};

// deno-lint-ignore no-explicit-any
type Obj = any;

/**
 * Plays Crossplane: for every XRD in `render`, creates the CRDs Crossplane generates from it; for
 * every XRD in `copy`, keeps their `spec.conversion` equal to the XRD's.
 */
export class FakeCrossplane {
  readonly render = new Set<string>();
  readonly copy = new Set<string>();
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  errors: string[] = [];

  constructor(private readonly client: KubeClient) {}

  /** Plays Crossplane's XRD controller: Established=True (written at `version`). */
  async establish(name: string, version = "v2"): Promise<void> {
    const now = rfc3339(Date.now());
    await this.client.patch(XRDS(version), name, {
      status: {
        conditions: [{
          type: "Established",
          status: "True",
          reason: "WatchingCompositeResource",
          lastTransitionTime: now,
        }],
      },
    }, { type: "merge", subresource: "status" });
  }

  /** Starts the background loop (once; later calls do nothing). */
  start(): void {
    if (this.#loop) return;
    this.#loop = (async () => {
      while (!this.#stop.signal.aborted) {
        for (const name of new Set([...this.render, ...this.copy])) {
          try {
            await this.sync(name);
          } catch (e) {
            this.errors.push(`${name}: ${e instanceof Error ? e.message : String(e)}`);
          }
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async sync(name: string): Promise<void> {
    const x: Obj = await this.client.get(XRDS(), name);
    const generated: Array<{ names: Obj; scope: string }> = [{
      names: x.spec.names,
      scope: x.spec.scope ?? (x.spec.claimNames ? "Cluster" : "Namespaced"),
    }];
    if (x.spec.claimNames) generated.push({ names: x.spec.claimNames, scope: "Namespaced" });
    const conversion = this.copy.has(name) && x.spec.conversion
      ? x.spec.conversion
      : { strategy: "None" };
    for (const g of generated) {
      const crdName = `${g.names.plural}.${x.spec.group}`;
      let crd: Obj | undefined;
      try {
        crd = await this.client.get(CRDS, crdName);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      if (crd === undefined) {
        await this.client.create(CRDS, {
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          metadata: {
            name: crdName,
            ownerReferences: [{
              apiVersion: "apiextensions.crossplane.io/v1",
              kind: "CompositeResourceDefinition",
              name,
              uid: x.metadata.uid,
              controller: true,
            }],
          },
          spec: {
            group: x.spec.group,
            scope: g.scope,
            names: {
              plural: g.names.plural,
              kind: g.names.kind,
              singular: g.names.kind.toLowerCase(),
              listKind: `${g.names.kind}List`,
            },
            versions: x.spec.versions.map((v: Obj) => ({
              name: v.name,
              served: v.served,
              storage: v.referenceable,
              schema: v.schema,
            })),
            conversion,
          },
        } as never);
      } else if (this.copy.has(name) && !jsonEqual(crd.spec.conversion, conversion)) {
        await this.client.patch(CRDS, crdName, [
          { op: "replace", path: "/spec/conversion", value: conversion },
        ], { type: "json" });
      }
    }
  }
}
