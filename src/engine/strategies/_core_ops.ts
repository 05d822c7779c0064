/**
 * Ops shared by every plan: identity copy (auto-coverage, FieldRename), the `when` gate and the
 * passthrough of undeclared nested keys.
 */
import { isJsonObject } from "../../lib/json.ts";
import type { CarryTree } from "../schema.ts";
import type { OpLinker } from "../strategy.ts";
import type { JsonObject, JsonValue } from "../types.ts";
import {
  ABSENT,
  ConversionError,
  deepCopy,
  getPath,
  jsonEqual,
  setKey,
  setPath,
  typeName,
} from "../value.ts";

/** Copy the value at `from` (input) to `to` (output); absent source writes nothing. */
export const linkCopy: OpLinker = (op) => {
  const from = op.from as string[];
  const to = op.to as string[];
  return (input, output) => {
    const v = getPath(input, from);
    if (v !== ABSENT) setPath(output, to, deepCopy(v));
  };
};

/** Runs `inner` only when the input's value at `path` equals `equals` (numbers by value). */
export const linkWhen: OpLinker = (op, link) => {
  const path = op.path as string[];
  const equals = op.equals as JsonValue;
  const [inner] = link([op.inner as { op: string }]);
  return (input, output) => {
    const v = getPath(input, path);
    if (v !== ABSENT && jsonEqual(v, equals)) inner(input, output);
  };
};

/**
 * Walks the input along the carry tree: `"copy"` leaves and undeclared keys below the root are
 * deep-copied to the same path; declared objects are descended when the input holds a map there.
 * Output maps are created only when something is written under them.
 */
export const linkCarry: OpLinker = (op, _link, options) => {
  const tree = linkTree(op.tree as CarryTree);
  const copy = options?.shareInput === true ? share : deepCopy;
  return (input, output) => carry(input, tree, output, true, copy);
};

/** The `shareInput` link option's "copy" (see LinkOptions). */
const share = (v: JsonValue): JsonValue => v;

/** The carry tree as Maps: lookups on the hot path stay monomorphic and fast. */
type LinkedTree = Map<string, LinkedTree | "copy" | "skip">;

function linkTree(tree: CarryTree): LinkedTree {
  const m: LinkedTree = new Map();
  for (const key of Object.keys(tree)) {
    const node = tree[key];
    m.set(key, typeof node === "string" ? node : linkTree(node));
  }
  return m;
}

/**
 * Objects with more keys than this are assembled with `Object.fromEntries` instead of key by key:
 * V8 turns an object into a slow dictionary once keyed stores add about 20 properties, and
 * `JSON.stringify` encodes a dictionary ~4× slower (a 40-field spec cost more to encode than to
 * convert). `fromEntries` builds a fast object at about the cost of the keyed stores.
 */
const KEYED_BUILD_LIMIT = 12;

/** Carries `input` into the output root (which the converter owns: written in place). */
function carry(
  input: JsonObject,
  tree: LinkedTree,
  out: JsonObject,
  root: boolean,
  copy: (v: JsonValue) => JsonValue,
): void {
  const added = carryLevel(input, tree, out, root, copy);
  if (added !== undefined) { for (const [key, value] of added) setKey(out, key, value); }
}

/**
 * One level of the carry walk. Values for keys `existing` already has are written in place; new
 * keys are returned in walk order (undefined when none), for the caller to attach.
 */
function carryLevel(
  input: JsonObject,
  tree: LinkedTree,
  existing: JsonObject | undefined,
  root: boolean,
  copy: (v: JsonValue) => JsonValue,
): [string, JsonValue][] | undefined {
  let added: [string, JsonValue][] | undefined;
  const put = (key: string, value: JsonValue) => {
    if (existing !== undefined && Object.hasOwn(existing, key)) setKey(existing, key, value);
    else (added ??= []).push([key, value]);
  };
  const keys = Object.keys(input);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const node = tree.get(key);
    if (node === "skip") continue;
    const v = input[key];
    if (node === undefined) {
      if (!root) put(key, copy(v));
    } else if (node === "copy") {
      put(key, copy(v));
    } else if (isJsonObject(v)) {
      const child = carryChild(v, node, existing, key, copy);
      if (child !== undefined) put(key, child);
    }
  }
  return added;
}

/**
 * Descends into `parent[key]`: returns the map to (re)attach, or undefined when nothing needs
 * attaching (nothing written below, or written in place into a small existing map).
 */
function carryChild(
  input: JsonObject,
  tree: LinkedTree,
  parent: JsonObject | undefined,
  key: string,
  copy: (v: JsonValue) => JsonValue,
): JsonObject | undefined {
  const existing = carryTarget(parent, key);
  return attachCarried(existing, carryLevel(input, tree, existing, false, copy));
}

/**
 * The output map a carry descends into under `parent[key]` (undefined when there is none yet);
 * a non-map there is a conversion error. The compiled linker (link_compiled.ts) shares it.
 */
export function carryTarget(
  parent: JsonObject | undefined,
  key: string,
): JsonObject | undefined {
  if (parent === undefined || !Object.hasOwn(parent, key)) return undefined;
  const existing = parent[key];
  if (!isJsonObject(existing)) {
    throw new ConversionError(
      `cannot write under ${key}: it is a ${typeName(existing)}, not a map`,
    );
  }
  return existing;
}

/**
 * Attaches what one carry level added (`added`, in walk order) below `existing`: returns the map
 * to (re)attach, or undefined when nothing needs attaching.
 */
function attachCarried(
  existing: JsonObject | undefined,
  added: [string, JsonValue][] | undefined,
): JsonObject | undefined {
  if (added === undefined) return undefined; // nothing new below: no empty container either
  if (existing === undefined) return Object.fromEntries(added) as JsonObject;
  if (Object.keys(existing).length + added.length <= KEYED_BUILD_LIMIT) {
    for (const [k, value] of added) setKey(existing, k, value);
    return undefined;
  }
  // Rebuilt in the same key order (existing keys first, then the carried ones).
  return Object.fromEntries([...Object.entries(existing), ...added]) as JsonObject;
}

export const CORE_OPS: Record<string, OpLinker> = {
  copy: linkCopy,
  when: linkWhen,
  carry: linkCarry,
};
