/**
 * `deno task demo`: the whole product on a local control plane, as real processes.
 *
 * The test harness (tests/support/) provides the cluster: kube-apiserver, etcd and
 * kube-controller-manager built (first run) or reused by hack/testenv.sh, and the test kubelet
 * that runs the webhook-server Pods as real processes on a pod network (which needs root). On it:
 * dco's CRDs, the chart's RBAC (helm template), the manager as a host process with built-in
 * certificates, a ConversionWebhookServer, and one example's CRD + CRDConversionConfig. Then the
 * example's samples are created at their versions and read back at every version through the
 * apiserver, which calls the webhook-server Pods; each read is shown next to what was created and
 * checked against what the offline engine (`convctl convert`) gives.
 *
 * Without `--once` it then keeps running, printing a kubeconfig and commands to try, until Ctrl-C
 * tears everything down. With `--once` it exits: 0 when every read matched.
 */
import type * as k8s from "@kubernetes/client-node";
import {
  type ControlPlane,
  resolveAssets,
  startControlPlane,
  waitFor,
} from "../../tests/support/control_plane.ts";
import {
  admissionCertificate,
  applyChartRBAC,
  findCondition as cond,
  installDcoCRDs,
  type Obj,
  startManager,
  tryGetJSON,
  WEBHOOK_SERVER_SA,
  webhookServer,
  webhookServerKubelet,
  writeObjectFile,
} from "../../tests/support/dco_stack.ts";
import type { RoleProcess } from "../../tests/support/role_process.ts";
import { toYaml } from "../../src/cli/output.ts";
import { convertObject, jsonEqual, type JsonObject } from "../../src/engine/mod.ts";
import { type Example, loadExample } from "./examples.ts";
import { beforeAfter, bold, cyan, dim, green, heading, red, say, yellow } from "./view.ts";

const OPERATOR_NS = "dco-system";
const OBJECTS_NS = "demo";
const CWS = "dco";
const IMAGE = "dco.local/webhook-server:demo";
const CONFIG_API = "terasky.com";

export interface LiveOptions {
  example: string;
  once: boolean;
}

class DemoError extends Error {}

let stepNo = 0;
const STEPS = 8;
function step(text: string): void {
  stepNo++;
  say(`${cyan(`[${stepNo}/${STEPS}]`)} ${text}`);
}

/** Why the live demo cannot run here, or undefined when it can. */
function notRunnable(ex: Example): string | undefined {
  if (ex.config.kind === "XRDConversionConfig") {
    return `example ${ex.name} targets a Crossplane XRD (${ex.analysis.target}). A live run needs ` +
      "Crossplane to render the XRD into a CRD and copy the conversion into it; the local " +
      "control plane has no Crossplane. Run the story offline:\n" +
      `  deno task demo --offline --example ${ex.name}\n` +
      "or a CRD story live, e.g. `deno task demo --example annotation-stash`.";
  }
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) {
    return "the live demo runs the webhook-server Pods as real processes on a local pod network " +
      "(network namespaces, a bridge and veth pairs: see docs/testing.md), which needs root on " +
      `Linux; this process is ${
        Deno.build.os === "linux" ? `uid ${Deno.uid()}` : Deno.build.os
      }. Run it as root (e.g. \`sudo -E env PATH=$PATH deno task demo\`), or see the ` +
      "conversion engine over every example without a cluster:\n  deno task demo --offline";
  }
  return undefined;
}

export async function runLive(opts: LiveOptions): Promise<number> {
  const ex = await loadExample(opts.example);
  const why = notRunnable(ex);
  if (why !== undefined) {
    console.error(`${red("error:")} cannot run the live demo: ${why}`);
    return 2;
  }
  if (ex.problems.length > 0) {
    console.error(red(`example ${ex.name} does not validate:\n  ${ex.problems.join("\n  ")}`));
    return 1;
  }

  say(bold(`dco live demo: example ${ex.name} on a local control plane`));
  say(dim(`(${ex.dir}README.md tells the story; Ctrl-C tears everything down)`));
  say();

  let manager: RoleProcess | undefined;
  let cp: ControlPlane | undefined;
  // Registered before the control plane's own handler (which kills the cluster and exits): the
  // manager is our child, not the harness's.
  const stopManager = () => {
    try {
      manager?.child.kill("SIGKILL");
    } catch {
      // already exited
    }
  };
  const onSignal = () => {
    say();
    say(dim("tearing down: manager, webhook-server Pods, control plane, temp files"));
    stopManager();
    // Without a control plane yet, the harness' handler is not installed: exit here.
    if (cp === undefined) Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  globalThis.addEventListener("unload", stopManager);
  try {
    step(
      "control-plane binaries: kube-apiserver, etcd, kube-controller-manager, kubectl, helm " +
        dim("(built by hack/testenv.sh on the first run, ~20 min on 2 cores, progress below)"),
    );
    const t0 = Date.now();
    const assets = await resolveAssets();
    if (assets.helm === undefined) {
      throw new DemoError("helm is not available (hack/testenv.sh builds it; or TEST_ASSET_HELM)");
    }
    say(dim(`      ready in ${secs(t0)} (${assets.kubeApiServer.replace(/\/[^/]*$/, "")})`));

    step("control plane: etcd, kube-apiserver, kube-controller-manager, test kubelet");
    const t1 = Date.now();
    cp = await startControlPlane({
      name: "demo",
      kubelet: webhookServerKubelet(IMAGE),
    });
    say(dim(`      ${cp.server} up in ${secs(t1)}`));

    step("dco's CRDs and the chart's ServiceAccounts and RBAC");
    await installDcoCRDs(cp);
    await cp.apply(namespace(OPERATOR_NS));
    await cp.apply(namespace(OBJECTS_NS));
    await applyChartRBAC(cp, OPERATOR_NS);

    step("the manager (a host process, built-in certificate mode)");
    manager = await startDemoManager(cp);

    step(`example ${bold(ex.name)}: its CRD, a ConversionWebhookServer and the config`);
    const crd = ex.schema.raw as unknown as k8s.KubernetesObject;
    await cp.apply(crd);
    await cp.waitForCRD(ex.analysis.target);
    await cp.apply(webhookServer(CWS, {
      default: true,
      replicas: 1,
      serviceAccountName: WEBHOOK_SERVER_SA,
      rollout: { preStopSleepSeconds: 1, terminationGracePeriodSeconds: 10 },
    }));
    await cp.apply(ex.config.config as unknown as k8s.KubernetesObject);
    const m = manager;
    const diagnose = async (e: unknown) =>
      new DemoError(
        `${(e as Error).message}\n--- manager (last lines) ---\n${
          m.output().split("\n").slice(-30).join("\n")
        }\n${await cp!.logTail(20)}`,
      );

    step("waiting for the webhook-server Pod and the config to be Applied");
    const t2 = Date.now();
    await waitFor("the ConversionWebhookServer to be Available", async () => {
      const s = await tryGetJSON(cp!, `conversionwebhookservers.${CONFIG_API}`, CWS);
      return (s?.status?.readyReplicas ?? 0) >= 1 && cond(s, "Available")?.status === "True";
    }, { timeoutMs: 180_000 }).catch(async (e) => {
      throw await diagnose(e);
    });
    const configResource = `${ex.config.kind.toLowerCase()}s.${CONFIG_API}`;
    await waitFor(`${ex.config.kind} ${ex.config.name} to be Applied`, async () => {
      const c = await tryGetJSON(cp!, configResource, ex.config.name);
      return c?.status?.phase === "Applied";
    }, { timeoutMs: 120_000 }).catch(async (e) => {
      throw await diagnose(e);
    });
    say(dim(`      ready in ${secs(t2)}`));

    step(`creating the samples at their versions, reading each at every version`);
    const ok = await showObjects(cp, ex);

    step("the config's and the server's status");
    await showStatus(cp, configResource, ex.config.name);

    if (!ok) {
      say(red("FAILED: a read through the apiserver differs from the offline engine (above)"));
      return 1;
    }
    say(green(
      `✓ every sample read at every version through the apiserver matches \`convctl convert\``,
    ));
    if (opts.once) return 0;

    tryThis(cp, ex, assets.kubectl, configResource);
    await new Promise(() => {}); // until Ctrl-C (the handlers exit)
    return 0;
  } catch (e) {
    if (!(e instanceof DemoError) && !(e instanceof Error)) throw e;
    console.error(red(`error: ${e.message}`));
    return 1;
  } finally {
    await manager?.[Symbol.asyncDispose]();
    await cp?.dispose();
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
  }
}

function secs(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

function namespace(name: string): k8s.KubernetesObject {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name } } as k8s.KubernetesObject;
}

/** The manager with built-in certificates; its admission listener gets a demo CA's pair. */
async function startDemoManager(cp: ControlPlane): Promise<RoleProcess> {
  // The admission listener's certificate (the webhook servers' come from the manager's own CA).
  const { certDir } = await admissionCertificate(cp, "dco-demo-ca", "manager-tls");
  return startManager(cp, {
    certDir,
    namespace: OPERATOR_NS,
    webhookServerImage: IMAGE,
    certificateMode: "builtin",
    features: { xrd: false },
  });
}

/** What a reader cares about in an object: no server-set bookkeeping. */
function readable(obj: Obj): JsonObject {
  const meta = obj.metadata ?? {};
  const keep: Obj = { name: meta.name };
  if (meta.namespace !== undefined) keep.namespace = meta.namespace;
  for (const k of ["labels", "annotations"]) {
    const m = Object.fromEntries(
      Object.entries(meta[k] ?? {}).filter(([key]) => !key.startsWith("kubectl.kubernetes.io/")),
    );
    if (Object.keys(m).length > 0) keep[k] = m;
  }
  const out: Obj = { apiVersion: obj.apiVersion, kind: obj.kind, metadata: keep };
  if (obj.spec !== undefined) out.spec = obj.spec;
  if (obj.status !== undefined) out.status = obj.status;
  return out;
}

/** The parts compared with the offline engine: spec, labels and annotations. */
function comparable(obj: Obj): JsonObject {
  const r = readable(obj) as Obj;
  return {
    spec: r.spec ?? null,
    labels: r.metadata.labels ?? {},
    annotations: r.metadata.annotations ?? {},
  };
}

/**
 * Creates every sample (in the demo namespace, at its own version) and reads it back at every
 * served version. The apiserver stores at the hub (the storage version), so each read is
 * sample → hub → target; the offline engine's same two steps are the expected result.
 */
async function showObjects(cp: ControlPlane, ex: Example): Promise<boolean> {
  const { group, hubVersion } = ex.analysis;
  const plural = (ex.schema.raw.spec as Obj).names.plural as string;
  let ok = true;
  for (const sample of ex.samples) {
    const obj = structuredClone(sample.object) as Obj;
    obj.metadata = { ...obj.metadata, namespace: OBJECTS_NS };
    const created = await cp.kubectl("create", "-f", await writeObjectFile(cp, obj));
    if (created.code !== 0) throw new DemoError(`kubectl create ${sample.name}: ${created.stderr}`);
    const name = obj.metadata.name as string;
    const stored = convertObject(ex.router, obj, `${group}/${hubVersion}`);
    say();
    say(heading(`${sample.name}: ${plural}/${name}, created at ${sample.version}`));
    const read = (version: string) =>
      waitFor(
        `${name} at ${version}`,
        () => tryGetJSON(cp, `${plural}.${version}.${group}`, name, "-n", OBJECTS_NS),
        {
          timeoutMs: 30_000,
        },
      );
    const check = (version: string, live: Obj, what: string) => {
      const expected = convertObject(ex.router, stored, `${group}/${version}`);
      if (jsonEqual(comparable(live), comparable(expected))) {
        say(`  ${what}: ${green("✓ matches convctl convert")}`);
        return;
      }
      ok = false;
      say(`  ${what}: ${red("✗ differs from convctl convert, which gives:")}`);
      say(toYaml(comparable(expected)).replace(/^/gm, "      "));
      say(dim("    the apiserver returned:"));
      say(toYaml(comparable(live)).replace(/^/gm, "      "));
    };
    // What the apiserver kept (e.g. status is dropped on create when it is a subresource).
    const own = await read(sample.version);
    check(sample.version, own, `read back at ${sample.version}`);
    for (const version of ex.served.filter((v) => v !== sample.version)) {
      const live = await read(version);
      say();
      say(beforeAfter(
        dim(`as created (${sample.version})`),
        toYaml(readable(own)),
        dim(`read at ${version}${version === hubVersion ? " (the hub: stored)" : ""}`),
        toYaml(readable(live)),
      ));
      check(version, live, `read at ${version}`);
    }
  }
  say();
  return ok;
}

async function showStatus(cp: ControlPlane, resource: string, name: string): Promise<void> {
  const c = await tryGetJSON(cp, resource, name);
  const s = await tryGetJSON(cp, `conversionwebhookservers.${CONFIG_API}`, CWS);
  const conditions = (o: Obj) => {
    for (const x of o?.status?.conditions ?? []) {
      const mark = x.status === "True" ? green("True ") : yellow(String(x.status).padEnd(5));
      say(
        `    ${String(x.type).padEnd(22)} ${mark} ${x.reason ?? ""}${
          dim(x.message ? `: ${x.message}` : "")
        }`,
      );
    }
  };
  say(
    `  ${resource}/${name}: phase ${bold(c?.status?.phase ?? "?")}` +
      (c?.status?.webhookURL ? dim(`  ${c.status.webhookURL}`) : ""),
  );
  conditions(c);
  say(
    `  conversionwebhookservers/${CWS}: ${s?.status?.readyReplicas ?? 0} ready` +
      (s?.status?.endpoint ? dim(`  ${s.status.endpoint}`) : ""),
  );
  conditions(s);
  say();
}

function tryThis(cp: ControlPlane, ex: Example, kubectl: string, configResource: string): void {
  const { group, hubVersion, target } = ex.analysis;
  const plural = (ex.schema.raw.spec as Obj).names.plural as string;
  const spoke = ex.served.find((v) => v !== hubVersion) ?? hubVersion;
  say(heading("the cluster keeps running: try it"));
  say(`  export KUBECONFIG=${cp.kubeconfigPath}`);
  say(`  alias kubectl=${kubectl}`);
  say();
  say(dim("  # the objects at each version (the apiserver calls the webhook-server Pod)"));
  for (const v of ex.served) say(`  kubectl get ${plural}.${v}.${group} -n ${OBJECTS_NS} -o yaml`);
  say(dim(`  # create one at ${spoke} and read it at ${hubVersion}`));
  say(`  kubectl create -n ${OBJECTS_NS} -f ${ex.dir}samples/<file>   # or your own`);
  say(dim("  # the config, its phase and conditions; edit it and watch them react"));
  say(`  kubectl get ${configResource} ${ex.config.name} -o yaml`);
  say(`  kubectl edit ${configResource} ${ex.config.name}`);
  say(`  kubectl get ${configResource} -w`);
  say(dim("  # add a version to the CRD (copy a version's entry, rename it, served: true): the"));
  say(dim("  # config no longer covers the schema and reports it; add a spoke for it to recover"));
  say(`  kubectl edit crd ${target}`);
  say(dim("  # the webhook-server Pods, their Service and EndpointSlices"));
  say(`  kubectl get pods,svc,endpointslices -n ${OPERATOR_NS}`);
  say();
  say(dim("Ctrl-C stops the manager, the Pods and the control plane and removes their files."));
}
