/** The manager's flags: defaults, forms, validation (exit 1 on a FlagError). */
import assert from "node:assert/strict";
import {
  certModeOf,
  DEFAULT_MANAGER_FLAGS,
  FlagError,
  parseManagerFlags,
  resolveCertificateMode,
  resolveOperatorNamespace,
  selfIssuedAdmission,
} from "../../src/manager/flags.ts";
import { serverChildSettings } from "../../src/manager/server_controller.ts";

Deno.test("manager flags: defaults", () => {
  const f = parseManagerFlags([]);
  assert.deepEqual(f, DEFAULT_MANAGER_FLAGS);
  assert.equal(f.metricsBindAddress, ":8080");
  assert.equal(f.healthProbeBindAddress, ":8081");
  assert.equal(f.leaderElect, false);
  assert.equal(f.maxConcurrentReconciles, 1);
  assert.equal(f.enableXrdSupport, true);
  assert.equal(f.enableCrdSupport, true);
  assert.equal(f.webhookBindAddress, ":9443");
  assert.equal(f.webhookCertDir, "/tmp/k8s-webhook-server/serving-certs");
});

Deno.test("manager flags: Go-style forms and the image alias", () => {
  const f = parseManagerFlags([
    "--leader-elect",
    "--enable-xrd-support=false",
    "--max-concurrent-reconciles",
    "4",
    "--metrics-bind-address=127.0.0.1:9090",
    "--webhook-server-image=example.com/ws:1",
    "--operator-namespace=dco-system",
    "--kubeconfig=/tmp/kc",
    "--webhook-cert-dir=/certs",
    "--leader-election-namespace",
    "leases",
  ]);
  assert.equal(f.leaderElect, true);
  assert.equal(f.enableXrdSupport, false);
  assert.equal(f.maxConcurrentReconciles, 4);
  assert.equal(f.metricsBindAddress, "127.0.0.1:9090");
  assert.equal(f.defaultWebhookServerImage, "example.com/ws:1");
  assert.equal(f.operatorNamespace, "dco-system");
  assert.equal(f.kubeconfig, "/tmp/kc");
  assert.equal(f.webhookCertDir, "/certs");
  assert.equal(f.leaderElectionNamespace, "leases");
  assert.equal(
    parseManagerFlags(["--default-webhook-server-image=x:2"]).defaultWebhookServerImage,
    "x:2",
  );
});

Deno.test("manager flags: --webhook-server-metrics-secure is the servers' metrics default", () => {
  assert.equal(parseManagerFlags([]).webhookServerMetricsSecure, false);
  const on = parseManagerFlags(["--webhook-server-metrics-secure"]);
  assert.equal(on.webhookServerMetricsSecure, true);
  assert.equal(on.metricsSecure, false, "the manager's own listener is a separate flag");
  assert.equal(serverChildSettings(on, "dco-system", "builtin").metricsSecure, true);
  assert.equal(
    serverChildSettings(parseManagerFlags([]), "dco-system", "builtin").metricsSecure,
    false,
  );
});

Deno.test("manager flags: invalid input is a FlagError", () => {
  const bad: [string[], RegExp][] = [
    [["--max-concurrent-reconciles=0"], /must be >= 1/],
    [["--max-concurrent-reconciles=-2"], /must be >= 1/],
    [["--max-concurrent-reconciles=two"], /not an integer/],
    [["--leader-elect=yes"], /true or false/],
    [["--no-such-flag"], /unknown flag: --no-such-flag/],
    [["positional"], /unexpected argument/],
    [["--metrics-bind-address=8080"], /not a \[host\]:port/],
    [["--health-probe-bind-address=:99999"], /not a \[host\]:port/],
    [["--webhook-bind-address"], /flag needs an argument: --webhook-bind-address/],
    [["--webhook-cert-dir="], /must not be empty/],
  ];
  for (const [args, message] of bad) {
    assert.throws(() => parseManagerFlags(args), (e: unknown) => {
      assert.ok(e instanceof FlagError, `${args}: ${e}`);
      assert.match((e as Error).message, message);
      return true;
    });
  }
});

Deno.test("manager flags: operator namespace precedence", () => {
  assert.equal(resolveOperatorNamespace("flag", "env", "sa"), "flag");
  assert.equal(resolveOperatorNamespace("", "env", "sa"), "env");
  assert.equal(resolveOperatorNamespace("", undefined, "sa\n"), "sa");
  assert.equal(resolveOperatorNamespace("", "", undefined), "default");
});

Deno.test("manager flags: --certificate-mode values, default auto, resolution and mapping", () => {
  assert.equal(parseManagerFlags([]).certificateMode, "auto");
  for (const m of ["auto", "cert-manager", "builtin", "existing-secret"] as const) {
    assert.equal(parseManagerFlags([`--certificate-mode=${m}`]).certificateMode, m);
  }
  assert.equal(parseManagerFlags(["--certificate-mode", "builtin"]).certificateMode, "builtin");
  assert.throws(
    () => parseManagerFlags(["--certificate-mode=selfsigned"]),
    (e: unknown) => e instanceof FlagError && /--certificate-mode/.test(e.message),
  );
  assert.equal(resolveCertificateMode("auto", true), "cert-manager");
  assert.equal(resolveCertificateMode("auto", false), "builtin");
  assert.equal(resolveCertificateMode("existing-secret", true), "existing-secret");
  assert.equal(resolveCertificateMode("builtin", true), "builtin");
  assert.equal(resolveCertificateMode("cert-manager", false), "cert-manager");
  assert.equal(certModeOf("cert-manager"), "CertManager");
  assert.equal(certModeOf("builtin"), "Builtin");
  assert.equal(certModeOf("existing-secret"), "ExistingSecret");
});

Deno.test("manager flags: --admission-* (self-issued admission certificate), default off", () => {
  const off = parseManagerFlags([]);
  assert.equal(off.admissionCertSecret, "");
  assert.equal(off.admissionService, "");
  assert.equal(off.admissionWebhookConfiguration, "");
  assert.equal(selfIssuedAdmission(off), false);
  const f = parseManagerFlags([
    "--admission-cert-secret=dco-webhook-cert",
    "--admission-service",
    "dco-webhook-service",
    "--admission-webhook-configuration=dco-validating-webhook-configuration",
  ]);
  assert.equal(f.admissionCertSecret, "dco-webhook-cert");
  assert.equal(f.admissionService, "dco-webhook-service");
  assert.equal(f.admissionWebhookConfiguration, "dco-validating-webhook-configuration");
  assert.equal(selfIssuedAdmission(f), true, "auto (the default mode)");
  assert.equal(selfIssuedAdmission({ ...f, certificateMode: "builtin" }), true);
  assert.equal(selfIssuedAdmission({ ...f, certificateMode: "cert-manager" }), false);
  assert.equal(selfIssuedAdmission({ ...f, certificateMode: "existing-secret" }), false);
  // The XRD conversion guard's MWC, like the VWC.
  assert.equal(off.admissionMutatingWebhookConfiguration, "");
  assert.equal(
    parseManagerFlags([
      "--admission-cert-secret=s",
      "--admission-service=svc",
      "--admission-mutating-webhook-configuration=dco-mutating-webhook-configuration",
    ]).admissionMutatingWebhookConfiguration,
    "dco-mutating-webhook-configuration",
  );
  // The VWC is optional.
  const noVwc = parseManagerFlags(["--admission-cert-secret=s", "--admission-service=svc"]);
  assert.equal(selfIssuedAdmission(noVwc), true);
  for (
    const args of [
      ["--admission-cert-secret=s"],
      ["--admission-service=svc"],
      ["--admission-webhook-configuration=v"],
      ["--admission-mutating-webhook-configuration=m"],
      [
        "--admission-cert-secret=s",
        "--admission-service=svc",
        "--admission-mutating-webhook-configuration=Bad_Name",
      ],
      ["--admission-cert-secret=Bad_Name", "--admission-service=svc"],
      [
        "--admission-cert-secret=s",
        "--admission-service=svc.",
        "--admission-webhook-configuration=v",
      ],
    ]
  ) {
    assert.throws(() => parseManagerFlags(args), FlagError, args.join(" "));
  }
});
