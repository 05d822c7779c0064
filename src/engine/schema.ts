/**
 * Schema model: node classification, flattening into leaves, path resolution and
 * the "known tree" the passthrough op walks.
 */
import type { SchemaNode } from "./types.ts";
import { setKey } from "./value.ts";

export type NodeKind = "object" | "array" | "string" | "integer" | "number" | "boolean" | "unknown";
export type Construct = "" | "$ref" | "oneOf" | "anyOf" | "allOf";

export interface NodeInfo {
  kind: NodeKind;
  opaque: boolean;
  /** `""` for ordinary nodes, else the construct that makes the node one opaque unit. */
  construct: Construct;
}

export interface Leaf extends NodeInfo {
  path: string;
  /** The name is listed in the parent's `required`. */
  required: boolean;
  node: SchemaNode;
}

const SCALAR_KINDS: ReadonlySet<string> = new Set(["string", "integer", "number", "boolean"]);

export function isScalarKind(kind: NodeKind): boolean {
  return SCALAR_KINDS.has(kind);
}

function hasProperties(node: SchemaNode): boolean {
  return node.properties !== undefined && node.properties !== null &&
    Object.keys(node.properties).length > 0;
}

export function constructOf(node: SchemaNode): Construct {
  if (typeof node.$ref === "string" && node.$ref !== "") return "$ref";
  if (Array.isArray(node.oneOf) && node.oneOf.length > 0) return "oneOf";
  if (Array.isArray(node.anyOf) && node.anyOf.length > 0) return "anyOf";
  if (Array.isArray(node.allOf) && node.allOf.length > 0) return "allOf";
  return "";
}

/** Node classification, checks in the order of docs/design/engine.md#node-classification. */
export function classify(node: SchemaNode): NodeInfo {
  const construct = constructOf(node);
  const info = classifyShape(node);
  return construct === "" ? info : { ...info, opaque: true, construct };
}

function classifyShape(node: SchemaNode): NodeInfo {
  if (node["x-kubernetes-preserve-unknown-fields"] === true) {
    return { kind: "object", opaque: true, construct: "" };
  }
  switch (node.type) {
    case "object":
      if (hasProperties(node)) return { kind: "object", opaque: false, construct: "" };
      if (node.additionalProperties !== undefined) {
        return { kind: "object", opaque: true, construct: "" };
      }
      return { kind: "object", opaque: false, construct: "" };
    case "array":
      if (node.items !== undefined && node.items !== null && !Array.isArray(node.items)) {
        return { kind: "array", opaque: false, construct: "" };
      }
      return { kind: "array", opaque: true, construct: "" };
    case "string":
    case "integer":
    case "number":
    case "boolean":
      return { kind: node.type, opaque: false, construct: "" };
    default:
      return { kind: "unknown", opaque: true, construct: "" };
  }
}

/** True for an object node with declared properties (one that flattening descends into). */
export function isStructured(node: SchemaNode): boolean {
  const info = classify(node);
  return info.kind === "object" && !info.opaque && hasProperties(node);
}

/** The single item schema of an array node, if it has one. */
export function itemSchema(node: SchemaNode): SchemaNode | undefined {
  if (node.type !== "array") return undefined;
  const items = node.items;
  if (items === undefined || items === null || Array.isArray(items)) return undefined;
  return items;
}

/** Depth-first flattening into non-overlapping leaves. */
export function flatten(root: SchemaNode | undefined, prefix = ""): Leaf[] {
  const leaves: Leaf[] = [];
  if (root === undefined) return leaves;
  walk(root, prefix, false, leaves, prefix === "");
  return leaves;
}

function walk(node: SchemaNode, path: string, required: boolean, out: Leaf[], isRoot: boolean) {
  const info = classify(node);
  if (info.construct !== "" || info.opaque) {
    if (!isRoot) out.push({ ...info, path, required, node });
    return;
  }
  if (info.kind === "object") {
    if (!hasProperties(node)) return;
    const req = new Set(node.required ?? []);
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      walk(child, path === "" ? name : `${path}.${name}`, req.has(name), out, false);
    }
    return;
  }
  if (!isRoot) out.push({ ...info, path, required, node });
}

/** Splits a dotted path; the empty string is the empty path. */
export function splitPath(path: string): string[] {
  return path === "" ? [] : path.split(".");
}

/**
 * Path resolution walks `properties` only. Returns undefined when a segment is missing or a node
 * on the way has no properties. The empty path resolves to the root.
 */
export function resolveSchema(
  root: SchemaNode | undefined,
  segments: readonly string[],
): SchemaNode | undefined {
  let node = root;
  for (const seg of segments) {
    if (node === undefined) return undefined;
    const props = node.properties;
    if (props === undefined || props === null || !Object.hasOwn(props, seg)) return undefined;
    node = props[seg];
  }
  return node;
}

/** Whether the last segment of `segments` is in its parent's `required` list. */
export function isRequiredAt(root: SchemaNode | undefined, segments: readonly string[]): boolean {
  if (segments.length === 0) return false;
  const parent = resolveSchema(root, segments.slice(0, -1));
  return parent?.required?.includes(segments[segments.length - 1]) ?? false;
}

/**
 * The known-field tree of passthrough: a structured object has one child per declared property;
 * every other node is a terminal (`null`). Constructs that are also structured keep their
 * children.
 */
export type KnownTree = { [key: string]: KnownTree | null };

export function knownTree(node: SchemaNode | undefined): KnownTree {
  const tree: KnownTree = {};
  if (node === undefined) return tree;
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    setKey(tree, name, knownChild(child));
  }
  return tree;
}

function knownChild(node: SchemaNode): KnownTree | null {
  if (node["x-kubernetes-preserve-unknown-fields"] === true) return null;
  if (node.type === "object" && hasProperties(node)) return knownTree(node);
  return null;
}

/** Merges two known trees: terminal on either side wins. */
export function mergeKnownTrees(a: KnownTree, b: KnownTree): KnownTree {
  const out: KnownTree = {};
  for (const [k, v] of Object.entries(a)) setKey(out, k, v);
  for (const [k, v] of Object.entries(b)) {
    if (!Object.hasOwn(out, k)) {
      setKey(out, k, v);
      continue;
    }
    const mine = out[k];
    setKey(out, k, mine === null || v === null ? null : mergeKnownTrees(mine, v));
  }
  return out;
}

/**
 * The tree the `carry` op walks: a declared
 * structured object is a subtree; `"copy"` copies the input's value as is (an auto-covered leaf);
 * `"skip"` leaves the key to the rules (claimed, uncovered or terminal). Keys absent from the tree
 * are undeclared: dropped at the root, copied below it.
 */
export type CarryTree = { [key: string]: CarryTree | "copy" | "skip" };

export function carryTree(known: KnownTree, identityPaths: readonly string[][]): CarryTree {
  const convert = (k: KnownTree): CarryTree => {
    const out: CarryTree = {};
    for (const [key, child] of Object.entries(k)) {
      setKey(out, key, child === null ? "skip" : convert(child));
    }
    return out;
  };
  const tree = convert(known);
  for (const segments of identityPaths) {
    let node = tree;
    for (let i = 0; i < segments.length - 1; i++) {
      const next = node[segments[i]];
      if (typeof next !== "object") break; // unreachable: an identity leaf's ancestors are structured
      node = next;
    }
    setKey(node, segments[segments.length - 1], "copy");
  }
  return tree;
}
