/**
 * `--verify-propagation`'s look at the applied config: the webhook its status says it applied
 * (`webhookPath`, `webhookPort`) against the one the live XRD points at. The cluster reads are in
 * tests/e2e/convctl_live_test.ts.
 */
import assert from "node:assert/strict";
import { statusWebhookMismatch } from "../../src/cli/propagation_live.ts";

const SERVICE = {
  serviceName: "main",
  serviceNamespace: "dco-system",
  path: "/convert/xnets.example.org",
  port: 9443,
  conversionReviewVersions: ["v1"],
  caBundleHash: "sha256:00",
};

Deno.test("statusWebhookMismatch: the status' path and port against the XRD's Service", () => {
  assert.deepEqual(
    statusWebhookMismatch({ webhookPath: SERVICE.path, webhookPort: 9443 }, SERVICE),
    { matches: true },
  );
  assert.deepEqual(
    statusWebhookMismatch({ webhookPath: "/convert/other", webhookPort: 443 }, SERVICE),
    {
      matches: false,
      message: "the config's status says webhookPath /convert/other, the XRD's path " +
        "/convert/xnets.example.org; webhookPort 443, the XRD's port 9443",
    },
  );
  // Nothing to compare: no status fields yet, a URL webhook, or an XRD with no webhook.
  assert.equal(statusWebhookMismatch({}, SERVICE), undefined);
  assert.equal(statusWebhookMismatch(undefined, SERVICE), undefined);
  assert.equal(
    statusWebhookMismatch({ webhookPath: "/x" }, {
      url: "https://h/convert",
      conversionReviewVersions: ["v1"],
      caBundleHash: "",
    }),
    undefined,
  );
  assert.equal(statusWebhookMismatch({ webhookPath: "/x" }, "no webhook"), undefined);
});
