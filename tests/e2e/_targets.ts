/**
 * The two kinds of conversion target the e2e suites run over, behind one adapter: a CRD (with a
 * CRDConversionConfig), or a Crossplane XRD (with an XRDConversionConfig) whose generated CRD the
 * test's Crossplane stand-in (`_crossplane.ts`) renders and keeps in step. A suite writes its flow
 * once against {@link TargetKind} and runs it for {@link crdTarget} and {@link xrdTarget}; what
 * only one kind has stays a step of its own, guarded by `target.kind`.
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import type { ControlPlane } from "../support/control_plane.ts";
import {
  type ChartRBACOptions,
  fieldRenameConfig,
  getJSON,
  type Obj,
  twoVersionCRD,
  twoVersionXRD,
} from "../support/dco_stack.ts";
import { KubeClient, loadKubeconfig } from "../../src/kube/mod.ts";
import { FakeCrossplane, XRD_CRD, XRDS } from "./_crossplane.ts";

/** The annotation naming the config that manages a target. */
export const MANAGED_BY = "conversion.terasky.com/managed-by";
/** The annotation carrying the plan hash a target was patched with. */
export const PLAN_HASH = "conversion.terasky.com/plan-hash";

/** A target's names: it is `<plural>.<group>`, its objects are of `kind`. */
export interface TargetName {
  plural: string;
  kind: string;
}

/** How one kind of target is made, configured and read. */
export interface TargetKind {
  readonly kind: "crd" | "xrd";
  /** The API group of the targets' objects. */
  readonly group: string;
  readonly configKind: "CRDConversionConfig" | "XRDConversionConfig";
  /** The config kind for kubectl, e.g. `crdconversionconfigs.terasky.com`. */
  readonly configResource: string;
  /** The config kind in lower case: its admission path, controller and workqueue name. */
  readonly controller: "crdconversionconfig" | "xrdconversionconfig";
  /** The target kind for kubectl: the CRD, or the XRD at apiextensions.crossplane.io/v2. */
  readonly targetResource: string;
  /** CRDs installed beside dco's (the XRD stand-in). */
  readonly extraCRDs: k8s.KubernetesObject[];
  /** How the chart's RBAC is rendered (the XRD grants). */
  readonly rbac: ChartRBACOptions;
  /** The manager's feature flags. */
  readonly features: { xrd: boolean; crd?: boolean };
  /** The names of a target (`widgets`, `Widget`), in this kind's spelling (XRDs: `xwidgets`). */
  named(plural: string, kind: string): TargetName;
  /** The target serving v1 (`size`) and v2 (`capacity`); `extraV1Field` drifts v1's schema. */
  target(name: TargetName, extraV1Field?: string): k8s.KubernetesObject;
  /** A config renaming v1's `spec.size` to v2's `spokePath`. */
  config(name: string, target: string, spokePath: string): k8s.KubernetesObject;
  /** The API path of a watch on target `name` alone. */
  watchPath(name: string): string;
  /** Binds the kind to a control plane (an XRD's starts the Crossplane stand-in). */
  open(cp: ControlPlane): Promise<TargetSession>;
}

/** A {@link TargetKind} on one control plane. */
export interface TargetSession extends AsyncDisposable {
  /** Creates the targets and waits until each one's (generated) CRD serves. */
  create(...names: TargetName[]): Promise<void>;
  /** Target `name` as stored: the CRD or the XRD. */
  read(name: string): Promise<Obj>;
  /** Asserts that target `name` was never patched (no conversion of ours). */
  assertUntouched(name: string): Promise<void>;
  /** Asserts that target `name` (and an XRD's generated CRD) converts through a webhook. */
  assertServing(name: string): Promise<void>;
  /** Asserts that target `name` was reverted: strategy None, none of our annotations. */
  assertReverted(name: string): Promise<void>;
  /** The Crossplane stand-in, for an XRD. */
  readonly crossplane?: FakeCrossplane;
  /** More context for a failure message. */
  diagnostics(): string;
}

const CRDS_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/** CRDs of `group`, configured by CRDConversionConfigs. */
export function crdTarget(group: string): TargetKind {
  const kind: TargetKind = {
    kind: "crd",
    group,
    configKind: "CRDConversionConfig",
    configResource: "crdconversionconfigs.terasky.com",
    controller: "crdconversionconfig",
    targetResource: "crd",
    extraCRDs: [],
    rbac: {},
    features: { xrd: false },
    named: (plural, kind) => ({ plural, kind }),
    target: ({ plural, kind }, extraV1Field) =>
      twoVersionCRD({ group, plural, kind, extraV1Field }),
    config: (name, target, spokePath) =>
      fieldRenameConfig({ kind: "CRDConversionConfig", name, target, spokePath }),
    watchPath: (name) => `${CRDS_PATH}?fieldSelector=metadata.name=${name}`,
    open: (cp) => {
      const read = (name: string) => getJSON(cp, "crd", name);
      return Promise.resolve({
        async create(...names: TargetName[]) {
          for (const n of names) await cp.apply(kind.target(n));
          for (const n of names) await cp.waitForCRD(`${n.plural}.${group}`);
        },
        read,
        async assertUntouched(name: string) {
          assert.equal((await read(name)).spec.conversion?.strategy ?? "None", "None");
        },
        async assertServing(name: string) {
          assert.equal((await read(name)).spec.conversion.strategy, "Webhook");
        },
        async assertReverted(name: string) {
          const crd = await read(name);
          assert.equal(crd.spec.conversion.strategy, "None");
          assert.equal(crd.metadata.annotations?.[MANAGED_BY], undefined);
        },
        diagnostics: () => "",
        async [Symbol.asyncDispose]() {},
      });
    },
  };
  return kind;
}

/**
 * Crossplane XRDs of `group` (modern, Namespaced, v1 referenceable), configured by
 * XRDConversionConfigs; the manager runs with CRD support on too.
 */
export function xrdTarget(group: string): TargetKind {
  const xrds = XRDS();
  const kind: TargetKind = {
    kind: "xrd",
    group,
    configKind: "XRDConversionConfig",
    configResource: "xrdconversionconfigs.terasky.com",
    controller: "xrdconversionconfig",
    targetResource: `${xrds.plural}.${xrds.version}.${xrds.group}`,
    extraCRDs: [XRD_CRD],
    rbac: { crossplane: true },
    features: { xrd: true, crd: true },
    named: (plural, kind) => ({ plural: `x${plural}`, kind: `X${kind}` }),
    target: ({ plural, kind }, extraV1Field) =>
      twoVersionXRD({ group, plural, kind, extraV1Field, referenceable: "v1" }),
    config: (name, target, spokePath) =>
      fieldRenameConfig({ kind: "XRDConversionConfig", name, target, spokePath }),
    watchPath: (name) =>
      `/apis/${xrds.group}/${xrds.version}/${xrds.plural}?fieldSelector=metadata.name=${name}`,
    open: async (cp) => {
      const client = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
      const crossplane = new FakeCrossplane(client);
      const read = (name: string) => getJSON(cp, kind.targetResource, name);
      const generatedStrategy = async (name: string) =>
        (await getJSON(cp, "crd", name)).spec.conversion.strategy;
      return {
        crossplane,
        // Crossplane: the XRDs are Established and their composite CRDs rendered, and each XRD's
        // conversion stanza is copied into its CRD whenever it changes.
        async create(...names: TargetName[]) {
          const full = names.map((n) => `${n.plural}.${group}`);
          for (const n of names) await cp.apply(kind.target(n));
          for (const name of full) {
            await crossplane.establish(name);
            crossplane.render.add(name);
            crossplane.copy.add(name);
          }
          crossplane.start();
          for (const name of full) await cp.waitForCRD(name);
        },
        read,
        async assertUntouched(name: string) {
          const x = await read(name);
          assert.equal(x.spec.conversion, undefined);
          assert.equal(x.metadata.annotations?.[MANAGED_BY], undefined);
          assert.equal(await generatedStrategy(name), "None");
        },
        async assertServing(name: string) {
          assert.equal((await read(name)).spec.conversion.strategy, "Webhook");
          assert.equal(await generatedStrategy(name), "Webhook");
        },
        async assertReverted(name: string) {
          const x = await read(name);
          // The whole stanza goes (Crossplane's v1 schema refuses `strategy: None`).
          assert.equal(x.spec.conversion, undefined);
          assert.equal(x.metadata.annotations?.[MANAGED_BY], undefined);
          assert.equal(x.metadata.annotations?.[PLAN_HASH], undefined);
        },
        diagnostics: () => `--- crossplane ---\n${crossplane.errors.slice(-5).join("\n")}`,
        async [Symbol.asyncDispose]() {
          await crossplane.stop();
          client.close();
        },
      };
    },
  };
  return kind;
}
