/**
 * The served-target Lease publisher against a real kube-apiserver: publishing
 * creates `dco-served-<pod>` owned by a real (Pending) Pod, with the instance labels, the holder,
 * the 90 s duration and the encoded set; a changed set is republished (through `notify()` with a
 * live source) with acquireTime kept; the heartbeat renews `renewTime` on its own; an oversize
 * set is written as the truncated marker; a publisher without a pod UID refuses (no Lease, one
 * log line however often it is asked). The manager-side aggregate reads the real objects.
 */
import assert from "node:assert/strict";
import {
  decodeServedTargets,
  SERVED_TARGETS_ANNOTATION,
  SERVED_TARGETS_TRUNCATED_ANNOTATION,
  servedLeaseName,
  servedLeaseSelector,
} from "../../src/api/served_lease.ts";
import { isNotFound, type KubeClient, type KubeObject } from "../../src/kube/mod.ts";
import type { Lease } from "../../src/kube/leader.ts";
import { LEASES } from "../../src/kube/resources.ts";
import { aggregateServedTargets } from "../../src/manager/served_targets.ts";
import type { WebhookLogger } from "../../src/webhook/_log.ts";
import {
  PublisherDisabledError,
  ServedTargetPublisher,
  type ServedTargetPublisherOptions,
} from "../../src/webhook/served_lease.ts";
import { waitFor, withControlPlane } from "../support/control_plane.ts";
import { adminClient } from "./kube/_support.ts";

const PODS = (namespace: string) => ({ group: "", version: "v1", plural: "pods", namespace });

async function createPod(client: KubeClient, namespace: string, name: string): Promise<string> {
  const pod = await client.create(PODS(namespace), {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: { containers: [{ name: "c", image: "registry.invalid/none:1" }] },
  });
  const uid = pod.metadata.uid;
  assert.ok(uid, "the apiserver assigns a uid");
  return uid;
}

function capture(): WebhookLogger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m: string) => void lines.push(`info ${m}`),
    warn: (m: string) => void lines.push(`warn ${m}`),
    error: (m: string) => void lines.push(`error ${m}`),
  };
}

const decoded = (lease: Lease): string[] => {
  const r = decodeServedTargets(lease.metadata.annotations?.[SERVED_TARGETS_ANNOTATION] ?? "");
  assert.ok(r.ok);
  return r.targets;
};

Deno.test(
  "served-target Lease publisher against a real apiserver",
  withControlPlane(async (cp, t) => {
    using client = await adminClient(cp);
    const ns = await cp.createNamespace("served");
    const podName = "ws-default-abc12";
    const podUID = await createPod(client, ns, podName);
    const name = servedLeaseName(podName);
    const base = (extra: Partial<ServedTargetPublisherOptions> = {}) =>
      new ServedTargetPublisher({
        client,
        namespace: ns,
        serverName: "default",
        podName,
        podUID,
        logger: capture(),
        ...extra,
      });

    await t.step("publish creates the Lease owned by the Pod, with the labels", async () => {
      const p = base();
      const r = await p.publish(["b.example.com", "a.example.com", "b.example.com"]);
      assert.equal(r.created, true);
      const lease = await client.get<Lease>(LEASES(ns), name);
      assert.deepEqual(lease.metadata.labels, {
        "conversion.terasky.com/webhook-server": "default",
        "app.kubernetes.io/managed-by": "declarative-conversion-operator",
      });
      const owners = lease.metadata.ownerReferences ?? [];
      assert.equal(owners.length, 1);
      assert.deepEqual(
        { ...owners[0] },
        { apiVersion: "v1", kind: "Pod", name: podName, uid: podUID },
      );
      assert.equal(lease.spec?.holderIdentity, podName);
      assert.equal(lease.spec?.leaseDurationSeconds, 90);
      assert.ok(lease.spec?.acquireTime && lease.spec?.renewTime);
      assert.deepEqual(decoded(lease), ["a.example.com", "b.example.com"]);
      assert.equal(lease.metadata.annotations?.[SERVED_TARGETS_TRUNCATED_ANNOTATION], undefined);
      // The manager's view of the real object.
      const listed = await client.list<Lease>(LEASES(ns), {
        labelSelector: servedLeaseSelector("default"),
      });
      assert.deepEqual(aggregateServedTargets(listed.items, Date.now()), {
        servedTargets: ["a.example.com", "b.example.com"],
        reportingReplicas: 1,
        unreadable: false,
      });
    });

    await t.step("a change is republished through notify(); acquireTime is kept", async () => {
      const before = await client.get<Lease>(LEASES(ns), name);
      let current = ["a.example.com", "b.example.com"];
      const p = base({ targets: () => current, debounceMs: 10, heartbeatMs: 60_000 });
      assert.equal(p.start(), true);
      await waitFor("the start publish", async () => {
        const l = await client.get<Lease>(LEASES(ns), name);
        return l.spec?.renewTime !== before.spec?.renewTime || undefined;
      });
      current = ["a.example.com", "c.example.com"];
      p.notify();
      p.notify(); // coalesced
      const after = await waitFor("the republished set", async () => {
        const l = await client.get<Lease>(LEASES(ns), name);
        return decoded(l).includes("c.example.com") ? l : undefined;
      });
      assert.deepEqual(decoded(after), ["a.example.com", "c.example.com"]);
      assert.equal(after.spec?.acquireTime, before.spec?.acquireTime);
      assert.deepEqual(after.metadata.ownerReferences?.map((o) => o.uid), [podUID]);
      await p.stop();
    });

    await t.step("the heartbeat renews renewTime with an unchanged set", async () => {
      const p = base({ targets: () => ["a.example.com"], heartbeatMs: 300 });
      await p.publish();
      const first = await client.get<Lease>(LEASES(ns), name);
      assert.equal(p.start(), true); // already published: the next write is the heartbeat
      const renewals = new Set<string>();
      await waitFor("two heartbeat renewals", async () => {
        const l = await client.get<Lease>(LEASES(ns), name);
        if (l.spec?.renewTime && l.spec.renewTime !== first.spec?.renewTime) {
          renewals.add(l.spec.renewTime);
        }
        return renewals.size >= 2 || undefined;
      }, { timeoutMs: 15_000, intervalMs: 100 });
      await p.stop();
      const last = await client.get<Lease>(LEASES(ns), name);
      assert.deepEqual(decoded(last), ["a.example.com"]);
      assert.ok(Date.parse(last.spec!.renewTime!) > Date.parse(first.spec!.renewTime!));
    });

    await t.step("an oversize set is written as the truncated marker only", async () => {
      const p = base();
      const huge = Array.from({ length: 12_000 }, () => crypto.randomUUID() + ".x.io");
      const r = await p.publish(huge);
      assert.equal(r.truncated, true);
      const lease = await client.get<Lease>(LEASES(ns), name);
      assert.equal(lease.metadata.annotations?.[SERVED_TARGETS_TRUNCATED_ANNOTATION], "true");
      assert.equal(lease.metadata.annotations?.[SERVED_TARGETS_ANNOTATION], undefined);
      assert.equal(aggregateServedTargets([lease], Date.now()).unreadable, true);
      await p.publish(["a.example.com"]);
      const back = await client.get<Lease>(LEASES(ns), name);
      assert.equal(back.metadata.annotations?.[SERVED_TARGETS_TRUNCATED_ANNOTATION], undefined);
      assert.deepEqual(decoded(back), ["a.example.com"]);
    });

    await t.step("without a pod UID publishing is refused, logged once", async () => {
      const logger = capture();
      const other = "ws-default-nouid";
      const p = base({ podName: other, podUID: undefined, logger, targets: () => ["a"] });
      assert.equal(p.enabled, false);
      await assert.rejects(p.publish(["a"]), PublisherDisabledError);
      assert.equal(p.start(), false);
      assert.equal(p.start(), false);
      assert.equal(await p.publishOrLog(), false);
      p.notify();
      assert.equal(logger.lines.filter((l) => l.includes("disabled")).length, 1);
      await assert.rejects(
        client.get<KubeObject>(LEASES(ns), servedLeaseName(other)),
        (e: unknown) => isNotFound(e),
      );
      await p.stop();
    });
  }),
);
