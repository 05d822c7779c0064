/**
 * Ops shared by every plan: identity copy (auto-coverage, FieldRename), the `when` gate and the
 * passthrough of undeclared nested keys (engine.md §4.5, §4.6, §5.7).
 */
import type { CarryTree } from "../schema.ts";
import type { OpLinker } from "../strategy.ts";
import type { JsonObject, JsonValue } from "../types.ts";
import {
  ABSENT,
  ConversionError,
  deepCopy,
  getPath,
  isMap,
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
 * Output maps are created only when something is written under them (§5.7 "empty containers").
 */
export const linkCarry: OpLinker = (op) => {
  const tree = linkTree(op.tree as CarryTree);
  return (input, output) => carry(input, tree, output, true);
};

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

function carry(input: JsonObject, tree: LinkedTree, out: JsonObject, root: boolean): void {
  const keys = Object.keys(input);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const node = tree.get(key);
    if (node === "skip") continue;
    const v = input[key];
    if (node === undefined) {
      if (!root) setKey(out, key, deepCopy(v));
    } else if (node === "copy") {
      setKey(out, key, deepCopy(v));
    } else if (isMap(v)) {
      carryInto(v, node, out, key);
    }
  }
}

/** Descends into `out[key]`, creating it only if the walk below writes something. */
function carryInto(input: JsonObject, tree: LinkedTree, parent: JsonObject, key: string): void {
  const existing = Object.hasOwn(parent, key) ? parent[key] : undefined;
  if (existing !== undefined) {
    if (!isMap(existing)) {
      throw new ConversionError(
        `cannot write under ${key}: it is a ${typeName(existing)}, not a map`,
      );
    }
    carry(input, tree, existing, false);
    return;
  }
  const fresh: JsonObject = {};
  carry(input, tree, fresh, false);
  for (const _ in fresh) {
    setKey(parent, key, fresh);
    return;
  }
}

export const CORE_OPS: Record<string, OpLinker> = {
  copy: linkCopy,
  when: linkWhen,
  carry: linkCarry,
};
