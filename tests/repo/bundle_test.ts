/**
 * The per-role artifacts of hack/bundle.sh (used where `deno compile` cannot fetch `denort`) run
 * on their own, outside the repo, under their roles' permission flags — all three roles (manager,
 * webhook server, convctl) — and the bundled compile, conversion and listener Workers work by
 * themselves.
 */
import assert from "node:assert/strict";
import { writeServingPair } from "../support/certs.ts";

const REPO = new URL("../../", import.meta.url).pathname;

async function run(cmd: string, args: string[], cwd = REPO) {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test({
  name: "bundled roles run outside the repo under their permission flags",
  sanitizeResources: false,
  fn: async (t) => {
    const dist = await Deno.makeTempDir({ prefix: "dco-dist-" });
    try {
      const built = await run("bash", ["hack/bundle.sh", dist]);
      assert.equal(built.code, 0, built.stderr);
      const cwd = await Deno.makeTempDir({ prefix: "dco-run-" });
      const example = `${REPO}examples/field-rename`;

      await t.step("convctl.js validates an example with read/env only", async () => {
        const r = await run(Deno.execPath(), [
          "run",
          "--allow-read",
          "--allow-env",
          `${dist}/convctl.js`,
          "validate",
          "-c",
          `${example}/config.yaml`,
          "--crd",
          `${example}/crd.yaml`,
        ], cwd);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /schema validated: true/);
      });

      await t.step("convctl.js lints the examples with its bundled Workers", async () => {
        const r = await run(Deno.execPath(), [
          "run",
          "--allow-read",
          "--allow-env",
          `${dist}/convctl.js`,
          "lint",
          example,
          "--concurrency",
          "2",
          "-o",
          "json",
        ], cwd);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(JSON.parse(r.stdout).summary.configs, 1);
      });

      await t.step(
        "webhook_server.js starts and validates its flags with net/env only",
        async () => {
          const r = await run(Deno.execPath(), [
            "run",
            "--allow-net",
            "--allow-env",
            `${dist}/webhook_server.js`,
          ], cwd);
          assert.equal(r.code, 1);
          assert.match(r.stderr, /--webhook-server-name is required/);
        },
      );

      await t.step("manager.js starts and validates its flags with net/env only", async () => {
        const r = await run(Deno.execPath(), [
          "run",
          "--allow-net",
          "--allow-env",
          `${dist}/manager.js`,
          "--certificate-mode=bogus",
        ], cwd);
        assert.equal(r.code, 1);
        assert.match(r.stdout + r.stderr, /^error: invalid flags: --certificate-mode: "bogus"/m);
      });

      await t.step("every role and each Worker has an artifact", async () => {
        const names = [];
        for await (const e of Deno.readDir(dist)) names.push(e.name);
        assert.deepEqual(names.sort(), [
          "compile_worker.js",
          "convctl.js",
          "convert_worker.js",
          "lint_worker.js",
          "listener_worker.js",
          "manager.js",
          "webhook_server.js",
        ]);
      });

      await t.step("the bundled compile Worker compiles a config", async () => {
        // A driver outside the repo posts one job to the bundled worker (deno run, as in a Pod).
        const driver = `${cwd}/driver.js`;
        await Deno.writeTextFile(
          driver,
          `import { parse } from "npm:yaml@2.9.1";
const config = parse(Deno.readTextFileSync(${JSON.stringify(`${example}/config.yaml`)}));
const crd = parse(Deno.readTextFileSync(${JSON.stringify(`${example}/crd.yaml`)}));
const w = new Worker(new URL("file://${dist}/compile_worker.js"), { type: "module" });
w.onmessage = (e) => {
  if (e.data.ready) return;
  const r = e.data.outcomes[0].result;
  console.log(JSON.stringify({ id: e.data.id, ok: r.ok, bytes: r.plans.byteLength, spokes: r.spokeVersions }));
  w.terminate();
};
w.postMessage({ id: 7, jobs: [{ kind: "crd", config, target: crd }] });
`,
        );
        const r = await run(Deno.execPath(), ["run", "--allow-read", "--allow-env", driver], cwd);
        assert.equal(r.code, 0, r.stderr);
        const reply = JSON.parse(r.stdout) as {
          id: number;
          ok: boolean;
          bytes: number;
          spokes: string[];
        };
        assert.equal(reply.id, 7);
        assert.equal(reply.ok, true);
        assert.ok(reply.bytes > 0, "the plans arrive encoded");
        assert.equal(reply.spokes.length, 1);
      });

      await t.step(
        "the bundled conversion Worker links a plan set and answers a review",
        async () => {
          // The compile Worker's result becomes a plan set; the conversion Worker answers with it.
          const driver = `${cwd}/convert_driver.js`;
          await Deno.writeTextFile(
            driver,
            `import { parse } from "npm:yaml@2.9.1";
const config = parse(Deno.readTextFileSync(${JSON.stringify(`${example}/config.yaml`)}));
const crd = parse(Deno.readTextFileSync(${JSON.stringify(`${example}/crd.yaml`)}));
const c = new Worker(new URL("file://${dist}/compile_worker.js"), { type: "module" });
const v = new Worker(new URL("file://${dist}/convert_worker.js"), { type: "module" });
c.onmessage = (e) => {
  if (e.data.ready) return;
  c.terminate();
  const r = e.data.outcomes[0].result;
  const entry = { ...r, compiledAt: 0, lastError: "", lastErrorReason: null, lastErrorAt: null };
  v.postMessage({ t: "init", settings: {}, metrics: false });
  v.postMessage({ t: "reset", sets: [{ version: 3, entries: [entry] }] });
  const review = { apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview",
    request: { uid: "u-1", desiredAPIVersion: crd.spec.group + "/" + r.hubVersion, objects: [] } };
  const body = new TextEncoder().encode(JSON.stringify(review));
  v.postMessage({ t: "convert", id: 1, version: 3, target: r.target, body, startedAt: 0 },
    [body.buffer]);
};
v.onmessage = (e) => {
  if (e.data.t === "ack") { console.log(JSON.stringify(e.data)); return; }
  console.log(JSON.stringify({ status: e.data.status, body: new TextDecoder().decode(e.data.body) }));
  v.terminate();
};
c.postMessage({ id: 1, jobs: [{ kind: "crd", config, target: crd }] });
`,
          );
          const r = await run(Deno.execPath(), ["run", "--allow-read", "--allow-env", driver], cwd);
          assert.equal(r.code, 0, r.stderr);
          const [ack, answer] = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
          assert.deepEqual(ack, { t: "ack", version: 3 });
          assert.equal(answer.status, 200);
          assert.deepEqual(JSON.parse(answer.body).response, {
            uid: "u-1",
            result: { status: "Success" },
            convertedObjects: [],
          });
        },
      );
      await t.step(
        "the bundled listener Worker serves a review on its own TLS port",
        async () => {
          const certDir = `${cwd}/tls`;
          await Deno.mkdir(certDir);
          await writeServingPair(certDir, {
            caName: "bundle-ca",
            commonName: "bundle",
            hosts: ["127.0.0.1"],
          });
          const driver = `${cwd}/listener_driver.js`;
          await Deno.writeTextFile(
            driver,
            `import { parse } from "npm:yaml@2.9.1";
const config = parse(Deno.readTextFileSync(${JSON.stringify(`${example}/config.yaml`)}));
const crd = parse(Deno.readTextFileSync(${JSON.stringify(`${example}/crd.yaml`)}));
const read = (f) => Deno.readTextFileSync(${JSON.stringify(certDir)} + "/" + f);
const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
const port = probe.addr.port;
probe.close();
const c = new Worker(new URL("file://${dist}/compile_worker.js"), { type: "module" });
const l = new Worker(new URL("file://${dist}/listener_worker.js"), { type: "module" });
const cells = new SharedArrayBuffer(7 * 4);
Atomics.store(new Int32Array(cells), 3, 3);
let target;
c.onmessage = (e) => {
  if (e.data.ready) return;
  c.terminate();
  const r = e.data.outcomes[0].result;
  target = r.target;
  const entry = { ...r, compiledAt: 0, lastError: "", lastErrorReason: null, lastErrorAt: null };
  l.postMessage({ t: "init", index: 0, cells, settings: {}, inlineMaxBytes: 262144,
    bounds: { maxRequestsInFlight: 4, maxRequestBytesInFlight: 1048576 },
    limits: { headerTimeoutMs: 10000, requestTimeoutMs: 35000, idleTimeoutMs: 120000,
      maxHeaderBytes: 1048576, maxConnections: 0 } });
  l.postMessage({ t: "reset", sets: [{ version: 3, entries: [entry] }] });
  l.postMessage({ t: "pair", pair: { cert: read("tls.crt"), key: read("tls.key") } });
  l.postMessage({ t: "listen", hostname: "127.0.0.1", port });
};
l.onmessage = async (e) => {
  if (e.data.t !== "listening") return;
  const client = Deno.createHttpClient({ caCerts: [read("ca.crt")] });
  const review = { apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview",
    request: { uid: "u-2", desiredAPIVersion: crd.spec.group + "/v1", objects: [] } };
  const res = await fetch("https://127.0.0.1:" + port + "/convert/" + target,
    { method: "POST", body: JSON.stringify(review), client });
  console.log(JSON.stringify({ status: res.status, body: await res.text() }));
  client.close();
  l.terminate();
};
c.postMessage({ id: 1, jobs: [{ kind: "crd", config, target: crd }] });
`,
          );
          const r = await run(Deno.execPath(), [
            "run",
            "--allow-read",
            "--allow-env",
            "--allow-net",
            driver,
          ], cwd);
          assert.equal(r.code, 0, r.stderr);
          const answer = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
          assert.equal(answer.status, 200);
          assert.deepEqual(JSON.parse(answer.body).response, {
            uid: "u-2",
            result: { status: "Success" },
            convertedObjects: [],
          });
        },
      );
      await Deno.remove(cwd, { recursive: true });
    } finally {
      await Deno.remove(dist, { recursive: true });
    }
  },
});
