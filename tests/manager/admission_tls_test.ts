/**
 * The manager's admission listener behind the certificate gate: it is the same `TlsServer` as the
 * conversion listener, so a pair in `--webhook-cert-dir` that is unusable keeps the manager's
 * `/readyz` at 503 with the reason (the manager keeps running), and a good pair lifts the gate.
 */
import assert from "node:assert/strict";
import type { KubeClient } from "../../src/kube/mod.ts";
import { type AdmissionStartup, startAdmission } from "../../src/manager/admission_setup.ts";
import type { ManagerCaches } from "../../src/manager/caches.ts";
import { parseManagerFlags } from "../../src/manager/flags.ts";
import { Readiness, type ServerHandle, type TlsServer } from "../../src/net/mod.ts";
import { createLogger } from "../../src/obs/log.ts";
import { testCerts, writePair } from "../webhook/_helpers.ts";

Deno.test("admission: an unusable pair in the cert dir holds the manager unready until a good one", async () => {
  const certs = await testCerts();
  const dir = await Deno.makeTempDir({ prefix: "dco-admission-tls-" });
  const readiness = new Readiness();
  readiness.set(true); // the caches synced: only the certificate decides
  let server: TlsServer | undefined;
  const role: AdmissionStartup = {
    log: createLogger("test.admission"),
    readiness,
    exitIfStopping: () => Promise.resolve(),
    async listen<S extends ServerHandle>(
      _failure: string,
      _address: string,
      start: () => Promise<S>,
    ) {
      const s = await start();
      server = s as unknown as TlsServer;
      return s;
    },
    fail: (message) => Promise.reject(new Error(message)),
    onStop: () => {},
  };
  const deps = {
    client: {} as KubeClient,
    caches: { configs: new Map(), servers: { list: () => [] } } as unknown as ManagerCaches,
    operatorNamespace: "dco-system",
  };
  const flags = parseManagerFlags([
    `--webhook-cert-dir=${dir}`,
    "--webhook-bind-address=127.0.0.1:0",
  ]);
  try {
    await writePair(dir, { cert: certs.first.cert, key: certs.strayKey });
    await startAdmission(role, deps, flags);
    assert.ok(server !== undefined, "the listener started");
    assert.equal(readiness.ready, false);
    assert.match(
      readiness.reason,
      /^no usable TLS certificate loaded from .*: tls\.key does not match the certificate in tls\.crt$/,
    );

    await writePair(dir, certs.first);
    assert.equal(await server.reloadNow(), "loaded");
    assert.equal(readiness.ready, true);
    assert.equal(readiness.reason, "");

    // A later bad pair keeps the good one: still ready.
    await Deno.writeTextFile(`${dir}/tls.crt`, "garbage");
    assert.equal(await server.reloadNow(), "failed");
    assert.equal(readiness.ready, true);
  } finally {
    await server?.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
