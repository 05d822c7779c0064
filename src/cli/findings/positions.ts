/**
 * Where a config path (`spec.spokes[0].rules[2]`) sits in a YAML file: a second parse that keeps
 * source ranges (the strict typed decode keeps none). A path that does not resolve falls back to
 * its longest resolving prefix; a file that does not parse places nothing.
 */
import { isMap, isNode, isScalar, LineCounter, type Node, parseDocument } from "yaml";

export interface Position {
  line: number;
  column: number;
}

export type Locate = (path: string) => Position | undefined;

/** `spec.spokes[0].rules[2]` → `["spec", "spokes", 0, "rules", 2]`. */
export function configPathSegments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of path.split(".")) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (m === null) {
      out.push(part);
      continue;
    }
    if (m[1] !== "") out.push(m[1]);
    for (const idx of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

/** A locator over the YAML text (the first document). */
export function yamlLocator(text: string): Locate {
  const lines = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { lineCounter: lines, keepSourceTokens: false });
  } catch {
    return () => undefined;
  }
  if (doc.errors.length > 0) return () => undefined;
  return (path) => {
    const segments = path === "" ? [] : configPathSegments(path);
    const at = (node: unknown): Position | undefined => {
      if (!isNode(node) || node.range === undefined || node.range === null) return undefined;
      const { line, col } = lines.linePos(node.range[0]);
      return { line, column: col };
    };
    const nodeAt = (n: number): unknown =>
      n === 0 ? doc.contents : doc.getIn(segments.slice(0, n), true);
    for (let n = segments.length; n >= 0; n--) {
      const last = segments[n - 1];
      const parent = n > 0 ? nodeAt(n - 1) : undefined;
      // A map entry is placed at its key (the line a reader looks for), not at its value.
      if (typeof last === "string" && isMap(parent)) {
        const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last);
        const key = at(pair?.key as Node | undefined);
        if (key !== undefined) return key;
      }
      const here = at(nodeAt(n));
      if (here !== undefined) return here;
    }
    return undefined;
  };
}

/** A locator over a file; an unreadable file places nothing. */
export function fileLocator(file: string): Locate {
  try {
    return yamlLocator(Deno.readTextFileSync(file));
  } catch {
    return () => undefined;
  }
}
