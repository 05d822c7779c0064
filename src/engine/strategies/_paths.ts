/**
 * Rules over one hub path and one spoke path (NumericScale, Quantity, Duration, MapKeyRename,
 * TypeCoerce): reading the two paths, resolving and claiming them, and the schema kinds there.
 */
import { classify, type NodeKind } from "../schema.ts";
import type { ParamReader, Resolved, RuleContext } from "../strategy.ts";
import type { Lossless } from "../types.ts";

export interface HubSpokePaths {
  hubPath: string;
  spokePath: string;
}

export function readHubSpoke(p: ParamReader): HubSpokePaths {
  return { hubPath: p.path("hubPath"), spokePath: p.path("spokePath") };
}

/** Both directions lossy: the verdict of a rule whose paths did not resolve (a fresh object). */
export function unresolved(): Lossless {
  return { hubToSpoke: false, spokeToHub: false };
}

/**
 * Resolves the hub path, then the spoke path, and claims both; `declared` is the rule's reported
 * paths and `kinds` the schema kinds there (undefined when either path did not resolve).
 */
export function bindHubSpoke(
  p: HubSpokePaths,
  ctx: RuleContext,
  params: readonly [string, string] = ["hubPath", "spokePath"],
): {
  hub: Resolved;
  spoke: Resolved;
  declared: { hubPaths: string[]; spokePaths: string[] };
  kinds: { hub: NodeKind; spoke: NodeKind } | undefined;
} {
  const hub = ctx.resolveHub(p.hubPath, params[0]);
  const spoke = ctx.resolveSpoke(p.spokePath, params[1]);
  ctx.claimHub(hub);
  ctx.claimSpoke(spoke);
  const kinds = hub.node === undefined || spoke.node === undefined
    ? undefined
    : { hub: classify(hub.node).kind, spoke: classify(spoke.node).kind };
  return { hub, spoke, declared: { hubPaths: [p.hubPath], spokePaths: [p.spokePath] }, kinds };
}
