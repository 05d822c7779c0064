/**
 * The served-target Lease codec (docs/design/kube.md#served-target-lease-report-format): sort/dedupe/join/gzip/base64, both size bounds
 * enforced exactly at the limit in both directions (encode throws, decode is unreadable — never a
 * prefix), garbage in every layer is unreadable, and the Lease-level reader honours the truncated
 * marker.
 */
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import {
  decodeServedTargets,
  encodeServedTargets,
  MAX_DECODED_BYTES,
  MAX_ENCODED_BYTES,
  readServedReport,
  SERVED_TARGETS_ANNOTATION,
  SERVED_TARGETS_TRUNCATED_ANNOTATION,
  servedAnnotations,
  servedLeaseLabels,
  servedLeaseName,
  ServedTargetsTooLarge,
} from "../../src/api/served_lease.ts";

const b64 = (bytes: Uint8Array): string => {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
};
const gz = (text: string): string => b64(gzipSync(new TextEncoder().encode(text)));

/** Unique names that, joined with "\n", total exactly `bytes` bytes. */
function namesOfTotal(bytes: number): string[] {
  const names: string[] = [];
  let used = 0;
  for (let i = 0; used < bytes; i++) {
    const sep = names.length ? 1 : 0;
    // Long common prefixes keep the fixture compressible (well under the encoded bound).
    let name = `${"a".repeat(400)}${String(i).padStart(7, "0")}.example.com`;
    const left = bytes - used - sep;
    if (left < 2 * name.length + 2) name = name.padEnd(left, "x"); // the last one fills exactly
    names.push(name);
    used += sep + name.length;
  }
  return names;
}

/** Random names (incompressible) of about `n` names. */
function randomNames(n: number): string[] {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const out: string[] = [];
  const buf = new Uint8Array(24);
  for (let i = 0; i < n; i++) {
    crypto.getRandomValues(buf);
    out.push([...buf].map((b) => alphabet[b % alphabet.length]).join("") + ".x.io");
  }
  return out;
}

Deno.test("names, labels and constants of the Lease report format", () => {
  assert.equal(servedLeaseName("ws-abc-123"), "dco-served-ws-abc-123");
  assert.deepEqual(servedLeaseLabels("default"), {
    "conversion.terasky.com/webhook-server": "default",
    "app.kubernetes.io/managed-by": "declarative-conversion-operator",
  });
  assert.equal(SERVED_TARGETS_ANNOTATION, "conversion.terasky.com/served-targets");
  assert.equal(
    SERVED_TARGETS_TRUNCATED_ANNOTATION,
    "conversion.terasky.com/served-targets-truncated",
  );
  assert.equal(MAX_ENCODED_BYTES, 196_608);
  assert.equal(MAX_DECODED_BYTES, 1_572_864);
});

Deno.test("encode: empty set is the empty string; sorted, deduplicated, round-trips", () => {
  assert.equal(encodeServedTargets([]), "");
  assert.deepEqual(decodeServedTargets(""), { ok: true, targets: [] });
  const enc = encodeServedTargets(["b.x", "a.x", "c.x", "a.x"]);
  assert.equal(enc, gz("a.x\nb.x\nc.x"), "sort → dedupe → join \\n → gzip → base64");
  assert.deepEqual(decodeServedTargets(enc), { ok: true, targets: ["a.x", "b.x", "c.x"] });
  // The decoder normalizes a foreign (unsorted, duplicated) payload too.
  assert.deepEqual(decodeServedTargets(gz("z\na\nz")), { ok: true, targets: ["a", "z"] });
  // Order of the input does not change the bytes.
  assert.equal(encodeServedTargets(["c.x", "b.x", "a.x"]), enc);
});

Deno.test("encode rejects names that cannot round-trip", () => {
  assert.throws(() => encodeServedTargets(["a", ""]), /invalid served target name/);
  assert.throws(() => encodeServedTargets(["a\nb"]), /invalid served target name/);
});

Deno.test("decoded bound: exactly at the default limit ok, one byte over throws", () => {
  const atLimit = namesOfTotal(MAX_DECODED_BYTES);
  assert.equal(atLimit.join("\n").length, MAX_DECODED_BYTES);
  const enc = encodeServedTargets(atLimit);
  assert.ok(enc.length <= MAX_ENCODED_BYTES, "fixture compresses under the encoded bound");
  const dec = decodeServedTargets(enc);
  assert.ok(dec.ok);
  assert.equal(dec.targets.length, atLimit.length);

  const over = [...atLimit.slice(0, -1), atLimit.at(-1) + "y"];
  assert.throws(() => encodeServedTargets(over), ServedTargetsTooLarge);
});

Deno.test("decoded bound on decode: a payload one byte past the cap is unreadable, no prefix", () => {
  const text = namesOfTotal(MAX_DECODED_BYTES).sort().join("\n");
  const ok = decodeServedTargets(gz(text));
  assert.ok(ok.ok);
  const bomb = decodeServedTargets(gz(text + "z"));
  assert.equal(bomb.ok, false);
  assert.match(!bomb.ok ? bomb.reason : "", /exceeds 1572864 bytes/);
  // A real bomb (50 MB of one byte) is refused without inflating it.
  const big = decodeServedTargets(b64(gzipSync(new Uint8Array(50_000_000).fill(97))));
  assert.equal(big.ok, false);
});

Deno.test("encoded bound: exactly at the limit ok, one under the needed size throws", () => {
  const names = randomNames(200);
  const enc = encodeServedTargets(names);
  assert.equal(encodeServedTargets(names, { maxEncodedBytes: enc.length }), enc);
  assert.throws(
    () => encodeServedTargets(names, { maxEncodedBytes: enc.length - 1 }),
    ServedTargetsTooLarge,
  );
  assert.ok(decodeServedTargets(enc, { maxEncodedBytes: enc.length }).ok);
  const dec = decodeServedTargets(enc, { maxEncodedBytes: enc.length - 1 });
  assert.equal(dec.ok, false);
  // Small decoded bounds too (decode side: exactly at ok, one over unreadable).
  const text = "a.x\nb.x";
  assert.ok(decodeServedTargets(gz(text), { maxDecodedBytes: text.length }).ok);
  assert.equal(decodeServedTargets(gz(text), { maxDecodedBytes: text.length - 1 }).ok, false);
  assert.equal(encodeServedTargets(["a.x", "b.x"], { maxDecodedBytes: 7 }), gz(text));
  assert.throws(() => encodeServedTargets(["a.x", "b.x"], { maxDecodedBytes: 6 }), /7 bytes/);
});

Deno.test("encoded bound at the default: an incompressible large set throws", () => {
  const names = randomNames(12_000); // ~29 bytes each, ~340 KB, gzip ≈ 60 % ⇒ > 192 KiB base64
  assert.throws(() => encodeServedTargets(names), /more than the 196608-byte limit/);
  const { annotations, truncated } = servedAnnotations(names);
  assert.equal(truncated, true);
  assert.deepEqual(annotations, {
    [SERVED_TARGETS_ANNOTATION]: undefined,
    [SERVED_TARGETS_TRUNCATED_ANNOTATION]: "true",
  });
  // Oversize base64 text is refused before decoding.
  const long = "A".repeat(MAX_ENCODED_BYTES + 4);
  assert.equal(decodeServedTargets(long).ok, false);
});

Deno.test("garbage is unreadable at every layer", () => {
  const cases: Record<string, string> = {
    "not base64": "not base64!",
    "bad padding": "QUJD=",
    "base64 not gzip": btoa("hello world"),
    "truncated gzip": encodeServedTargets(["a", "b", "c"]).slice(0, 16),
    "gzip with trailing garbage": b64(
      new Uint8Array([...gzipSync(new TextEncoder().encode("a")), 1, 2, 3]),
    ),
    "not utf-8": b64(gzipSync(new Uint8Array([0xff, 0xfe, 0x41]))),
    "empty name": gz("a\n\nb"),
    "trailing newline": gz("a\n"),
    "embedded whitespace": " " + encodeServedTargets(["a"]),
  };
  for (const [what, value] of Object.entries(cases)) {
    const r = decodeServedTargets(value);
    assert.equal(r.ok, false, what);
  }
});

Deno.test("readServedReport: truncated marker and missing annotation", () => {
  assert.equal(
    readServedReport({
      metadata: { annotations: { [SERVED_TARGETS_TRUNCATED_ANNOTATION]: "true" } },
    }).ok,
    false,
  );
  assert.deepEqual(readServedReport({ metadata: {} }), { ok: true, targets: [] });
  assert.deepEqual(
    readServedReport({
      metadata: { annotations: { [SERVED_TARGETS_ANNOTATION]: encodeServedTargets(["x", "y"]) } },
    }),
    { ok: true, targets: ["x", "y"] },
  );
  const { annotations, truncated } = servedAnnotations(["x"]);
  assert.equal(truncated, false);
  assert.deepEqual(annotations, {
    [SERVED_TARGETS_ANNOTATION]: encodeServedTargets(["x"]),
    [SERVED_TARGETS_TRUNCATED_ANNOTATION]: undefined,
  });
});
