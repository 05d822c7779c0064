/**
 * Random and mutated ConversionReviews for hack/fuzz_convert.ts, from a seed: every call with the
 * same seed and index gives the same bytes, so a violation can be replayed (`--seed S --only I`).
 * Each review starts as a well-formed review of the synthetic target (src/webhook/convert/_synthetic.ts)
 * and then gets one mutation of a kind chosen at random.
 */
import type { JsonObject, JsonValue } from "../src/lib/json.ts";
import { SYNTHETIC_GROUP, syntheticObject } from "../src/webhook/convert/_synthetic.ts";

/** A small, fast, seedable PRNG (mulberry32). */
export class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0;
  }
  next(): number {
    let t = (this.#s = (this.#s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
}

const VERSIONS = ["v1", "v1alpha1", "v2", "v9", "v1beta1"];
const encoder = new TextEncoder();

function baseReview(rng: Rng): JsonObject {
  const n = rng.int(0, 4);
  const from = Array.from({ length: n }, () => rng.pick(VERSIONS.slice(0, 3)));
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: {
      uid: `fuzz-${rng.int(0, 1e9)}`,
      desiredAPIVersion: `${SYNTHETIC_GROUP}/${rng.pick(VERSIONS.slice(0, 3))}`,
      objects: from.map((v, i) => syntheticObject(i, v)),
    },
  };
}

const WRONG_VALUES: readonly JsonValue[] = [
  null,
  0,
  -1,
  1.5,
  9007199254740993,
  "",
  "x",
  true,
  [],
  [1, "a"],
  {},
  { a: { b: 1 } },
];

/** Every container path of `v` (for replacing a random subtree). */
function paths(v: JsonValue, at: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v !== null && typeof v === "object") {
    for (const k of Object.keys(v)) paths(v[k], [...at, k], out);
  }
  return out;
}

function setAt(root: JsonValue, path: (string | number)[], value: JsonValue): JsonValue {
  if (path.length === 0) return value;
  let cur = root as Record<string | number, JsonValue>;
  for (const seg of path.slice(0, -1)) cur = cur[seg] as Record<string | number, JsonValue>;
  cur[path[path.length - 1]] = value;
  return root;
}

function nested(depth: number): JsonValue {
  let v: JsonValue = "leaf";
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { n: v } : [v];
  return v;
}

function objects(review: JsonObject): JsonObject[] {
  return ((review.request as JsonObject).objects as JsonObject[]) ?? [];
}

type Mutation = (rng: Rng, review: JsonObject) => Uint8Array | JsonValue;

/** The mutation kinds, each returning either a value to encode or raw bytes. */
export const MUTATIONS: Readonly<Record<string, Mutation>> = {
  valid: (_rng, r) => r,
  truncated: (rng, r) => {
    const b = encoder.encode(JSON.stringify(r));
    return b.subarray(0, rng.int(0, Math.max(0, b.length - 1)));
  },
  flippedBytes: (rng, r) => {
    const b = encoder.encode(JSON.stringify(r));
    for (let k = rng.int(1, 8); k > 0 && b.length > 0; k--) {
      b[rng.int(0, b.length - 1)] = rng.int(0, 255);
    }
    return b;
  },
  invalidUtf8: (rng, r) => {
    const b = encoder.encode(JSON.stringify(r));
    const seqs = [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80]];
    // Inside a string value when possible: after the first quote past the middle.
    let at = b.indexOf(0x22, b.length >> 1);
    if (at < 0) at = rng.int(0, b.length);
    const seq = rng.pick(seqs);
    const out = new Uint8Array(b.length + seq.length);
    out.set(b.subarray(0, at + 1));
    out.set(seq, at + 1);
    out.set(b.subarray(at + 1), at + 1 + seq.length);
    return out;
  },
  wrongType: (rng, r) => setAt(r, rng.pick(paths(r)), rng.pick(WRONG_VALUES)),
  wrongUid: (rng, r) => {
    (r.request as JsonObject).uid = rng.pick([null, 7, {}, [], "", "u".repeat(rng.int(1, 70000))]);
    return r;
  },
  hugeString: (rng, r) => {
    const size = rng.pick([64 * 1024, 256 * 1024, 1024 * 1024]);
    const objs = objects(r);
    const s = "h".repeat(size);
    if (objs.length === 0) (r.request as JsonObject).desiredAPIVersion = s;
    else {
      const o = rng.pick(objs);
      const place = rng.int(0, 2);
      if (place === 0) (o.spec as JsonObject).region = s;
      else if (place === 1) (o.metadata as JsonObject).annotations = { "example.com/big": s };
      else (o.metadata as JsonObject).labels = { [s.slice(0, 4096)]: "v" };
    }
    return r;
  },
  deepNesting: (rng, r) => {
    const objs = objects(r);
    const deep = nested(rng.int(50, 400));
    if (objs.length === 0) (r.request as JsonObject).extra = deep;
    else (rng.pick(objs).spec as JsonObject).field1 = deep;
    return r;
  },
  duplicateKeys: (rng, r) => {
    const text = JSON.stringify(r);
    const dup = rng.pick([
      ['"uid":', '"uid":"dup-first","uid":'],
      ['"apiVersion":', '"apiVersion":"x/v0","apiVersion":'],
      ['"objects":', '"objects":"not-a-list","objects":'],
      ['"metadata":', '"metadata":7,"metadata":'],
    ]);
    return encoder.encode(text.replace(dup[0], dup[1]));
  },
  mixedVersions: (rng, r) => {
    for (const o of objects(r)) {
      o.apiVersion = rng.pick([
        `${SYNTHETIC_GROUP}/${rng.pick(VERSIONS)}`,
        "other.example.com/v1",
        "v1",
        "",
        "/",
        `${SYNTHETIC_GROUP}/`,
      ]);
    }
    return r;
  },
  badMetadata: (rng, r) => {
    const objs = objects(r);
    if (objs.length === 0) objs.push(syntheticObject(0, "v1"));
    const o = rng.pick(objs);
    const m = o.metadata as JsonObject;
    switch (rng.int(0, 4)) {
      case 0:
        o.metadata = rng.pick(["a string", 3, [], true]);
        break;
      case 1:
        m.labels = { app: rng.pick([1, null, true, {}, []]) };
        break;
      case 2:
        m.annotations = rng.pick(["x", 2, [], { a: 1 }]);
        break;
      case 3:
        delete o.metadata;
        break;
      default:
        m.name = rng.pick([7, null, {}, ""]);
    }
    return r;
  },
  wrongEnvelope: (rng, r) => {
    switch (rng.int(0, 4)) {
      case 0:
        r.apiVersion = "apiextensions.k8s.io/v1beta1";
        break;
      case 1:
        r.kind = rng.pick(["AdmissionReview", "", 3]);
        break;
      case 2:
        delete r.request;
        break;
      case 3:
        (r.request as JsonObject).objects = rng.pick([null, "x", {}, 3]);
        break;
      default:
        delete (r.request as JsonObject).desiredAPIVersion;
    }
    return r;
  },
  notAReview: (rng) => rng.pick([null, 1, "x", [], [1, 2], { a: 1 }, true]),
  randomBytes: (rng) => {
    const b = new Uint8Array(rng.int(0, 2048));
    for (let i = 0; i < b.length; i++) b[i] = rng.int(0, 255);
    return b;
  },
  empty: () => new Uint8Array(0),
};

const KINDS = Object.keys(MUTATIONS);

/** Review number `index` of the run with `seed`: its mutation kind and its bytes. */
export function fuzzReview(seed: number, index: number): { kind: string; bytes: Uint8Array } {
  const rng = new Rng((seed * 0x9e3779b1 + index) >>> 0);
  const kind = rng.pick(KINDS);
  const made = MUTATIONS[kind](rng, baseReview(rng));
  return {
    kind,
    bytes: made instanceof Uint8Array ? made : encoder.encode(JSON.stringify(made)),
  };
}
