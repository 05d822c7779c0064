/**
 * The XRD conversion guard: every branch of steps 1–5 with the exact JSONPatch
 * ops, the AdmissionReview answer it makes, its route on the manager's admission listener, and the
 * lookup through the config cache's `target` index.
 */
import assert from "node:assert/strict";
import {
  decideXrdGuard,
  type JsonPatchOp,
  serviceOfWebhookURL,
  XRD_GUARD_PATH,
  type XrdConfigLookup,
  type XrdGuardRequest,
  xrdGuardResponse,
} from "../../src/manager/admission/mod.ts";
import {
  ADMISSION_REVIEW_API_VERSION,
  ADMISSION_REVIEW_KIND,
  answerAdmission,
} from "../../src/manager/admission/mod.ts";
import type { AdmissionContext } from "../../src/manager/admission/mod.ts";
import { xrdGuardConfirm, xrdGuardLookup } from "../../src/manager/admission_setup.ts";
import { XRD_CONFIG_KIND } from "../../src/api/mod.ts";
import { type Informer, KubeApiError, type KubeClient } from "../../src/kube/mod.ts";

const XRD = "xnets.example.org";
const CONFIG = "nets";
const HASH = "sha256:abc";
const MANAGED_BY = "conversion.terasky.com/managed-by";
const PLAN_HASH = "conversion.terasky.com/plan-hash";
const MB = "/metadata/annotations/conversion.terasky.com~1managed-by";
const PH = "/metadata/annotations/conversion.terasky.com~1plan-hash";

// deno-lint-ignore no-explicit-any
type Obj = any;

/** An applied XRDConversionConfig (every step-3 precondition met); `patch` edits it. */
function appliedConfig(patch: (c: Obj) => void = () => {}): Obj {
  const c: Obj = {
    apiVersion: "terasky.com/v1alpha1",
    kind: "XRDConversionConfig",
    metadata: { name: CONFIG },
    spec: { targetXRD: { name: XRD } },
    status: {
      phase: "Applied",
      assignedWebhookServer: "dco",
      webhookURL: `https://dco-webhook-server.dco-system.svc/convert/${XRD}`,
      webhookPath: `/convert/${XRD}`,
      webhookPort: 8443,
      lastAppliedPlanHash: HASH,
      schemaHash: HASH,
      conditions: [{ type: "Applied", status: "True", reason: "Applied" }],
    },
  };
  patch(c);
  return c;
}

/** The stanza the controller applied for {@link appliedConfig}. */
function ourConversion(caBundle?: string): Obj {
  return {
    strategy: "Webhook",
    webhook: {
      clientConfig: {
        service: {
          name: "dco-webhook-server",
          namespace: "dco-system",
          path: `/convert/${XRD}`,
          port: 8443,
        },
        ...(caBundle !== undefined ? { caBundle } : {}),
      },
      conversionReviewVersions: ["v1"],
    },
  };
}

/** An XRD at `version` (`v1` offers claims, as a legacy XRD does). */
function xrd(version: "v1" | "v2", patch: (x: Obj) => void = () => {}): Obj {
  const x: Obj = {
    apiVersion: `apiextensions.crossplane.io/${version}`,
    kind: "CompositeResourceDefinition",
    metadata: { name: XRD, labels: { team: "a" } },
    spec: {
      group: "example.org",
      names: { kind: "XNet", plural: "xnets" },
      ...(version === "v1" ? { claimNames: { kind: "Net", plural: "nets" } } : {}),
      versions: [{ name: "v1", served: true, referenceable: true }],
    },
  };
  patch(x);
  return x;
}

function request(object: unknown, operation = "UPDATE", version = "v2"): XrdGuardRequest {
  return {
    operation,
    name: XRD,
    kind: { group: "apiextensions.crossplane.io", version, kind: "CompositeResourceDefinition" },
    object,
  };
}

const lookupOf = (...configs: Obj[]): XrdConfigLookup => (name) => name === XRD ? configs : [];

/** The restore ops for an XRD with no annotations and no `spec.conversion`. */
const FULL_RESTORE = (caBundle?: string): JsonPatchOp[] => [
  {
    op: "add",
    path: "/metadata/annotations",
    value: { [MANAGED_BY]: CONFIG, [PLAN_HASH]: HASH },
  },
  { op: "add", path: "/spec/conversion", value: ourConversion(caBundle) },
];

function assertAllowed(req: XrdGuardRequest, lookup: XrdConfigLookup, reason: RegExp): void {
  const d = decideXrdGuard(req, lookup);
  assert.deepEqual(d.patch, [], d.reason);
  assert.match(d.reason, reason);
}

/** Applies `ops` (add/replace on objects only) to a copy of `obj`. */
function applyPatch(obj: Obj, ops: JsonPatchOp[]): Obj {
  const out = structuredClone(obj);
  for (const op of ops) {
    const tokens = op.path.slice(1).split("/").map((t) =>
      t.replaceAll("~1", "/").replaceAll("~0", "~")
    );
    let at = out;
    for (const t of tokens.slice(0, -1)) at = at[t];
    at[tokens[tokens.length - 1]] = structuredClone(op.value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Step 1: decode

Deno.test("xrd guard step 1: an object that does not decode is allowed unchanged", () => {
  const lookup = lookupOf(appliedConfig());
  for (
    const object of [
      undefined,
      null,
      "xrd",
      [1],
      xrd("v2", (x) => (x.metadata = "m")),
      xrd("v2", (x) => (x.metadata.annotations = ["a"])),
      xrd("v2", (x) => (x.spec = 3)),
      xrd("v2", (x) => (x.spec.conversion = "Webhook")),
      xrd("v2", (x) => (x.spec.conversion = { strategy: "Webhook", webhook: 1 })),
      xrd("v2", (x) => (x.spec.conversion = { webhook: { clientConfig: "c" } })),
      xrd("v2", (x) => (x.kind = "CustomResourceDefinition")),
      xrd("v2", (x) => (x.apiVersion = "apiextensions.k8s.io/v1")),
    ]
  ) {
    assertAllowed(request(object), lookup, /cannot decode the XRD/);
  }
  // No name anywhere.
  assertAllowed(
    { ...request(xrd("v2", (x) => delete x.metadata.name)), name: "" },
    lookup,
    /no object name/,
  );
});

Deno.test("xrd guard: other operations and other kinds are allowed unchanged", () => {
  const lookup = lookupOf(appliedConfig());
  assertAllowed(request(xrd("v2"), "DELETE"), lookup, /not guarded/);
  assertAllowed(request(xrd("v2"), "CONNECT"), lookup, /not guarded/);
  assertAllowed(
    { ...request(xrd("v2")), kind: { group: "apiextensions.k8s.io", kind: "X" } },
    lookup,
    /not an XRD/,
  );
});

// ---------------------------------------------------------------------------------------------
// Step 2: exactly one config

Deno.test("xrd guard step 2: zero or two configs targeting the XRD → allowed unchanged", () => {
  assertAllowed(request(xrd("v2")), lookupOf(), /no XRDConversionConfig targets/);
  assertAllowed(
    request(xrd("v2")),
    lookupOf(appliedConfig(), appliedConfig((c) => (c.metadata.name = "other"))),
    /2 XRDConversionConfigs target/,
  );
  // The name comes from request.name, else the object's.
  const seen: string[] = [];
  decideXrdGuard({ ...request(xrd("v2")), name: "" }, (n) => {
    seen.push(n);
    return [];
  });
  assert.deepEqual(seen, [XRD]);
});

Deno.test("xrd guard: a lookup that throws fails open", () => {
  assertAllowed(request(xrd("v2")), () => {
    throw new Error("cache not synced");
  }, /guard error: cache not synced/);
});

// ---------------------------------------------------------------------------------------------
// Step 3: only what was applied

Deno.test("xrd guard step 3: a config not yet applied (or deleting) → allowed unchanged", () => {
  const cases: Array<[(c: Obj) => void, RegExp]> = [
    [(c) => delete c.status, /has not been applied yet/],
    [(c) => delete c.status.lastAppliedPlanHash, /has not been applied yet/],
    [(c) => (c.status.lastAppliedPlanHash = ""), /has not been applied yet/],
    [(c) => (c.status.conditions = []), /is not Applied=True/],
    [(c) => (c.status.conditions[0].status = "False"), /is not Applied=True/],
    [(c) => delete c.status.assignedWebhookServer, /no assignedWebhookServer/],
    [(c) => (c.status.assignedWebhookServer = ""), /no assignedWebhookServer/],
    [(c) => delete c.status.webhookPath, /no webhookPath/],
    [
      (c) => (c.metadata.deletionTimestamp = "2026-01-01T00:00:00Z"),
      /is being deleted/,
    ],
  ];
  for (const [edit, reason] of cases) {
    assertAllowed(request(xrd("v2")), lookupOf(appliedConfig(edit)), reason);
  }
});

// ---------------------------------------------------------------------------------------------
// Step 4: restore, foreign, or current

Deno.test("xrd guard step 4/5: strategy dropped (the establisher's write) → exact restore", () => {
  const lookup = lookupOf(appliedConfig());
  // No spec.conversion, no annotations at all.
  const d = decideXrdGuard(request(xrd("v2")), lookup);
  assert.deepEqual(d.patch, FULL_RESTORE());
  assert.match(d.reason, /restored config nets's conversion webhook \(incoming strategy ""\)/);
  // Strategy None (replace), other annotations kept (per-key adds).
  const none = xrd("v2", (x) => {
    x.metadata.annotations = { "keep/me": "1" };
    x.spec.conversion = { strategy: "None" };
  });
  const d2 = decideXrdGuard(request(none), lookup);
  assert.deepEqual(d2.patch, [
    { op: "add", path: MB, value: CONFIG },
    { op: "add", path: PH, value: HASH },
    { op: "replace", path: "/spec/conversion", value: ourConversion() },
  ]);
  const patched = applyPatch(none, d2.patch);
  assert.deepEqual(patched.metadata.annotations, {
    "keep/me": "1",
    [MANAGED_BY]: CONFIG,
    [PLAN_HASH]: HASH,
  });
  // Nothing else changed.
  assert.deepEqual({ ...patched, metadata: none.metadata, spec: { ...patched.spec } }, {
    ...none,
    spec: { ...none.spec, conversion: ourConversion() },
  });
  // An empty strategy with our annotations still there: only the stanza.
  const empty = xrd("v2", (x) => {
    x.metadata.annotations = { [MANAGED_BY]: CONFIG, [PLAN_HASH]: HASH };
    x.spec.conversion = {};
  });
  assert.deepEqual(decideXrdGuard(request(empty), lookup).patch, [
    { op: "replace", path: "/spec/conversion", value: ourConversion() },
  ]);
  // annotations: null and no metadata at all.
  const nullAnn = xrd("v2", (x) => (x.metadata.annotations = null));
  assert.deepEqual(decideXrdGuard(request(nullAnn), lookup).patch, FULL_RESTORE());
  const noMeta = xrd("v2", (x) => delete x.metadata);
  assert.deepEqual(decideXrdGuard(request(noMeta), lookup).patch, [
    { op: "add", path: "/metadata", value: {} },
    ...FULL_RESTORE(),
  ]);
  const noSpec = xrd("v2", (x) => delete x.spec);
  assert.deepEqual(decideXrdGuard(request(noSpec), lookup).patch, [
    FULL_RESTORE()[0],
    { op: "add", path: "/spec", value: { conversion: ourConversion() } },
  ]);
  // CREATE is guarded too.
  assert.deepEqual(decideXrdGuard(request(xrd("v2"), "CREATE"), lookup).patch, FULL_RESTORE());
});

Deno.test("xrd guard step 4: a foreign webhook is never hijacked", () => {
  const lookup = lookupOf(appliedConfig());
  const foreign = (annotations: Obj) =>
    xrd("v2", (x) => {
      if (annotations !== undefined) x.metadata.annotations = annotations;
      x.spec.conversion = {
        strategy: "Webhook",
        webhook: {
          clientConfig: { service: { name: "theirs", namespace: "other", path: "/c" } },
          conversionReviewVersions: ["v1"],
        },
      };
    });
  assertAllowed(request(foreign(undefined)), lookup, /not managed by config nets.*null/);
  assertAllowed(request(foreign({ [MANAGED_BY]: "someone" })), lookup, /"someone"/);
  assertAllowed(request(foreign({ [PLAN_HASH]: HASH })), lookup, /never hijacked/);
  // Even a URL clientConfig with our plan-hash but no managed-by.
  const url = xrd("v2", (x) => {
    x.spec.conversion = {
      strategy: "Webhook",
      webhook: { clientConfig: { url: "https://example.org/convert" } },
    };
  });
  assertAllowed(request(url), lookup, /never hijacked/);
});

Deno.test("xrd guard step 4: ours and matching → allowed unchanged (port 443 when absent)", () => {
  const ours = (conv: Obj) =>
    xrd("v2", (x) => {
      x.metadata.annotations = { [MANAGED_BY]: CONFIG, [PLAN_HASH]: HASH };
      x.spec.conversion = conv;
    });
  assertAllowed(
    request(ours(ourConversion("Q0E="))),
    lookupOf(appliedConfig()),
    /already carries config nets's webhook/,
  );
  // Without a caBundle it still matches (the caBundle is the controller's business).
  assertAllowed(request(ours(ourConversion())), lookupOf(appliedConfig()), /already carries/);
  // webhookPort 0 or absent ⇒ 443; an XRD port absent ⇒ 443.
  const noPort = ourConversion();
  delete noPort.webhook.clientConfig.service.port;
  for (
    const edit of [(c: Obj) => (c.status.webhookPort = 0), (c: Obj) => delete c.status.webhookPort]
  ) {
    assertAllowed(request(ours(noPort)), lookupOf(appliedConfig(edit)), /already carries/);
  }
});

Deno.test("xrd guard step 4/5: ours with a wrong port, path, service or hash → restore", () => {
  const lookup = lookupOf(appliedConfig());
  const cases: Array<[string, (x: Obj) => void, JsonPatchOp[]]> = [
    ["port", (x) => (x.spec.conversion.webhook.clientConfig.service.port = 443), []],
    ["path", (x) => (x.spec.conversion.webhook.clientConfig.service.path = "/convert/x"), []],
    ["service", (x) => (x.spec.conversion.webhook.clientConfig.service.name = "old"), []],
    ["namespace", (x) => (x.spec.conversion.webhook.clientConfig.service.namespace = "o"), []],
    ["no service", (x) => delete x.spec.conversion.webhook.clientConfig.service, []],
    ["hash", (x) => (x.metadata.annotations[PLAN_HASH] = "sha256:old"), [
      { op: "add", path: PH, value: HASH },
    ]],
    ["no hash", (x) => delete x.metadata.annotations[PLAN_HASH], [
      { op: "add", path: PH, value: HASH },
    ]],
  ];
  for (const [what, edit, annotationOps] of cases) {
    const x = xrd("v2", (x) => {
      x.metadata.annotations = { [MANAGED_BY]: CONFIG, [PLAN_HASH]: HASH };
      x.spec.conversion = ourConversion("Q0E=");
      edit(x);
    });
    const d = decideXrdGuard(request(x), lookup);
    assert.deepEqual(d.patch, [
      ...annotationOps,
      { op: "replace", path: "/spec/conversion", value: ourConversion("Q0E=") },
    ], what);
    assert.match(d.reason, /incoming strategy "Webhook"/, what);
  }
});

Deno.test("xrd guard step 5: conversionReviewVersions from the spec, port 443 for an old status", () => {
  const config = appliedConfig((c) => {
    c.spec.conversionReviewVersions = ["v1", "v1beta1"];
    delete c.status.webhookPort;
  });
  const d = decideXrdGuard(request(xrd("v2")), lookupOf(config));
  const expected = ourConversion();
  expected.webhook.clientConfig.service.port = 443;
  expected.webhook.conversionReviewVersions = ["v1", "v1beta1"];
  assert.deepEqual(d.patch[1], { op: "add", path: "/spec/conversion", value: expected });
  // Empty list ⇒ ["v1"].
  const empty = appliedConfig((c) => (c.spec.conversionReviewVersions = []));
  assert.deepEqual(decideXrdGuard(request(xrd("v2")), lookupOf(empty)).patch, FULL_RESTORE());
});

Deno.test("xrd guard step 5: an unparsable webhookURL → allowed unchanged", () => {
  for (
    const url of [
      "",
      "not a url",
      "https://dco-webhook-server.dco-system/convert/x",
      "https://dco-webhook-server.dco-system.svc.cluster.local/convert/x",
      "https://10.0.0.1/convert/x",
      "https://.dco-system.svc/convert/x",
    ]
  ) {
    assertAllowed(
      request(xrd("v2")),
      lookupOf(appliedConfig((c) => (c.status.webhookURL = url))),
      /does not name a Service/,
    );
  }
  assert.deepEqual(serviceOfWebhookURL("https://a.b.svc/convert/x"), { name: "a", namespace: "b" });
  assert.deepEqual(serviceOfWebhookURL("https://a.b.svc:8443/p"), { name: "a", namespace: "b" });
  // A foreign webhook stays foreign regardless of the URL.
  const foreign = xrd("v2", (x) => (x.spec.conversion = { strategy: "Webhook" }));
  assertAllowed(
    request(foreign),
    lookupOf(appliedConfig((c) => (c.status.webhookURL = "x"))),
    /never hijacked/,
  );
});

Deno.test("xrd guard step 5: the caBundle is kept when present and never added", () => {
  const lookup = lookupOf(appliedConfig());
  // Present on the incoming object (strategy None with a leftover webhook block): kept.
  const kept = xrd("v2", (x) => {
    x.spec.conversion = {
      strategy: "None",
      webhook: { clientConfig: { caBundle: "S0VFUA==", url: "https://x" } },
    };
  });
  const d = decideXrdGuard(request(kept), lookup);
  assert.deepEqual(d.patch, [
    FULL_RESTORE()[0],
    { op: "replace", path: "/spec/conversion", value: ourConversion("S0VFUA==") },
  ]);
  // The url is gone (service and url are exclusive); the caBundle stayed.
  const patched = applyPatch(kept, d.patch);
  assert.equal(patched.spec.conversion.webhook.clientConfig.url, undefined);
  assert.equal(patched.spec.conversion.webhook.clientConfig.caBundle, "S0VFUA==");
  // Absent (or empty): not added — not even from the config.
  const none = decideXrdGuard(request(xrd("v2")), lookup);
  assert.equal(JSON.stringify(none.patch).includes("caBundle"), false);
  const emptyCA = xrd("v2", (x) => {
    x.spec.conversion = { strategy: "None", webhook: { clientConfig: { caBundle: "" } } };
  });
  assert.equal(
    JSON.stringify(decideXrdGuard(request(emptyCA), lookup).patch).includes("caBundle"),
    false,
  );
});

Deno.test("xrd guard: the patch is computed against the object at the version it arrived at (v1 and v2)", () => {
  const lookup = lookupOf(appliedConfig());
  const v1 = xrd("v1", (x) => {
    x.metadata.annotations = { "crossplane.io/paused": "false" };
    x.spec.conversion = { strategy: "None" };
  });
  const v2 = xrd("v2");
  const d1 = decideXrdGuard(request(v1, "UPDATE", "v1"), lookup);
  const d2 = decideXrdGuard(request(v2, "UPDATE", "v2"), lookup);
  assert.deepEqual(d1.patch, [
    { op: "add", path: MB, value: CONFIG },
    { op: "add", path: PH, value: HASH },
    { op: "replace", path: "/spec/conversion", value: ourConversion() },
  ]);
  assert.deepEqual(d2.patch, FULL_RESTORE());
  // Each applies cleanly to its own object; the v1-only field (claimNames) is untouched.
  const p1 = applyPatch(v1, d1.patch);
  assert.equal(p1.apiVersion, "apiextensions.crossplane.io/v1");
  assert.deepEqual(p1.spec.claimNames, { kind: "Net", plural: "nets" });
  assert.deepEqual(p1.spec.conversion, ourConversion());
  const p2 = applyPatch(v2, d2.patch);
  assert.equal(p2.apiVersion, "apiextensions.crossplane.io/v2");
  assert.deepEqual(p2.spec.conversion, ourConversion());
  // Re-invoked on its own output (reinvocationPolicy IfNeeded): nothing more to do.
  assertAllowed(request(p1, "UPDATE", "v1"), lookup, /already carries/);
  assertAllowed(request(p2), lookup, /already carries/);
});

// ---------------------------------------------------------------------------------------------
// The AdmissionReview answer and the route

Deno.test("xrd guard: response — no patch when allowing, base64 JSONPatch when restoring", () => {
  assert.deepEqual(xrdGuardResponse("u1", { patch: [], reason: "r" }), {
    uid: "u1",
    allowed: true,
  });
  const ops: JsonPatchOp[] = [{ op: "add", path: MB, value: "ñ" }];
  const r = xrdGuardResponse("u2", { patch: ops, reason: "r" });
  assert.equal(r.patchType, "JSONPatch");
  const bytes = Uint8Array.from(atob(r.patch!), (c) => c.charCodeAt(0));
  assert.deepEqual(JSON.parse(new TextDecoder().decode(bytes)), ops);
});

const noCtx = {} as AdmissionContext;

function review(object: unknown, operation = "UPDATE"): unknown {
  return {
    apiVersion: ADMISSION_REVIEW_API_VERSION,
    kind: ADMISSION_REVIEW_KIND,
    request: {
      uid: "uid-1",
      operation,
      name: XRD,
      kind: {
        group: "apiextensions.crossplane.io",
        version: "v2",
        kind: "CompositeResourceDefinition",
      },
      resource: {
        group: "apiextensions.crossplane.io",
        version: "v2",
        resource: "compositeresourcedefinitions",
      },
      object,
    },
  };
}

Deno.test("xrd guard route: served at /guard-xrd-conversion only when enabled", async () => {
  const decisions: string[] = [];
  const opts = {
    ctx: noCtx,
    xrdGuard: {
      lookup: lookupOf(appliedConfig()),
      onDecision: (d: { patch: unknown[] }, name: string, op: string) =>
        decisions.push(`${op} ${name} ${d.patch.length}`),
    },
  };
  const a = await answerAdmission(
    opts,
    `${XRD_GUARD_PATH}?timeout=5s`,
    "POST",
    JSON.stringify(review(xrd("v2"))),
  );
  assert.equal(a.status, 200);
  if (a.status !== 200) return;
  assert.equal(a.review.response.uid, "uid-1");
  assert.equal(a.review.response.allowed, true);
  assert.equal(a.review.response.patchType, "JSONPatch");
  assert.deepEqual(JSON.parse(atob(a.review.response.patch!)), FULL_RESTORE());
  assert.deepEqual(decisions, [`UPDATE ${XRD} 2`]);

  // An allow: no patch; a decode failure: allowed too.
  const b = await answerAdmission(opts, XRD_GUARD_PATH, "POST", review("garbage"));
  assert.deepEqual(b.status === 200 && b.review.response, { uid: "uid-1", allowed: true });
  // Not POST, not enabled.
  assert.equal((await answerAdmission(opts, XRD_GUARD_PATH, "GET", "")).status, 405);
  assert.equal(
    (await answerAdmission({ ctx: noCtx }, XRD_GUARD_PATH, "POST", review(xrd("v2")))).status,
    404,
  );
  // A throwing onDecision does not change the answer.
  const c = await answerAdmission(
    {
      ctx: noCtx,
      xrdGuard: {
        lookup: lookupOf(),
        onDecision: () => {
          throw new Error("x");
        },
      },
    },
    XRD_GUARD_PATH,
    "POST",
    review(xrd("v2")),
  );
  assert.deepEqual(c.status === 200 && c.review.response, { uid: "uid-1", allowed: true });
});

Deno.test("xrd guard lookup: the XRD config cache's target index", () => {
  const configs: Obj[] = [appliedConfig(), appliedConfig((c) => (c.metadata.name = "b"))];
  const fake = {
    indexKeys: (index: string, value: string) =>
      index === "target" && value === XRD ? ["nets", "b", "gone"] : [],
    get: (key: string) => configs.find((c) => c.metadata.name === key),
  } as unknown as Informer;
  const lookup = xrdGuardLookup({ configs: new Map([[XRD_CONFIG_KIND, fake]]) });
  assert.deepEqual(lookup(XRD).map((c: Obj) => c.metadata.name), ["nets", "b"]);
  assert.deepEqual(lookup("other"), []);
  assert.deepEqual(xrdGuardLookup({ configs: new Map() })(XRD), []);
});

Deno.test("xrd guard route: a restore is confirmed live first; a config no longer Applied is not restored", async () => {
  const notApplied = appliedConfig((c) => {
    c.status.phase = "Failed";
    c.status.conditions = [{ type: "Applied", status: "False", reason: "Reverting" }];
  });
  const confirmed: string[] = [];
  const answer = async (confirm: (x: string, cached: readonly unknown[]) => Promise<unknown[]>) => {
    const a = await answerAdmission(
      { ctx: noCtx, xrdGuard: { lookup: lookupOf(appliedConfig()), confirm } },
      XRD_GUARD_PATH,
      "POST",
      review(xrd("v2")),
    );
    assert.equal(a.status, 200);
    return a.status === 200 ? a.review.response : undefined;
  };
  // The cache still says Applied=True; the live read says the revert is under way: allowed.
  const r1 = await answer((x, cached) => {
    confirmed.push(`${x} ${cached.map((c: Obj) => c.metadata.name).join(",")}`);
    return Promise.resolve([notApplied]);
  });
  assert.deepEqual(r1, { uid: "uid-1", allowed: true });
  assert.deepEqual(confirmed, [`${XRD} ${CONFIG}`]);
  // Live still Applied: restored.
  const r2 = await answer(() => Promise.resolve([appliedConfig()]));
  assert.deepEqual(JSON.parse(atob(r2!.patch!)), FULL_RESTORE());
  // The live read fails: allowed (fails open).
  const r3 = await answer(() => Promise.reject(new Error("connection refused")));
  assert.deepEqual(r3, { uid: "uid-1", allowed: true });
  // An allow from the cache is never read live.
  confirmed.length = 0;
  const a = await answerAdmission(
    {
      ctx: noCtx,
      xrdGuard: {
        lookup: lookupOf(notApplied),
        confirm: () => {
          confirmed.push("read");
          return Promise.resolve([appliedConfig()]);
        },
      },
    },
    XRD_GUARD_PATH,
    "POST",
    review(xrd("v2")),
  );
  assert.deepEqual(a.status === 200 && a.review.response, { uid: "uid-1", allowed: true });
  assert.deepEqual(confirmed, []);
});

Deno.test("xrd guard confirm: each cached config read live; gone or retargeted ones dropped", async () => {
  const live = new Map<string, Obj>([
    [CONFIG, appliedConfig()],
    [
      "moved",
      appliedConfig((c) => {
        c.metadata.name = "moved";
        c.spec.targetXRD.name = "xother.example.org";
      }),
    ],
  ]);
  const reads: string[] = [];
  const client = {
    get: (_ref: unknown, name: string) => {
      reads.push(name);
      const c = live.get(name);
      return c === undefined
        ? Promise.reject(new KubeApiError(404, "NotFound", `${name} not found`))
        : Promise.resolve(structuredClone(c));
    },
  } as unknown as Pick<KubeClient, "get">;
  const cached = [CONFIG, "moved", "gone"].map((n) => appliedConfig((c) => (c.metadata.name = n)));
  const out = await xrdGuardConfirm(client)(XRD, cached);
  assert.deepEqual(reads, [CONFIG, "moved", "gone"]);
  assert.deepEqual(out.map((c: Obj) => c.metadata.name), [CONFIG]);
});
