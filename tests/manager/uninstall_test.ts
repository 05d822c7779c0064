/**
 * `manager --prepare-uninstall` (src/manager/uninstall.ts): refuses while configs exist (naming
 * them), else deletes every ConversionWebhookServer and waits, bounded, until they are gone.
 */
import assert from "node:assert/strict";
import type { ConfigKind } from "../../src/api/mod.ts";
import type { KubeObject } from "../../src/kube/mod.ts";
import { parseManagerFlags } from "../../src/manager/flags.ts";
import { prepareUninstall, type UninstallDeps } from "../../src/manager/uninstall.ts";

/** A retryable failure (a busy apiserver). */
class Transient extends Error {}

interface Line {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

function obj(name: string, extra: Partial<KubeObject["metadata"]> = {}, status?: unknown) {
  return { metadata: { name, ...extra }, ...(status ? { status } : {}) } as KubeObject;
}

/**
 * A fake cluster: configs per kind, servers; a deleted server gets a deletionTimestamp and is
 * removed by the "manager" `finalizeAfter` polls later (never when undefined).
 */
function fake(opts: {
  configs?: Partial<Record<ConfigKind, KubeObject[]>>;
  servers?: KubeObject[];
  finalizeAfter?: number;
  deleteError?: Error;
  listConfigsError?: Error;
}) {
  let now = 0;
  const lines: Line[] = [];
  const servers = new Map((opts.servers ?? []).map((s) => [s.metadata.name!, s]));
  const deleted: string[] = [];
  const deletedAt = new Map<string, number>();
  let lists = 0;
  const deps: UninstallDeps = {
    listConfigs(kind) {
      if (opts.listConfigsError) return Promise.reject(opts.listConfigsError);
      return Promise.resolve(opts.configs?.[kind] ?? []);
    },
    listServers() {
      lists++;
      for (const [name, at] of deletedAt) {
        if (opts.finalizeAfter !== undefined && lists - at >= opts.finalizeAfter) {
          servers.delete(name);
          deletedAt.delete(name);
        }
      }
      return Promise.resolve([...servers.values()]);
    },
    deleteServer(name) {
      if (opts.deleteError) return Promise.reject(opts.deleteError);
      deleted.push(name);
      const s = servers.get(name);
      if (s) {
        s.metadata.deletionTimestamp = "2024-01-01T00:00:00Z";
        deletedAt.set(name, lists);
      }
      return Promise.resolve();
    },
    isRetryable: (e) => e instanceof Transient,
    sleep(ms) {
      now += ms;
      return Promise.resolve();
    },
    now: () => now,
    logger: {
      info: (msg, fields) => lines.push({ level: "info", msg, fields }),
      warn: (msg, fields) => lines.push({ level: "warn", msg, fields }),
      error: (msg, fields) => lines.push({ level: "error", msg, fields }),
    },
  };
  return { deps, lines, deleted, servers, clock: () => now };
}

Deno.test("prepare-uninstall: configs left ⇒ exit 1 naming them, nothing deleted", async () => {
  const f = fake({
    configs: {
      CRDConversionConfig: [obj("gadgets")],
      XRDConversionConfig: [obj("xa", { deletionTimestamp: "2024-01-01T00:00:00Z" })],
    },
    servers: [obj("default")],
    finalizeAfter: 1,
  });
  const r = await prepareUninstall(f.deps, { timeoutMs: 10_000 });
  assert.equal(r.code, 1);
  assert.match(r.message, /^cannot uninstall: 2 conversion config\(s\) still exist: /);
  assert.match(
    r.message,
    /gadgets \(CRDConversionConfig\), xa \(XRDConversionConfig, being deleted\)/,
  );
  assert.match(r.message, /strand the conversion of their targets/);
  assert.match(r.message, /Delete the configs first/);
  assert.match(r.message, /conversion\.terasky\.com\/allow-unsafe-delete=true/);
  assert.deepEqual(f.deleted, []);
  assert.equal(f.servers.size, 1);
  assert.equal(f.lines.at(-1)?.level, "error");
  assert.equal(f.lines.at(-1)?.msg, r.message);
});

Deno.test("prepare-uninstall: many configs are capped at 20 names", async () => {
  const many = Array.from({ length: 23 }, (_, i) => obj(`c${String(i).padStart(2, "0")}`));
  const f = fake({ configs: { CRDConversionConfig: many } });
  const r = await prepareUninstall(f.deps, { timeoutMs: 1000 });
  assert.equal(r.code, 1);
  assert.match(r.message, /23 conversion config\(s\)/);
  assert.match(r.message, /c19 \(CRDConversionConfig\) … and 3 more/);
  assert.doesNotMatch(r.message, /c20/);
});

Deno.test("prepare-uninstall: no configs ⇒ every server deleted, waited for, exit 0", async () => {
  const f = fake({
    servers: [obj("default"), obj("other"), obj("going", { deletionTimestamp: "x" })],
    finalizeAfter: 3,
  });
  // "going" was already being deleted by someone else: not deleted again; it stays until
  // removed below (it never got a deletedAt here), so drop it by hand after a while.
  const origList = f.deps.listServers;
  let calls = 0;
  f.deps.listServers = async () => {
    if (++calls === 3) f.servers.delete("going");
    return await origList();
  };
  const r = await prepareUninstall(f.deps, { timeoutMs: 60_000, pollMs: 1000 });
  assert.equal(r.code, 0, r.message);
  assert.equal(r.message, "uninstall prepared: 3 ConversionWebhookServer(s) deleted");
  assert.deepEqual(f.deleted.sort(), ["default", "other"]);
  assert.equal(f.servers.size, 0);
  assert.ok(f.clock() >= 2000 && f.clock() < 60_000, `waited ${f.clock()} ms`);
  assert.ok(f.lines.every((l) => l.level === "info"), JSON.stringify(f.lines));
});

Deno.test("prepare-uninstall: nothing to do ⇒ exit 0 at once", async () => {
  const f = fake({});
  const r = await prepareUninstall(f.deps, { timeoutMs: 1000 });
  assert.deepEqual(r, {
    code: 0,
    message: "uninstall prepared: 0 ConversionWebhookServer(s) deleted",
  });
  assert.equal(f.clock(), 0);
});

Deno.test("prepare-uninstall: servers that stay ⇒ exit 1 after the timeout, naming them", async () => {
  const blocked = {
    conditions: [{
      type: "DeletionBlocked",
      status: "True",
      message: "deletion blocked: 1 config",
    }],
  };
  const f = fake({ servers: [obj("default", {}, blocked)] }); // never finalized: no manager
  const r = await prepareUninstall(f.deps, { timeoutMs: 5000, pollMs: 1000 });
  assert.equal(r.code, 1);
  assert.equal(f.clock(), 5000, "bounded by the timeout");
  assert.match(r.message, /after 5s 1 ConversionWebhookServer\(s\) still exist: /);
  assert.match(r.message, /default \(deletion blocked: 1 config\)/);
  assert.match(r.message, /Is the manager running\?/);
});

Deno.test("prepare-uninstall: a refused delete or a failed list ⇒ exit 1 with the error", async () => {
  const refused = fake({
    servers: [obj("default")],
    deleteError: new Error('admission webhook "vconversionwebhookserver" denied the request'),
  });
  const r = await prepareUninstall(refused.deps, { timeoutMs: 1000 });
  assert.equal(r.code, 1);
  assert.match(r.message, /deleting ConversionWebhookServer default failed: admission webhook/);
  const listing = fake({ listConfigsError: new Error("forbidden") });
  const l = await prepareUninstall(listing.deps, { timeoutMs: 1000 });
  assert.equal(l.code, 1);
  assert.match(l.message, /listing XRDConversionConfigs failed: forbidden/);
});

Deno.test("prepare-uninstall: transient list errors while waiting are retried", async () => {
  const f = fake({ servers: [obj("default")], finalizeAfter: 2 });
  const orig = f.deps.listServers;
  let calls = 0;
  f.deps.listServers = async () => {
    if (++calls === 2) throw new Error("connection reset");
    return await orig();
  };
  const r = await prepareUninstall(f.deps, { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.message);
  assert.ok(f.lines.some((l) => l.level === "warn" && /retrying/.test(l.msg)));
});

Deno.test("prepare-uninstall flags: --prepare-uninstall and a positive timeout", () => {
  const d = parseManagerFlags([]);
  assert.equal(d.prepareUninstall, false);
  assert.equal(d.prepareUninstallTimeoutMs, 120_000);
  const f = parseManagerFlags(["--prepare-uninstall", "--prepare-uninstall-timeout=2m30s"]);
  assert.equal(f.prepareUninstall, true);
  assert.equal(f.prepareUninstallTimeoutMs, 150_000);
  assert.equal(
    parseManagerFlags(["--prepare-uninstall-timeout", "90s"]).prepareUninstallTimeoutMs,
    90_000,
  );
  for (const bad of ["0s", "-1s", "ten", "120"]) {
    assert.throws(
      () => parseManagerFlags([`--prepare-uninstall-timeout=${bad}`]),
      /--prepare-uninstall-timeout: .* is not a positive duration/,
      bad,
    );
  }
});

Deno.test("prepare-uninstall: retryable failures are retried within the timeout, others are not", async () => {
  // 429 "storage is (re)initializing" on the first list of a kind nobody listed yet.
  const f = fake({ servers: [obj("default")], finalizeAfter: 1 });
  let tries = 0;
  f.deps.listConfigs = (kind) => {
    if (kind === "XRDConversionConfig" && ++tries < 3) {
      return Promise.reject(new Transient("storage is (re)initializing"));
    }
    return Promise.resolve([]);
  };
  const r = await prepareUninstall(f.deps, { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.message);
  assert.equal(tries, 3);
  assert.equal(f.lines.filter((l) => l.level === "warn").length, 2);

  // Retryable but never recovering: fails once the timeout is spent.
  const g = fake({ listConfigsError: new Transient("storage is (re)initializing") });
  const gr = await prepareUninstall(g.deps, { timeoutMs: 3000 });
  assert.equal(gr.code, 1);
  assert.equal(g.clock(), 3000);
  assert.match(gr.message, /listing XRDConversionConfigs failed: storage is \(re\)initializing/);

  // Not retryable (e.g. 403): at once.
  const h = fake({ listConfigsError: new Error("forbidden") });
  const hr = await prepareUninstall(h.deps, { timeoutMs: 3000 });
  assert.equal(hr.code, 1);
  assert.equal(h.clock(), 0);
});
