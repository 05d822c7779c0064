/**
 * MapKeyRename: a free-form map whose keys are renamed by a table (injective, so
 * the way back is the inverse table). Two source keys landing on one key fail the conversion.
 */
import { isJsonObject } from "../../lib/json.ts";
import { classify } from "../schema.ts";
import type { OpLinker, StrategyDefinition } from "../strategy.ts";
import type { JsonObject } from "../types.ts";
import { ABSENT, ConversionError, deepCopy, getPath, setKey, setPath, typeName } from "../value.ts";

interface MapKeyRenameParams {
  hubPath: string;
  spokePath: string;
  renames: Record<string, string>;
}

export const mapKeyRename: StrategyDefinition<MapKeyRenameParams> = {
  name: "MapKeyRename",
  translate: (p) => ({
    hubPath: p.path("hubPath"),
    spokePath: p.path("spokePath"),
    renames: p.stringMap("renames"),
  }),
  compile(p, ctx) {
    const hub = ctx.resolveHub(p.hubPath, "hubPath");
    const spoke = ctx.resolveSpoke(p.spokePath, "spokePath");
    ctx.claimHub(hub);
    ctx.claimSpoke(spoke);
    for (const r of [hub, spoke]) {
      if (r.node === undefined) continue;
      const info = classify(r.node);
      if (info.kind !== "object" || !info.opaque) {
        ctx.error(
          "type-mismatch",
          `${r.path} must be a free-form map (additionalProperties or preserve-unknown-fields)`,
          r.path,
        );
      }
    }
    const entries = Object.entries(p.renames);
    const inverse: [string, string][] = [];
    const targets = new Map<string, string>();
    if (entries.length === 0) {
      ctx.error("invalid-parameter", "renames must list at least one key", p.hubPath);
    }
    for (const [from, to] of entries) {
      if (from === "" || to === "") {
        ctx.error("invalid-parameter", "renames keys and values must not be empty", p.hubPath);
        continue;
      }
      const other = targets.get(to);
      if (other !== undefined) {
        ctx.error(
          "invalid-parameter",
          `renames is not injective: ${other} and ${from} both become ${to}`,
          p.hubPath,
        );
      }
      targets.set(to, from);
      inverse.push([to, from]);
    }
    return {
      hubPaths: [p.hubPath],
      spokePaths: [p.spokePath],
      lossless: { hubToSpoke: true, spokeToHub: true },
      hubToSpoke: { op: "renameKeys", from: hub.segments, to: spoke.segments, renames: entries },
      spokeToHub: { op: "renameKeys", from: spoke.segments, to: hub.segments, renames: inverse },
    };
  },
  ops: { renameKeys: linkRenameKeys },
};

function linkRenameKeys(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  const renames = new Map(op.renames as [string, string][]);
  const what = from.join(".");
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    if (!isJsonObject(v)) throw new ConversionError(`${what} is a ${typeName(v)}, not a map`);
    const out: JsonObject = {};
    for (const key of Object.keys(v)) {
      const renamed = renames.get(key) ?? key;
      if (Object.hasOwn(out, renamed)) {
        throw new ConversionError(
          `${what}: keys collide on ${JSON.stringify(renamed)} after renaming`,
        );
      }
      setKey(out, renamed, deepCopy(v[key]));
    }
    setPath(output, to, out);
  };
}
