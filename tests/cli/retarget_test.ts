import assert from "node:assert/strict";
import { assertToolError, convctl } from "./_convctl.ts";
import { schemaDocument, specSchema, tempFiles } from "./_fixtures.ts";

const DOCS = "docs/examples/cli";
const ARGS = [
  "retarget",
  "-x",
  `${DOCS}/retarget-xrd.yaml`,
  "--to",
  "v2",
  "-s",
  `${DOCS}/retarget-objects`,
];

Deno.test("retarget --dry-run: one merge patch per object not yet on the target", async () => {
  const r = await convctl(...ARGS, "--dry-run", "-o", "json");
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.scope, "Namespaced");
  assert.equal(report.total, 3);
  assert.deepEqual(
    report.objects.map((o: { namespace: string; name: string; action: string }) =>
      `${o.namespace}/${o.name} ${o.action}`
    ),
    ["team-a/alpha patch", "team-a/beta patch", "team-b/gamma already-on-target"],
  );
  assert.deepEqual(report.objects[1].patch, {
    spec: {
      crossplane: {
        compositionRef: null,
        compositionRevisionRef: null,
        compositionSelector: { matchLabels: { tier: null, "xrd-api-version": "v2" } },
      },
    },
  });
  assert.equal(report.objects[2].patch, undefined);

  const table = await convctl(...ARGS, "--dry-run", "--canary", "1");
  assert.equal(table.code, 0);
  assert.match(table.stdout, /^CANARY: 1 of 3 object\(s\) selected$/m);
  assert.match(table.stdout, /^team-a\/alpha +XWidget +composite +patch$/m);
  assert.match(
    table.stdout,
    /^SUMMARY: 1 object\(s\) to patch, 0 already on target; nothing was sent$/m,
  );
  const share = JSON.parse(
    (await convctl(...ARGS, "--dry-run", "--canary", "1%", "-o", "json")).stdout,
  );
  assert.equal(share.selected, 1, "a non-zero share of a non-empty set selects at least one");
});

Deno.test("retarget --dry-run: legacy composites and claims keep the fields under spec", async () => {
  const xrd = schemaDocument("XRD", "XThing", "xthings", [
    { name: "v1", served: true, referenceable: true, schema: specSchema({}) },
  ]) as { apiVersion: string; spec: Record<string, unknown> };
  xrd.apiVersion = "apiextensions.crossplane.io/v1";
  delete xrd.spec.scope;
  xrd.spec.claimNames = { kind: "Thing", plural: "things" };
  const dir = await tempFiles({
    "xrd.yaml": xrd,
    "objects/a.yaml": {
      apiVersion: "demo.example.com/v1",
      kind: "Thing",
      metadata: { name: "claim", namespace: "default" },
      spec: { compositionRevisionRef: { name: "rev-1" } },
    },
    "objects/b.yaml": {
      apiVersion: "demo.example.com/v1",
      kind: "XThing",
      metadata: { name: "composite" },
      spec: {},
    },
  });
  const r = await convctl(
    "retarget",
    "-x",
    `${dir}/xrd.yaml`,
    "--to",
    "v1",
    "-s",
    `${dir}/objects`,
    "--dry-run",
    "--label-key",
    "v",
    "-o",
    "json",
  );
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.scope, "LegacyCluster");
  const fields = {
    compositionRef: null,
    compositionRevisionRef: null,
    compositionSelector: { matchLabels: { v: "v1" } },
  };
  assert.deepEqual(
    report.objects.map((o: { crdRole: string; patch: unknown }) => [o.crdRole, o.patch]),
    [
      ["composite", { spec: fields }],
      ["claim", { spec: fields }],
    ],
  );
});

Deno.test("retarget: bad input is a one-line error and exit 2", async () => {
  assertToolError(
    await convctl(...ARGS),
    "-s DIR plans the patches offline and needs --dry-run; without -s, retarget patches the cluster's objects",
  );
  assertToolError(
    await convctl(...ARGS, "--dry-run", "--context", "prod"),
    "--context cannot be used with -s (offline)",
  );
  assertToolError(
    await convctl(...ARGS, "--dry-run", "--concurrency", "0"),
    'invalid value "0" for --concurrency: expected an integer from 1 to 256',
  );
  assertToolError(
    await convctl(
      "retarget",
      "-x",
      `${DOCS}/retarget-xrd.yaml`,
      "--to",
      "v9",
      "-s",
      `${DOCS}/retarget-objects`,
      "--dry-run",
    ),
    "--to v9: not a version of XRD xwidgets.demo.example.com (versions: v1, v2)",
  );
  assertToolError(
    await convctl(...ARGS, "--dry-run", "--canary", "lots"),
    'invalid value "lots" for --canary: must be N or N%',
  );
  assertToolError(
    await convctl(
      "retarget",
      "-x",
      `${DOCS}/widget-crd.yaml`,
      "--to",
      "v2",
      "-s",
      `${DOCS}/retarget-objects`,
      "--dry-run",
    ),
    `XRD file ${DOCS}/widget-crd.yaml has kind "CustomResourceDefinition", expected CompositeResourceDefinition`,
  );
  assertToolError(
    await convctl(
      "retarget",
      "-x",
      "missing.yaml",
      "--to",
      "v2",
      "-s",
      `${DOCS}/retarget-objects`,
      "--dry-run",
    ),
    /^error: cannot read XRD file missing\.yaml: /,
  );
});
