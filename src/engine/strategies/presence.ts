/**
 * DefaultValue / Constant / Delete: a field that exists on one side only.
 * Towards that side it is set (DefaultValue, Constant) or left out (Delete); away from it the
 * value is dropped, which is the declared loss.
 */
import type { RuleContext, RuleOutcome, StrategyDefinition } from "../strategy.ts";
import type { JsonObject, JsonValue, Lossless } from "../types.ts";
import { deepCopy, setPath } from "../value.ts";

interface PresenceParams {
  path: string;
  existsOn: string;
  value: JsonValue;
}

/** Validates existsOn (anything but Hub/Spoke is rejected), resolves and claims. */
function declare(p: PresenceParams, ctx: RuleContext) {
  if (p.existsOn !== "Hub" && p.existsOn !== "Spoke") {
    ctx.error(
      "invalid-parameter",
      `existsOn must be Hub or Spoke (got ${JSON.stringify(p.existsOn)})`,
      p.path,
    );
    return undefined;
  }
  const onHub = p.existsOn === "Hub";
  const r = onHub ? ctx.resolveHub(p.path, "path") : ctx.resolveSpoke(p.path, "path");
  if (onHub) ctx.claimHub(r);
  else ctx.claimSpoke(r);
  return { onHub, r };
}

function verdict(onHub: boolean): Lossless {
  return onHub ? { hubToSpoke: false, spokeToHub: true } : { hubToSpoke: true, spokeToHub: false };
}

function setting(
  name: "DefaultValue" | "Constant",
  field: "default" | "value",
): StrategyDefinition<PresenceParams> {
  return {
    name,
    translate: (p) => ({ path: p.path("path"), existsOn: p.side(), value: p.json(field) }),
    compile(p, ctx): RuleOutcome {
      const declared = { hubPaths: [p.path], spokePaths: [p.path] };
      const d = declare(p, ctx);
      if (d === undefined) {
        return { ...declared, lossless: { hubToSpoke: false, spokeToHub: false } };
      }
      const set = { op: "set", to: d.r.segments, value: p.value };
      return d.onHub
        ? { ...declared, lossless: verdict(true), spokeToHub: set }
        : { ...declared, lossless: verdict(false), hubToSpoke: set };
    },
    ops: { set: linkSet },
  };
}

export const defaultValue = setting("DefaultValue", "default");
export const constant = setting("Constant", "value");

export const deleteField: StrategyDefinition<PresenceParams> = {
  name: "Delete",
  translate: (p) => ({ path: p.path("path"), existsOn: p.side(), value: null }),
  compile(p, ctx): RuleOutcome {
    const declared = { hubPaths: [p.path], spokePaths: [p.path] };
    const d = declare(p, ctx);
    if (d === undefined) return { ...declared, lossless: { hubToSpoke: false, spokeToHub: false } };
    const schema = d.onHub ? ctx.hubSchema : ctx.spokeSchema;
    const parentPath = d.r.segments.slice(0, -1);
    let parent = schema;
    for (const seg of parentPath) parent = parent?.properties?.[seg];
    if (parent?.required?.includes(d.r.segments[d.r.segments.length - 1])) {
      ctx.warn(
        "required-field-deleted",
        `${p.path} is required on the ${d.onHub ? "hub" : "spoke"} side but is deleted`,
        p.path,
      );
    }
    return { ...declared, lossless: verdict(d.onHub) };
  },
  ops: {},
};

/** Unconditionally writes a copy of the value. */
function linkSet(...[op]: Parameters<import("../strategy.ts").OpLinker>) {
  const to = op.to as string[];
  const value = op.value as JsonValue;
  return (_input: JsonObject, output: JsonObject) => setPath(output, to, deepCopy(value));
}
