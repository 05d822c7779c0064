/**
 * A ValidatingAdmissionPolicy (and its binding) that refuses updates of a resource: how the convctl
 * e2e tests make the apiserver turn a write down (a patch of `retarget`, a rewrite of
 * `migrate-storage`, the storage-version-migrator controller's apply).
 */
import type * as k8s from "@kubernetes/client-node";
import type { KubeClient, ResourceRef } from "../../src/kube/mod.ts";
import { type ControlPlane, waitFor } from "../support/control_plane.ts";

/** The message of every refusal. */
export const REFUSED = "refused by the test policy";

export interface Refusal {
  /** Name of the policy and of its binding. */
  policy: string;
  group: string;
  /** The plural of the refused resource. */
  resource: string;
  /** CEL over `object`: false refuses the update (e.g. `object.metadata.name != 'x'`). */
  expression: string;
  /** An object the policy refuses: a dry-run update of it tells when the policy is in force. */
  probe: { ref: ResourceRef; name: string };
}

const BINDINGS: ResourceRef = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  plural: "validatingadmissionpolicybindings",
};

async function probeRefused(client: KubeClient, probe: Refusal["probe"]): Promise<boolean> {
  try {
    await client.patch(probe.ref, probe.name, { metadata: { labels: { probe: "x" } } }, {
      type: "merge",
      dryRun: true,
    });
    return false;
  } catch (e) {
    return String(e).includes(REFUSED);
  }
}

/** Installs the policy and resolves once it is in force. */
export async function refuseUpdates(
  cp: ControlPlane,
  client: KubeClient,
  r: Refusal,
): Promise<void> {
  await cp.apply({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: r.policy },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [{
          apiGroups: [r.group],
          apiVersions: ["*"],
          operations: ["UPDATE"],
          resources: [r.resource],
        }],
      },
      validations: [{ expression: r.expression, message: REFUSED }],
    },
  } as k8s.KubernetesObject);
  await cp.apply({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: r.policy },
    spec: { policyName: r.policy, validationActions: ["Deny"] },
  } as k8s.KubernetesObject);
  await waitFor("the admission policy refuses updates", () => probeRefused(client, r.probe));
}

/** Removes the binding and resolves once updates go through again. */
export async function allowUpdates(client: KubeClient, r: Refusal): Promise<void> {
  await client.delete(BINDINGS, r.policy);
  await waitFor(
    "the admission policy lets updates through",
    async () => !(await probeRefused(client, r.probe)),
  );
}
