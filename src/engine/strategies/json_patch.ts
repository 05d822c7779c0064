/**
 * JSONPatch: an RFC 6902 patch per direction, applied to a copy of the whole
 * pristine input; each destination `path` is then copied from the patched document into the
 * output (or deleted there when the patch removed it). Application goes through fast-json-patch
 * with validation on, plus an own-property check of every source and parent first, so the
 * semantics are the strict ones of the reference (evanphx/json-patch): `add` needs the parent,
 * `remove`/`replace`/`move`/`copy` need their source, a failed `test` is an error — and a key such
 * as `constructor` is never "found" on an object's prototype.
 */
// The package is CommonJS whose exports are assigned dynamically: only the default import works.
import jsonpatch, { type Operation } from "fast-json-patch";
import { isJsonObject } from "../../lib/json.ts";
import type { OpLinker, Resolved, StrategyDefinition } from "../strategy.ts";
import type { JsonObject, JsonValue } from "../types.ts";
import {
  ABSENT,
  ConversionError,
  deepCopy,
  deletePath,
  getPath,
  jsonEqual,
  setPath,
  typeName,
} from "../value.ts";

interface JsonPatchParams {
  hubToSpoke: JsonValue[];
  spokeToHub: JsonValue[];
  losslessOverride: boolean;
}

/** One decoded patch operation, as plan data. */
interface PatchOp {
  op: string;
  path: string;
  from?: string;
  /** Absent when the config omits it or gives JSON null (the reference treats both alike). */
  value?: JsonValue;
}

const RFC6902_OPS: ReadonlySet<string> = new Set([
  "add",
  "remove",
  "replace",
  "move",
  "copy",
  "test",
]);

/** A JSON Pointer: strip one leading `/`, split on `/`, decode `~1` then `~0`; "" is the empty path. */
export function pointerSegments(pointer: string): string[] {
  if (pointer === "") return [];
  const body = pointer.startsWith("/") ? pointer.slice(1) : pointer;
  return body.split("/").map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** Decodes one list; returns the ops or the first problem (a decode failure is invalid-parameter). */
function decodePatch(list: JsonValue[], param: string): PatchOp[] | string {
  const ops: PatchOp[] = [];
  for (let i = 0; i < list.length; i++) {
    const raw = list[i];
    const at = `${param}[${i}]`;
    if (!isJsonObject(raw)) return `${at}: expected an operation object, got a ${typeName(raw)}`;
    if (typeof raw.op !== "string") return `${at}.op: expected a string`;
    if (typeof raw.path !== "string") return `${at}.path: expected a JSON pointer string`;
    const op: PatchOp = { op: raw.op, path: raw.path };
    for (const field of ["path", "from"] as const) {
      const v = raw[field];
      if (v === undefined || v === null) continue;
      if (typeof v !== "string") return `${at}.${field}: expected a JSON pointer string`;
      if (v !== "" && !v.startsWith("/")) {
        return `${at}.${field}: JSON pointer ${JSON.stringify(v)} must be empty or start with "/"`;
      }
      op[field] = v;
    }
    if (raw.value !== undefined && raw.value !== null) op.value = raw.value;
    if (op.path === "" && op.op !== "test") {
      return `${at}.path: the whole object ("") cannot be a patch destination`;
    }
    ops.push(op);
  }
  return ops;
}

/**
 * Destination paths of a list: every distinct `path` (not `from`). A `test` path counts too: it is
 * claimed, so copying its (unchanged) value back is what keeps the field in the output. The whole
 * document ("", only allowed for `test`) cannot be written back and is skipped.
 */
function destinations(ops: PatchOp[]): string[][] {
  const seen = new Set<string>([""]);
  const out: string[][] = [];
  for (const op of ops) {
    if (seen.has(op.path)) continue;
    seen.add(op.path);
    out.push(pointerSegments(op.path));
  }
  return out;
}

export const jsonPatch: StrategyDefinition<JsonPatchParams> = {
  name: "JSONPatch",
  translate: (p) => ({
    hubToSpoke: p.list("hubToSpoke"),
    spokeToHub: p.list("spokeToHub"),
    losslessOverride: p.optBool("losslessOverride"),
  }),
  compile(p, ctx) {
    const h2s = decodePatch(p.hubToSpoke, "hubToSpoke");
    const s2h = decodePatch(p.spokeToHub, "spokeToHub");
    // Deliberate over-claiming: every pointer of either list, on both sides, unresolved.
    const pointers = new Set<string>();
    for (const list of [p.hubToSpoke, p.spokeToHub]) {
      for (const raw of list) {
        if (!isJsonObject(raw)) continue;
        for (const field of ["path", "from"]) {
          if (typeof raw[field] === "string") pointers.add(raw[field] as string);
        }
      }
    }
    const claimed = new Set<string>();
    for (const pointer of pointers) {
      const segments = pointerSegments(pointer);
      const path = segments.join(".");
      if (claimed.has(path)) continue;
      claimed.add(path);
      const r: Resolved = { path, segments, node: undefined };
      ctx.claimHub(r);
      ctx.claimSpoke(r);
    }
    for (const problem of [h2s, s2h]) {
      if (typeof problem === "string") ctx.error("invalid-parameter", problem);
    }
    ctx.warn(
      "unverifiable",
      `JSONPatch cannot be analysed; losslessness is taken from losslessOverride (${p.losslessOverride})`,
    );
    const opFor = (ops: PatchOp[] | string) =>
      typeof ops === "string" || ops.length === 0
        ? undefined
        : { op: "jsonPatch", patch: ops, destinations: destinations(ops) };
    return {
      hubPaths: [],
      spokePaths: [],
      lossless: { hubToSpoke: p.losslessOverride, spokeToHub: p.losslessOverride },
      hubToSpoke: opFor(h2s),
      spokeToHub: opFor(s2h),
    };
  },
  ops: { jsonPatch: linkJsonPatch },
};

type Located = { found: true; value: JsonValue } | { found: false };

/** Resolves a pointer through own properties and in-range array indices only. */
function locate(doc: JsonValue, segments: readonly string[]): Located {
  let cur = doc;
  for (const seg of segments) {
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9][0-9]*)$/.test(seg) || Number(seg) >= cur.length) return { found: false };
      cur = cur[Number(seg)];
    } else if (isJsonObject(cur) && Object.hasOwn(cur, seg)) {
      cur = cur[seg];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: cur };
}

function describe(op: PatchOp): string {
  return op.from === undefined
    ? `${op.op} ${JSON.stringify(op.path)}`
    : `${op.op} ${JSON.stringify(op.from)} → ${JSON.stringify(op.path)}`;
}

/** Applies one op to `doc` (mutated); returns the new document (root ops may replace it). */
function applyOne(doc: JsonValue, op: PatchOp): JsonValue {
  if (!RFC6902_OPS.has(op.op)) throw new Error(`unknown operation ${JSON.stringify(op.op)}`);
  const path = pointerSegments(op.path);
  if (op.op === "test" && op.value === undefined) {
    // evanphx: testing for null (or an omitted value) passes when the target is absent or null.
    const at = locate(doc, path);
    if (at.found && at.value !== null) throw new Error("test failed: the value is not null");
    return doc;
  }
  if (op.op === "test") {
    const at = locate(doc, path);
    if (!at.found) throw new Error("test failed: the path does not exist");
    if (!jsonEqual(at.value, op.value!)) throw new Error("test failed: values differ");
    return doc;
  }
  let moved: Located = { found: false };
  if (op.op === "move" || op.op === "copy") {
    if (op.from === undefined) throw new Error(`${op.op} needs a "from" pointer`);
    moved = locate(doc, pointerSegments(op.from));
    if (!moved.found) throw new Error(`the "from" path does not exist`);
  }
  if (op.op === "remove" || op.op === "replace") {
    if (!locate(doc, path).found) throw new Error("the path does not exist");
  } else if (path.length > 0) {
    const parent = locate(doc, path.slice(0, -1));
    if (!parent.found || (!isJsonObject(parent.value) && !Array.isArray(parent.value))) {
      throw new Error("the parent of the path does not exist");
    }
  }
  if (moved.found) {
    // `copy` and `move` as `add` (after `remove`): the library copies values through
    // JSON.stringify, which cannot write a bigint (and turns ±Infinity into null).
    if (op.op === "move") doc = apply(doc, { op: "remove", path: op.from! });
    const value = op.op === "copy" ? deepCopy(moved.value) : moved.value;
    return apply(doc, { op: "add", path: op.path, value });
  }
  // The library stores `value` by reference; hand it a copy so the plan's data stays pristine.
  const operation = {
    op: op.op,
    path: op.path,
    ...(op.from === undefined ? {} : { from: op.from }),
    ...(op.op === "add" || op.op === "replace" ? { value: deepCopy(op.value ?? null) } : {}),
  } as Operation;
  return apply(doc, operation);
}

/** One library operation, validated, on `doc` in place. */
function apply(doc: JsonValue, operation: Operation): JsonValue {
  return jsonpatch.applyOperation(doc, operation, true, true, true).newDocument as JsonValue;
}

function linkJsonPatch(...[op]: Parameters<OpLinker>) {
  const patch = op.patch as PatchOp[];
  const dests = op.destinations as string[][];
  return (input: JsonObject, output: JsonObject) => {
    let doc = deepCopy(input);
    for (let i = 0; i < patch.length; i++) {
      try {
        doc = applyOne(doc, patch[i]);
      } catch (e) {
        // Library errors carry a multi-line dump of the document; the first line is the reason.
        const why = (e instanceof Error ? e.message : String(e)).split("\n")[0];
        throw new ConversionError(`JSON patch op ${i} (${describe(patch[i])}): ${why}`);
      }
    }
    for (const path of dests) {
      const v = getPath(doc, path);
      if (v === ABSENT) deletePath(output, path);
      else setPath(output, path, deepCopy(v));
    }
  };
}
