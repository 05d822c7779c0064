/**
 * dco's kinds as the usual tools see them, against a real kube-apiserver with the manager as a
 * process (no kubelet: the test plays its part for the server's Deployment and TLS Secret):
 *
 * - `kubectl explain` prints a description for every field (from the apiserver's published
 *   OpenAPI of the generated CRDs), checked field by field against the CRD's properties;
 * - `kubectl wait --for=condition=Ready` returns for a config once it is Applied and for its
 *   server once it is ready; before that the config is Ready=False with Reconciling
 *   (`ServerNotReady`), and an invalid config is Ready=False with Stalled and the engine's reason;
 * - the invalid config has a Warning Event (events.k8s.io) with the condition's reason and the
 *   engine's diagnostic in its note, listed by `kubectl describe`;
 * - `kubectl get -o wide` shows the Ready message in the Message column; the server's Ready column
 *   is its ready replica count.
 */
import assert from "node:assert/strict";
import { generateCRDs, type SchemaNode } from "../../src/api/crds.ts";
import { type ControlPlane, e2eTest, waitFor } from "../support/control_plane.ts";
import {
  admissionCertificate,
  findCondition as cond,
  installDcoCRDs,
  kubectlFor,
  type Obj,
  startManager,
  webhookServer,
} from "../support/dco_stack.ts";
import { markServerAvailable, provideServingSecret } from "../support/server_stand_in.ts";
import { crdTarget } from "./_targets.ts";

const CWS = "dco";

/** One field of `kubectl explain`'s FIELDS section: its name and its description lines. */
interface ExplainedField {
  name: string;
  description: string[];
}

/**
 * The FIELDS section of `kubectl explain` plain output: a field is `  <name>\t<type>` (two
 * spaces), its description the indented lines that follow it (an `enum:` line is not).
 */
function explainedFields(out: string): ExplainedField[] {
  const lines = out.split("\n");
  const start = lines.findIndex((l) => l.trim() === "FIELDS:");
  assert.ok(start >= 0, `no FIELDS section in:\n${out}`);
  const fields: ExplainedField[] = [];
  for (const line of lines.slice(start + 1)) {
    const header = /^ {2}(\S+)\t+<[^>]*>/.exec(line);
    if (header) fields.push({ name: header[1], description: [] });
    else if (/^ {4}\S/.test(line) && !/^\s*enum:/.test(line) && fields.length > 0) {
      fields.at(-1)!.description.push(line); // an enum's value list is not its description
    }
  }
  return fields;
}

/** The `DESCRIPTION:` text of the field `kubectl explain` was asked about. */
function explainedDescription(out: string): string {
  const m = /^DESCRIPTION:\n((?: {4}.*\n|\n)*)/m.exec(out);
  return m ? m[1].trim() : "";
}

/** The properties of the schema node at `path` (`spec.spokes.rules`) of the CRD of `kind`. */
function propertiesAt(kind: string, path: string): string[] {
  const crd = generateCRDs().find((c) => c.spec.names.kind === kind)!;
  let node: SchemaNode = crd.spec.versions[0].schema.openAPIV3Schema;
  for (const segment of path.split(".")) {
    node = (node.properties as Record<string, SchemaNode>)[segment];
    while (node.type === "array") node = node.items as SchemaNode;
  }
  return Object.keys(node.properties as Record<string, SchemaNode>).sort();
}

e2eTest(
  "native tools: kubectl explain, kubectl wait for Ready, Stalled with the engine's reason",
  async (cp: ControlPlane, t) => {
    const crds = crdTarget("native.dco.test");
    await installDcoCRDs(cp, crds.extraCRDs);
    const { kubectl, getJSON } = kubectlFor(cp);

    await t.step("kubectl explain: a description for every field", async () => {
      const cases: [string, string, string][] = [
        ["crdconversionconfig.spec.spokes.rules", "CRDConversionConfig", "spec.spokes.rules"],
        ["crdconversionconfig.spec", "CRDConversionConfig", "spec"],
        ["crdconversionconfig.status.conditions", "CRDConversionConfig", "status.conditions"],
        [
          "xrdconversionconfig.spec.spokes.rules.forEach",
          "XRDConversionConfig",
          "spec.spokes.rules.forEach",
        ],
        ["conversionwebhookserver.spec", "ConversionWebhookServer", "spec"],
        ["conversionwebhookserver.spec.rollout", "ConversionWebhookServer", "spec.rollout"],
      ];
      for (const [resource, kind, path] of cases) {
        // The apiserver publishes a new CRD's OpenAPI shortly after it is Established.
        const out = await waitFor(`kubectl explain ${resource}`, async () => {
          const r = await cp.kubectl("explain", resource);
          return r.code === 0 && r.stdout.includes("FIELDS:") ? r.stdout : undefined;
        }, { timeoutMs: 30_000 });
        assert.notEqual(explainedDescription(out), "", `${resource}: the field's own description`);
        const fields = explainedFields(out);
        assert.deepEqual(fields.map((f) => f.name).sort(), propertiesAt(kind, path), resource);
        const bare = fields.filter((f) => f.description.join("").trim() === "");
        assert.deepEqual(bare.map((f) => f.name), [], `${resource}: fields without a description`);
      }
    });

    const ns = await cp.createNamespace("dco-system");
    const { certDir, ca } = await admissionCertificate(cp, "dco-native-ca");
    await using targets = await crds.open(cp);
    await targets.create(crds.named("widgets", "Widget"), crds.named("gizmos", "Gizmo"));
    await cp.apply(
      webhookServer(CWS, { default: true, certificate: { issuerRef: { name: "x" } } }),
    );
    await cp.apply(crds.config("widgets", `widgets.${crds.group}`, "spec.capacity"));
    await cp.apply(crds.config("gizmos", `gizmos.${crds.group}`, "spec.missing"));
    await using role = startManager(cp, {
      certDir,
      namespace: ns,
      certificateMode: "existing-secret",
      features: crds.features,
    });
    const config = (name: string) => getJSON(crds.configResource, name);
    const wait = (...args: string[]) =>
      cp.kubectl("wait", ...args, "--timeout=90s").then((r) => {
        assert.equal(r.code, 0, `kubectl wait ${args.join(" ")}: ${r.stderr}\n${role.output()}`);
        return r.stdout;
      });

    await t.step(
      "an invalid config: Ready=False and Stalled, with the engine's reason",
      async () => {
        await wait("--for=condition=Stalled", `${crds.configResource}/gizmos`);
        const c = await config("gizmos");
        assert.equal(c.status.phase, "Invalid");
        const ready = cond(c, "Ready");
        assert.deepEqual([ready.status, ready.reason], ["False", "ValidationFailed"]);
        assert.equal(ready.observedGeneration, c.metadata.generation);
        assert.match(ready.message, /\[path-not-found\]/);
        assert.equal(cond(c, "Stalled").reason, "ValidationFailed");
        assert.equal(cond(c, "Reconciling"), undefined);
      },
    );

    await t.step("an invalid config: a Warning Event with the engine's diagnostics", async () => {
      // The command docs/operations.md#events gives.
      const list = () =>
        kubectl(
          "get",
          "events.events.k8s.io",
          "-n",
          "default",
          "--field-selector",
          "regarding.name=gizmos",
          "--sort-by=.eventTime",
          "-o",
          "json",
        ).then((out) => JSON.parse(out).items as Obj[]);
      const [event] = await waitFor("the Warning Event", async () => {
        const items = await list();
        return items.length > 0 ? items : undefined;
      });
      assert.equal(event.type, "Warning");
      assert.equal(event.reason, "ValidationFailed");
      assert.equal(event.action, "Validate");
      assert.match(event.note, /\[path-not-found\]/);
      assert.equal(event.reportingController, "declarative-conversion-operator");
      assert.deepEqual(
        [event.regarding.kind, event.regarding.name, event.regarding.uid],
        ["CRDConversionConfig", "gizmos", (await config("gizmos")).metadata.uid],
      );
      const described = await kubectl("describe", crds.configResource, "gizmos");
      assert.match(described, /Warning\s+ValidationFailed/);
    });

    await t.step(
      "waiting on the server: Ready=False and Reconciling (ServerNotReady)",
      async () => {
        await wait("--for=condition=Reconciling", `${crds.configResource}/widgets`);
        const c = await config("widgets");
        assert.equal(c.status.phase, "Pending");
        assert.deepEqual([cond(c, "Ready").status, cond(c, "Ready").reason], [
          "False",
          "ServerNotReady",
        ]);
        const server = await getJSON("conversionwebhookservers.terasky.com", CWS);
        assert.equal(cond(server, "Ready").status, "False");
        assert.equal(cond(server, "Reconciling").status, "True");
      },
    );

    await t.step("kubectl wait --for=condition=Ready returns once Applied", async () => {
      await provideServingSecret(cp, ca, ns, CWS);
      await markServerAvailable(kubectlFor(cp), ns, CWS);
      await wait("--for=condition=Ready", `conversionwebhookservers.terasky.com/${CWS}`);
      await wait("--for=condition=Ready", `${crds.configResource}/widgets`);
      const c = await config("widgets");
      assert.equal(c.status.phase, "Applied");
      assert.equal(cond(c, "Ready").reason, "Applied");
      assert.equal(cond(c, "Ready").observedGeneration, c.metadata.generation);
      assert.equal(cond(c, "Reconciling"), undefined);
      assert.equal(cond(c, "Stalled"), undefined);
      // Both changes were recorded as Normal Events on their objects.
      const reasons = async (name: string) =>
        (JSON.parse(
          await kubectl(
            "get",
            "events.events.k8s.io",
            "-n",
            "default",
            "--field-selector",
            `regarding.name=${name}`,
            "-o",
            "json",
          ),
        ).items as Obj[]).map((e) => `${e.type} ${e.reason}`);
      await waitFor(
        "the Applied and ServerReady Events",
        async () =>
          (await reasons("widgets")).includes("Normal Applied") &&
          (await reasons(CWS)).includes("Normal ServerReady"),
      );
    });

    await t.step("printer columns: Message with -o wide, the server's Ready count", async () => {
      const wide = await kubectl("get", crds.configResource, "widgets", "-o", "wide");
      const [header, row] = wide.trim().split("\n");
      assert.match(header, /\bPHASE\b.*\bMESSAGE\b/);
      assert.doesNotMatch(await kubectl("get", crds.configResource, "widgets"), /MESSAGE/);
      assert.match(row, /\bApplied\b/);
      const message = cond(await config("widgets"), "Ready").message as string;
      assert.ok(row.includes(message), `${row} shows ${message}`);
      const server = await kubectl("get", "conversionwebhookservers.terasky.com", CWS);
      assert.match(server, /^NAME\s+DEFAULT\s+READY\s+ENDPOINT\s+AGE\ndco\s+true\s+2\s/m);
    });
  },
);
