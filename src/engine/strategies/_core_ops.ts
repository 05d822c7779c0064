/**
 * Ops shared by every plan: identity copy (auto-coverage, FieldRename), the `when` gate and the
 * passthrough of undeclared nested keys (engine.md §4.5, §4.6, §5.7).
 */
import type { KnownTree } from "../schema.ts";
import type { OpLinker } from "../strategy.ts";
import type { JsonObject, JsonValue } from "../types.ts";
import { ABSENT, deepCopy, getPath, isMap, jsonEqual, setPath } from "../value.ts";

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
 * Copies keys the merged known tree does not declare: skipped at the root, deep-copied below it.
 * Known terminals are skipped; known structured nodes are walked when the input holds a map.
 */
export const linkPassthrough: OpLinker = (op) => {
  const tree = op.tree as KnownTree;
  return (input, output) => {
    for (const key in tree) {
      const child = tree[key];
      if (child === null || !Object.hasOwn(input, key)) continue;
      const v = input[key];
      if (isMap(v)) walk(v, child, output, [key]);
    }
  };
};

function walk(input: JsonObject, tree: KnownTree, output: JsonObject, at: string[]): void {
  for (const key in input) {
    if (!Object.hasOwn(input, key)) continue;
    if (!Object.hasOwn(tree, key)) {
      at.push(key);
      setPath(output, at, deepCopy(input[key]));
      at.pop();
      continue;
    }
    const child = tree[key];
    const v = input[key];
    if (child !== null && isMap(v)) {
      at.push(key);
      walk(v, child, output, at);
      at.pop();
    }
  }
}

export const CORE_OPS: Record<string, OpLinker> = {
  copy: linkCopy,
  when: linkWhen,
  passthrough: linkPassthrough,
};
