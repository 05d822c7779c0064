/** FieldRename: the same value under another path. */
import { classify } from "../schema.ts";
import type { StrategyDefinition } from "../strategy.ts";

interface FieldRenameParams {
  hubPath: string;
  spokePath: string;
}

export const fieldRename: StrategyDefinition<FieldRenameParams> = {
  name: "FieldRename",
  translate: (p) => ({ hubPath: p.path("hubPath"), spokePath: p.path("spokePath") }),
  compile({ hubPath, spokePath }, ctx) {
    const hub = ctx.resolveHub(hubPath, "hubPath");
    const spoke = ctx.resolveSpoke(spokePath, "spokePath");
    if (hub.node !== undefined && spoke.node !== undefined) {
      const hk = classify(hub.node).kind;
      const sk = classify(spoke.node).kind;
      if (hk !== sk) {
        ctx.error(
          "type-mismatch",
          `hubPath ${hubPath} is ${hk} but spokePath ${spokePath} is ${sk}; use TypeCoerce or another strategy`,
          hubPath,
        );
      }
    }
    ctx.claimHub(hub);
    ctx.claimSpoke(spoke);
    return {
      hubPaths: [hubPath],
      spokePaths: [spokePath],
      lossless: { hubToSpoke: true, spokeToHub: true },
      hubToSpoke: { op: "copy", from: hub.segments, to: spoke.segments },
      spokeToHub: { op: "copy", from: spoke.segments, to: hub.segments },
    };
  },
  ops: {},
};
