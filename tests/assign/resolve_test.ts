import assert from "node:assert/strict";
import {
  isAssignedTo,
  poolWinner,
  rendezvousHash,
  rendezvousScore,
  resolveServer,
  type ServerInfo,
  shardPool,
} from "../../src/assign/resolve.ts";

// Golden values computed with Go's hash/fnv and math.Log (the reference's formula), so a 32-bit
// hash, a string-concatenation shortcut or a different u mapping fails here.
const GOLDEN: [string, string, bigint, number, number][] = [
  ["dco-a", "widgets.example.com", 11247645260210542245n, 3.3132762889560836, 9.93982886686825],
  ["dco-b", "widgets.example.com", 7887703148652588532n, 2.9314123428201992, 8.794237028460598],
  [
    "shard-1",
    "gadgets.demo.example.com",
    2532351895250397162n,
    0.5225563732677622,
    1.5676691198032866,
  ],
  ["ünï", "x.y", 8601011166392245979n, 9.915125436059414, 29.74537630817824],
  ["", "", 12638153115695167455n, 0.46581008613569475, 1.3974302584070843],
];

Deno.test("rendezvous hash and scores match the reference bit for bit", () => {
  for (const [server, target, hash, score1, score3] of GOLDEN) {
    assert.equal(rendezvousHash(server, target), hash, `${server}/${target}`);
    assert.equal(rendezvousScore(server, target, 1), score1);
    assert.equal(rendezvousScore(server, target, 3), score3);
    assert.equal(rendezvousScore(server, target, 0), score1, "weight ≤ 0 counts as 1");
    assert.equal(rendezvousScore(server, target, -2), score1);
  }
});

const pooled = (name: string, weight?: number): ServerInfo => ({ name, sharding: { weight } });

Deno.test("precedence: explicit beats pool beats default", () => {
  const servers = [{ name: "d", default: true, sharding: {} }, pooled("p1"), { name: "pinned" }];
  assert.deepEqual(
    resolveServer({ target: "t.x", webhookServerRef: { name: "pinned" } }, servers),
    { ok: true, server: "pinned", via: "explicit" },
  );
  const r = resolveServer({ target: "t.x" }, servers);
  assert.equal(r.ok && r.via, "pool");
  assert.deepEqual(
    resolveServer({ target: "t.x" }, [{ name: "d", default: true }, { name: "e" }]),
    {
      ok: true,
      server: "d",
      via: "default",
    },
  );
});

Deno.test("resolution errors: unknown explicit server, no default, several defaults", () => {
  const missing = resolveServer({ target: "t", webhookServerRef: { name: "nope" } }, []);
  assert.equal(missing.ok, false);
  assert.match(!missing.ok ? missing.error : "", /"nope" does not match any existing/);
  const none = resolveServer({ target: "t" }, [{ name: "a" }]);
  assert.match(!none.ok ? none.error : "", /no ConversionWebhookServer is marked default/);
  const many = resolveServer({ target: "t" }, [{ name: "b", default: true }, {
    name: "a",
    default: true,
  }]);
  assert.match(!many.ok ? many.error : "", /marked default: a, b$/);
  assert.equal(isAssignedTo({ target: "t" }, [{ name: "a" }], "a"), false);
});

Deno.test("pool membership: absent sharding is out, {} is in, enabled:false is out", () => {
  const pool = shardPool([
    { name: "c", sharding: {} },
    { name: "a" },
    { name: "b", sharding: { enabled: false } },
    { name: "d", sharding: { enabled: true, weight: 2 } },
    { name: "e", sharding: null },
  ]);
  assert.deepEqual(pool.map((s) => s.name), ["c", "d"]);
});

const targets = Array.from({ length: 2000 }, (_, i) => `res${i}.group${i % 7}.example.com`);

Deno.test("adding a member moves only keys to the newcomer", () => {
  const before = [pooled("s1"), pooled("s2"), pooled("s3")];
  const after = [...before, pooled("s4")];
  let moved = 0;
  for (const t of targets) {
    const a = poolWinner(before, t);
    const b = poolWinner(after, t);
    if (a !== b) {
      moved++;
      assert.equal(b, "s4", `${t} moved from ${a} to ${b}, not to the new member`);
    }
  }
  assert.ok(moved > targets.length / 8 && moved < targets.length / 2.5, `moved ${moved}`);
});

Deno.test("removing a member moves only the keys it held", () => {
  const before = [pooled("s1"), pooled("s2"), pooled("s3"), pooled("s4")];
  const after = before.filter((s) => s.name !== "s2");
  for (const t of targets) {
    const a = poolWinner(before, t);
    const b = poolWinner(after, t);
    if (a !== "s2") assert.equal(b, a, `${t} moved although its owner ${a} stayed`);
  }
});

Deno.test("weights bias the share proportionally", () => {
  const pool = [pooled("light", 1), pooled("heavy", 3)];
  const heavy = targets.filter((t) => poolWinner(pool, t) === "heavy").length;
  const share = heavy / targets.length;
  assert.ok(share > 0.7 && share < 0.8, `heavy share ${share}`);
});
