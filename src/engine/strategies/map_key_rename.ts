/**
 * MapKeyRename: a free-form map whose keys are renamed by a table (injective, so
 * the way back is the inverse table). Two source keys landing on one key fail the conversion.
 */
import { isJsonObject } from "../../lib/json.ts";
import { classify } from "../schema.ts";
import type { StrategyDefinition } from "../strategy.ts";
import { valueLinker, wrongType } from "./_link.ts";
import { bindHubSpoke, type HubSpokePaths, readHubSpoke } from "./_paths.ts";
import { spend } from "../request_budget.ts";
import type { JsonObject } from "../types.ts";
import { ConversionError, deepCopy, setKey } from "../value.ts";

interface MapKeyRenameParams extends HubSpokePaths {
  renames: Record<string, string>;
}

const linkRenameKeys = valueLinker((op, what) => {
  const renames = new Map(op.renames as [string, string][]);
  return (v) => {
    if (!isJsonObject(v)) throw wrongType(what, v, "a map");
    const out: JsonObject = {};
    for (const key of Object.keys(v)) {
      spend(1); // the request budget, inside the object
      const renamed = renames.get(key) ?? key;
      if (Object.hasOwn(out, renamed)) {
        throw new ConversionError(
          `${what}: keys collide on ${JSON.stringify(renamed)} after renaming`,
        );
      }
      setKey(out, renamed, deepCopy(v[key]));
    }
    return out;
  };
});

export const mapKeyRename: StrategyDefinition<MapKeyRenameParams> = {
  name: "MapKeyRename",
  translate: (p) => ({ ...readHubSpoke(p), renames: p.stringMap("renames") }),
  compile(p, ctx) {
    const { hub, spoke } = bindHubSpoke(p, ctx);
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
