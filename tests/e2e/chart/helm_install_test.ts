/**
 * `helm install` of the chart into a real apiserver. First without workloads: every object the
 * chart renders (and its pre-delete hook Job, by server-side dry run) is accepted. Then with real
 * workloads: the control plane runs kube-controller-manager
 * and the test kubelet (tests/support/kubelet.ts), so the chart's manager Deployment becomes a
 * manager Pod — a real process running `deno run <the manager task's permission flags>
 * src/main/manager.ts` with the chart's args and env, its ServiceAccount token and the chart's
 * RBAC, its readiness probe polled on the chart's probe port — and the chart's default
 * ConversionWebhookServer becomes webhook-server Pods the manager's Deployment made.
 *
 * The images are test names (set through `image.*` values) mapped to entrypoints on this machine
 * whose permission flags are read from the deno.json tasks (`manager`, `webhook-server`), i.e.
 * what the Dockerfile's binaries are compiled with (tests/repo/dockerfile_test.ts).
 *
 * The install uses the chart's defaults (only the images, through `image.tag`, and two rollout
 * speed-ups are set) on a bare cluster: no cert-manager, no Crossplane. The chart detects both
 * absent (`certManager.enabled` and `features.crossplane.enabled` are `auto`), so the manager runs
 * without XRD support and, with `certificates.mode=auto` resolving to the built-in CA, issues the
 * webhook-server certificates and the admission certificate (Secret `<fullname>-webhook-cert`,
 * created by the manager, read through the API, not mounted), and sets the
 * ValidatingWebhookConfiguration's caBundle (rendered without one) — the admission steps below go
 * through that certificate.
 *
 * `helm test` runs the chart's test hook Pod (the manager image, `--check-installation`): it
 * reaches the manager's admission webhook and the default server's conversion endpoint through
 * the apiserver's service proxy, with its own hook ServiceAccount and Roles.
 *
 * Uninstalling follows docs/installation.md: while a config exists `helm uninstall` fails — the
 * chart's pre-delete hook Job (`manager --prepare-uninstall`, run by the test kubelet with
 * restartPolicy Never and kube-controller-manager's job-controller) refuses, names the config, and
 * nothing is deleted; after the config is deleted (break-glass, the target reverts) a plain
 * `helm uninstall --wait` succeeds: the hook deleted the ConversionWebhookServer while the manager
 * and its admission webhook were still up, and nothing of the release is left.
 *
 * Not exercised (the test kubelet does not enforce them): readOnlyRootFilesystem, runAsNonRoot,
 * seccomp, dropped capabilities, resource limits (only DENO_V8_FLAGS, an env var, takes effect),
 * and the liveness probe.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import {
  type ControlPlane,
  e2eTest,
  waitFor,
  withControlPlane,
} from "../../support/control_plane.ts";
import {
  fieldRenameConfig,
  findCondition as cond,
  kubectlFor,
  type Obj,
  twoVersionCRD,
  writeObjectFile,
} from "../../support/dco_stack.ts";
import { CHART, FULLNAME, helm } from "../../support/helm.ts";
import { roleImage } from "../../support/role_image.ts";
import { KUBE_VERSION } from "../../chart/_helm.ts";
import { upgradeCrds } from "../../chart/_upgrade_crds.ts";

const RELEASE = "dco";
const REGISTRY = "dco.test";
const TAG = "helm-e2e";
const MANAGER_IMAGE = `${REGISTRY}/manager:${TAG}`;
const WEBHOOK_SERVER_IMAGE = `${REGISTRY}/webhook-server:${TAG}`;
const CWS = "default";
const GROUP = "helm.dco.test";
const GADGETS = `gadgets.${GROUP}`;

/** The Gadget CRD: v1 (`size`, storage) and v2 (`capacity`). */
const gadgetsCRD = () => twoVersionCRD({ group: GROUP, plural: "gadgets", kind: "Gadget" });

/** A CRDConversionConfig for the Gadget CRD renaming v1's `spec.size` to v2's `spokePath`. */
const gadgetsConfig = (name: string, spokePath: string) =>
  fieldRenameConfig({ kind: "CRDConversionConfig", name, target: GADGETS, spokePath });

e2eTest(
  "chart: helm install runs the manager and the default webhook server; configs convert",
  async (cp: ControlPlane, t) => {
    const ns = await cp.createNamespace("dco-helm");
    const { kubectl, getJSON } = kubectlFor(cp);
    const applyObj = async (obj: unknown): Promise<void> => {
      await kubectl("apply", "-f", await writeObjectFile(cp, obj));
    };
    const helmAt = (...args: string[]) => helm(...args, "--kubeconfig", cp.kubeconfigPath);
    const fail = async (msg: string) => `${msg}\n${await cp.kubelet!.allLogs(40)}`;
    // Each step needs the previous ones: after a failure the rest are skipped, not waited out.
    let broken = false;
    const step = async (name: string, fn: () => Promise<void>) => {
      if (!await t.step({ name, ignore: broken, fn })) broken = true;
    };

    await step(
      "helm install with the defaults on a bare cluster (no admission Secret)",
      async () => {
        const sets: Record<string, string> = {
          "image.registry": REGISTRY,
          "image.manager.repository": "manager",
          "image.webhookServer.repository": "webhook-server",
          "image.tag": TAG,
          // Faster rollouts than the production defaults; the chart passes them into the CWS.
          "conversionWebhookServer.rollout.preStopSleepSeconds": "1",
          "conversionWebhookServer.rollout.terminationGracePeriodSeconds": "35",
        };
        const r = await helmAt(
          "install",
          RELEASE,
          CHART,
          "--namespace",
          ns,
          ...Object.entries(sets).flatMap(([k, v]) => ["--set", `${k}=${v}`]),
        );
        assert.equal(r.code, 0, `helm install:\n${r.stdout}\n${r.stderr}`);
        // NOTES say what the chart detected, and how to check the installation.
        assert.match(
          r.stdout,
          /cert-manager: not used; Crossplane XRD support: off/,
        );
        assert.match(r.stdout, new RegExp(`helm test ${RELEASE} -n ${ns}`));
        assert.doesNotMatch(r.stdout, /WARNING/);
        // What the release itself carries (the live objects may already be the manager's work: the
        // test kubelet starts the manager Pod within moments of the install).
        const manifest = await helmAt("get", "manifest", RELEASE, "--namespace", ns);
        assert.equal(manifest.code, 0, manifest.stderr);
        const objects = parseAllDocuments(manifest.stdout).map((d) => d.toJS()).filter((o) => o);
        assert.ok(
          !objects.some((o) =>
            o.kind === "Secret" && o.metadata?.name === `${FULLNAME}-webhook-cert`
          ),
          "the release ships no admission Secret: the manager issues it",
        );
        const vwc = objects.find((o) =>
          o.kind === "ValidatingWebhookConfiguration" &&
          o.metadata?.name === `${FULLNAME}-validating-webhook-configuration`
        );
        assert.ok(vwc, "the release renders the ValidatingWebhookConfiguration");
        // Rendered without a caBundle: the manager sets it.
        for (const w of vwc.webhooks) assert.equal(w.clientConfig.caBundle, undefined);
      },
    );

    await step("the manager Pod becomes Ready (chart probes, SA token, chart RBAC)", async () => {
      const pod = await waitFor("manager Pod Ready", async () => {
        const pods = (await getJSON(
          "pods",
          "-n",
          ns,
          "-l",
          "control-plane=controller-manager",
        )).items;
        return pods.find((p: Obj) => cond(p, "Ready")?.status === "True");
      }, { timeoutMs: 120_000 }).catch(async (e) => {
        throw new Error(await fail((e as Error).message));
      });
      assert.equal(pod.spec.containers[0].image, MANAGER_IMAGE);
      assert.equal(pod.spec.serviceAccountName, `${FULLNAME}-manager`);
      const log = await cp.kubelet!.podLog(ns, pod.metadata.name);
      assert.match(log, /"flag":"auto","mode":"builtin"/, log.slice(-4000));
      assert.match(log, /admission webhooks serving \(self-issued certificate\)/, log.slice(-4000));
      // The self-issued admission certificate, from the built-in CA, and the caBundle it set.
      const caSecret = await getJSON("secret", "dco-webhook-ca", "-n", ns);
      const admission = await getJSON("secret", `${FULLNAME}-webhook-cert`, "-n", ns);
      assert.equal(admission.type, "kubernetes.io/tls");
      assert.equal(admission.data["ca.crt"], caSecret.data["tls.crt"]);
      await waitFor("VWC caBundle set by the manager", async () => {
        const vwc = await getJSON(
          "validatingwebhookconfiguration",
          `${FULLNAME}-validating-webhook-configuration`,
        );
        return vwc.webhooks.every((w: Obj) => w.clientConfig.caBundle === caSecret.data["tls.crt"])
          ? vwc
          : undefined;
      }, { timeoutMs: 30_000 }).catch(async (e) => {
        throw new Error(await fail((e as Error).message));
      });
      // Leader election through the chart's RBAC: the manager holds its Lease.
      await waitFor("manager Lease held", async () => {
        const leases = (await getJSON("leases", "-n", ns)).items;
        return leases.some((l: Obj) => l.spec?.holderIdentity);
      }, { timeoutMs: 60_000 }).catch(async (e) => {
        throw new Error(await fail((e as Error).message));
      });
    });

    await step("the default ConversionWebhookServer's Pods become Ready", async () => {
      const cws = await waitFor("CWS ready", async () => {
        const s = await getJSON("conversionwebhookservers.terasky.com", CWS);
        return s.status?.readyReplicas === 2 && cond(s, "Available")?.status === "True" &&
            cond(s, "ServiceReady")?.status === "True" &&
            cond(s, "CertificateReady")?.status === "True"
          ? s
          : undefined;
      }, { timeoutMs: 180_000 }).catch(async (e) => {
        throw new Error(await fail((e as Error).message));
      });
      assert.equal(cws.spec.default, true);
      const pods = (await getJSON("pods", "-n", ns, "-l", `app.kubernetes.io/instance=${CWS}`))
        .items;
      assert.equal(pods.length, 2);
      for (const p of pods) {
        assert.equal(p.spec.containers[0].image, WEBHOOK_SERVER_IMAGE);
        assert.equal(cond(p, "Ready")?.status, "True");
        assert.equal(p.spec.serviceAccountName, `${FULLNAME}-webhook-server`);
      }
      // Each replica published its own served-target Lease under the narrowed rights (the Lease
      // Role and the ValidatingAdmissionPolicy admitting only `dco-served-<own pod>`).
      await waitFor("each replica's Lease", async () => {
        const leases = (await getJSON("leases", "-n", ns)).items.map((l: Obj) => l.metadata.name);
        return pods.every((p: Obj) => leases.includes(`dco-served-${p.metadata.name}`))
          ? leases
          : undefined;
      }, { timeoutMs: 30_000 }).catch(async (e) => {
        throw new Error(await fail((e as Error).message));
      });
      // The built-in CA (the manager's chart-granted Secret writes) issued the serving cert.
      const tls = await getJSON("secret", `${CWS}-webhook-server-tls`, "-n", ns);
      const caSecret = await getJSON("secret", "dco-webhook-ca", "-n", ns);
      assert.equal(tls.data["ca.crt"], caSecret.data["tls.crt"]);
    });

    await step("helm test: the admission and conversion webhooks answer", async () => {
      const r = await helmAt("test", RELEASE, "--namespace", ns, "--timeout", "3m");
      assert.equal(
        r.code,
        0,
        `helm test:\n${r.stdout}\n${r.stderr}\n${await cp.kubelet!.allLogs(30)}`,
      );
      assert.match(r.stdout, new RegExp(`TEST SUITE:\\s+${FULLNAME}-test`));
      assert.match(r.stdout, /Phase:\s+Succeeded/);
      // hook-succeeded: the test Pod, its ServiceAccount and Roles are gone again.
      await waitFor("test hooks deleted", async () => {
        const g = await cp.kubectl("get", "pods,serviceaccounts,roles", "-n", ns, "-o", "name");
        return g.code === 0 && !g.stdout.includes(`${FULLNAME}-test`);
      }, { timeoutMs: 30_000 });
    });

    const objNs = await cp.createNamespace("gadgets");
    await step("a CRDConversionConfig is Applied; v1 writes read back at v2", async () => {
      await applyObj(gadgetsCRD());
      await cp.waitForCRD(GADGETS);
      // Goes through the chart's ValidatingWebhookConfiguration (failurePolicy Fail) to the
      // manager Pod's admission listener.
      await applyObj(gadgetsConfig("gadgets", "spec.capacity"));
      await waitFor("gadgets Applied", async () => {
        const c = await getJSON("crdconversionconfigs.terasky.com", "gadgets");
        return c.status?.phase === "Applied" ? c : undefined;
      }, { timeoutMs: 90_000 }).catch(async (e) => {
        throw new Error(await fail((e as Error).message));
      });
      const target = await getJSON("crd", GADGETS);
      assert.equal(target.spec.conversion.strategy, "Webhook");
      assert.equal(
        target.spec.conversion.webhook.clientConfig.service.name,
        `${CWS}-webhook-server`,
      );
      await applyObj({
        apiVersion: `${GROUP}/v1`,
        kind: "Gadget",
        metadata: { name: "g1", namespace: objNs },
        spec: { size: 5, color: "green" },
      });
      const v2 = await waitFor("read at v2", async () => {
        const r = await cp.kubectl("get", `gadgets.v2.${GROUP}`, "g1", "-n", objNs, "-o", "json");
        return r.code === 0 ? JSON.parse(r.stdout) : undefined;
      }, { timeoutMs: 30_000 });
      assert.equal(v2.apiVersion, `${GROUP}/v2`);
      assert.deepEqual(v2.spec, { capacity: 5, color: "green" });
    });

    await step("the admission webhook (manager Pod) refuses a second config", async () => {
      // Through the chart's ValidatingWebhookConfiguration (caBundle set by the manager) and the
      // admission Service to the manager Pod's self-issued certificate: a target has at most one
      // config.
      const file = await writeObjectFile(cp, gadgetsConfig("second", "spec.capacity"));
      const r = await cp.kubectl("create", "-f", file);
      assert.notEqual(r.code, 0, "a second config for the target must be refused");
      assert.match(r.stderr, /vcrdconversionconfig\.terasky\.com" denied the request/, r.stderr);
      assert.match(r.stderr, /already configured by CRDConversionConfig "gadgets"/, r.stderr);
      const got = await cp.kubectl("get", "crdconversionconfigs.terasky.com", "second");
      assert.notEqual(got.code, 0, "nothing was stored");
    });

    const JOB = `${FULLNAME}-prepare-uninstall`;
    await step("helm uninstall is refused while a config exists (pre-delete Job)", async () => {
      const r = await helmAt("uninstall", RELEASE, "--namespace", ns, "--wait", "--timeout=3m");
      assert.notEqual(r.code, 0, `helm uninstall must fail:\n${r.stdout}\n${r.stderr}`);
      assert.match(r.stderr, new RegExp(`job ${JOB} failed: BackoffLimitExceeded`), r.stderr);
      // The failed Job stays (hook-delete-policy has no hook-failed); its Pod says why.
      const pods = (await getJSON("pods", "-n", ns, "-l", `job-name=${JOB}`)).items;
      assert.equal(pods.length, 1, "backoffLimit 0: one Pod");
      assert.equal(pods[0].status.phase, "Failed");
      assert.equal(pods[0].spec.serviceAccountName, `${FULLNAME}-manager`);
      const log = await cp.kubelet!.podLog(ns, pods[0].metadata.name);
      assert.match(
        log,
        /cannot uninstall: 1 conversion config\(s\) still exist: gadgets \(CRDConversionConfig\)/,
        log.slice(-4000),
      );
      assert.match(log, /Delete the configs first/);
      // Nothing was deleted: the server and the manager are still there.
      const cws = await getJSON("conversionwebhookservers.terasky.com", CWS);
      assert.equal(cws.metadata.deletionTimestamp, undefined);
      const managers = (await getJSON("pods", "-n", ns, "-l", "control-plane=controller-manager"))
        .items;
      assert.ok(managers.some((p: Obj) => cond(p, "Ready")?.status === "True"));
      await getJSON("deployment", `${FULLNAME}-manager`, "-n", ns);
    });

    await step("uninstall: configs (break-glass), then a plain helm uninstall", async () => {
      // The target still serves two versions: the delete guard holds the config until the
      // break-glass annotation (docs/installation.md "Uninstalling").
      await kubectl(
        "annotate",
        "crdconversionconfigs.terasky.com",
        "gadgets",
        "conversion.terasky.com/allow-unsafe-delete=true",
      );
      await kubectl("delete", "crdconversionconfigs.terasky.com", "gadgets", "--timeout=60s");
      const target = await getJSON("crd", GADGETS);
      assert.equal(target.spec.conversion?.strategy ?? "None", "None", "the target reverted");

      // The pre-delete hook deletes the ConversionWebhookServer while the manager runs.
      const r = await helmAt("uninstall", RELEASE, "--namespace", ns, "--wait", "--timeout=4m");
      assert.equal(
        r.code,
        0,
        `helm uninstall:\n${r.stdout}\n${r.stderr}\n${await cp.kubelet!.allLogs(20)}`,
      );
      const servers = await kubectl("get", "conversionwebhookservers.terasky.com", "-o", "name");
      assert.equal(servers.trim(), "", "no ConversionWebhookServer left");
      // Pods (manager, webhook-servers, the hook's), Deployments and the hook Job
      // (hook-succeeded) are all gone.
      await waitFor("no Pods, Deployments or Jobs left in the release namespace", async () => {
        const g = await cp.kubectl("get", "pods,deployments,jobs", "-n", ns, "-o", "name");
        return g.code === 0 && g.stdout.trim() === "";
      }, { timeoutMs: 90_000 }).catch(async (e) => {
        throw new Error(await fail((e as Error).message));
      });
      const left = await cp.kubectl("get", "clusterrole", `${FULLNAME}-manager-role`);
      assert.notEqual(left.code, 0, "the release's ClusterRole is gone");
      const leftWs = await cp.kubectl("get", "clusterrole", `${FULLNAME}-webhook-server-role`);
      assert.notEqual(leftWs.code, 0, "the release's ClusterRoles are gone");
    });
  },
  {
    name: "helm-install-e2e",
    kubelet: {
      images: {
        [MANAGER_IMAGE]: await roleImage("manager"),
        [WEBHOOK_SERVER_IMAGE]: await roleImage("webhook-server"),
      },
    },
  },
);

Deno.test(
  "chart: helm install is accepted by the apiserver",
  withControlPlane(async (cp) => {
    const ns = await cp.createNamespace("dco-chart");
    const r = await helm(
      "install",
      "dco",
      CHART,
      "--kubeconfig",
      cp.kubeconfigPath,
      "--namespace",
      ns,
      "--set",
      "certManager.enabled=false",
      "--set",
      "networkPolicy.enabled=true",
      // No manager runs here: with Fail, deleting the CWS at uninstall would be refused by the
      // unreachable admission webhook.
      "--set",
      "admissionWebhook.failurePolicy=Ignore",
      "--set",
      "image.registry=registry.example",
      "--set",
      "image.manager.tag=test",
      "--set",
      "image.webhookServer.tag=test",
      "--set",
      "conversionWebhookServer.name=chart-test",
    );
    assert.equal(r.code, 0, `helm install failed:\n${r.stdout}\n${r.stderr}`);
    const dep = await cp.kubectl(
      "get",
      "deployment",
      `${FULLNAME}-manager`,
      "-n",
      ns,
      "-o",
      "json",
    );
    assert.equal(dep.code, 0, dep.stderr);
    const d = JSON.parse(dep.stdout);
    assert.equal(
      d.spec.template.spec.containers[0].image,
      "registry.example/terasky-oss/declarative-conversion-operator:test",
    );
    const cws = await cp.kubectl("get", "conversionwebhookserver", "chart-test", "-o", "json");
    assert.equal(cws.code, 0, cws.stderr);
    assert.equal(JSON.parse(cws.stdout).spec.default, true);
    for (
      const [kind, name, namespaced] of [
        ["clusterrole", `${FULLNAME}-manager-role`, false],
        ["clusterrole", `${FULLNAME}-webhook-server-role`, false],
        ["role", `${FULLNAME}-webhook-server-leases`, true],
        ["validatingwebhookconfiguration", `${FULLNAME}-validating-webhook-configuration`, false],
        ["networkpolicy", `${FULLNAME}-manager`, true],
        ["service", `${FULLNAME}-webhook-service`, true],
      ] as Array<[string, string, boolean]>
    ) {
      const g = await cp.kubectl("get", kind, name, ...(namespaced ? ["-n", ns] : []));
      assert.equal(g.code, 0, `${kind}/${name}: ${g.stderr}`);
    }
    // hack/upgrade-crds.sh against the CRDs Helm installed: they match; changed by hand they differ
    // (exit 1, nothing changed); --apply puts the chart's back (server-side, over Helm's fields).
    const kube = ["--", "--kubeconfig", cp.kubeconfigPath];
    const same = await upgradeCrds(kube);
    assert.equal(same.code, 0, `${same.stdout}\n${same.stderr}`);
    assert.match(same.stderr, /the cluster's CRDs match the chart's/);
    const CCC = "crdconversionconfigs.terasky.com";
    const column = async () =>
      JSON.parse(
        (await cp.kubectl("get", "crd", CCC, "-o", "json")).stdout,
      ).spec.versions[0].additionalPrinterColumns[0].name;
    const patched = await cp.kubectl(
      "patch",
      "crd",
      CCC,
      "--type=json",
      "-p",
      '[{"op":"replace","path":"/spec/versions/0/additionalPrinterColumns/0/name","value":"Old"}]',
    );
    assert.equal(patched.code, 0, patched.stderr);
    const differs = await upgradeCrds(kube);
    assert.equal(differs.code, 1, `${differs.stdout}\n${differs.stderr}`);
    assert.match(differs.stdout, /-\s+name: Old/);
    assert.match(differs.stderr, /differ; run again with --apply/);
    assert.equal(await column(), "Old", "the diff changed nothing");
    const applied = await upgradeCrds(["--apply", ...kube]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(await column(), "CRD");
    assert.equal((await upgradeCrds(kube)).code, 0);
    // The pre-delete hook Job (not created by install) is accepted too (server-side dry run).
    const rendered = await helm(
      "template",
      "dco",
      CHART,
      "--namespace",
      ns,
      "--kube-version",
      KUBE_VERSION,
      "--show-only",
      "templates/manager/pre-delete-job.yaml",
    );
    assert.equal(rendered.code, 0, rendered.stderr);
    const jobFile = `${await cp.makeTempDir("job")}/job.yaml`;
    await Deno.writeTextFile(jobFile, rendered.stdout);
    const dry = await cp.kubectl("create", "--dry-run=server", "-f", jobFile);
    assert.equal(dry.code, 0, `the Job must be accepted: ${dry.stderr}`);
    // No kubelet runs here, so the hook Job could never complete: uninstall without hooks.
    const un = await helm(
      "uninstall",
      "dco",
      "--kubeconfig",
      cp.kubeconfigPath,
      "--namespace",
      ns,
      "--no-hooks",
    );
    assert.equal(un.code, 0, `${un.stdout}\n${un.stderr}`);
    // Cluster-scoped objects of the release must not outlive it (other tests share clusters).
    const left = await cp.kubectl("get", "clusterrole", `${FULLNAME}-manager-role`);
    assert.notEqual(left.code, 0);
  }),
);
