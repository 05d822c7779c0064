/**
 * The serving-certificate serial a replica reports in its Lease (src/api/served_lease.ts): one
 * spelling whichever library printed it, so the manager's CA rotation compares like with like.
 */
import assert from "node:assert/strict";
import { normalizeSerial } from "../../src/api/served_lease.ts";

Deno.test("normalizeSerial: lower case, no separators, no leading zeros; zero stays 0", () => {
  assert.equal(normalizeSerial("0A:1B:2C"), "a1b2c");
  assert.equal(normalizeSerial("00ff"), "ff");
  assert.equal(normalizeSerial("7F3e"), "7f3e");
  assert.equal(normalizeSerial("000"), "0");
  assert.equal(normalizeSerial(""), "");
});
