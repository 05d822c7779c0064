/**
 * Inverse strategy pairs, written once. ScalarToObject and ObjectToScalar (and seven more pairs)
 * are the same rule with the hub and the spoke swapped, so a pair is defined over two abstract
 * sides, A and B: the first strategy of the pair puts A on the hub, the second (its mirror) puts A
 * on the spoke. `mirror()` derives both definitions, so the two directions cannot drift apart.
 * See docs/design/engine.md#inverse-pairs.
 */
import type {
  OpLinker,
  ParamReader,
  Resolved,
  RuleContext,
  RuleOutcome,
  StrategyDefinition,
} from "./strategy.ts";
import type { OpData, StrategyName } from "./types.ts";

export type Side = "hub" | "spoke";

/** One side of a pair as the definition sees it: where A (or B) lives in this strategy. */
export interface SideView {
  readonly side: Side;
  /** Resolves on this side's schema (path-not-found names `param`). */
  resolve(path: string, param: string): Resolved;
  /** Claims on this side; with `subtree`, every leaf under the resolved node too. */
  claim(r: Resolved, subtree?: boolean): void;
}

/** Which side A and B are in one strategy of the pair, and that strategy's name. */
export interface Orientation {
  readonly name: StrategyName;
  readonly a: Side;
  readonly b: Side;
}

/** The two sides as `compile` sees them. */
export interface Sides {
  readonly name: StrategyName;
  readonly a: SideView;
  readonly b: SideView;
}

/** What compiling one rule of a pair yields, in A/B terms. */
export interface PairOutcome {
  aPaths: string[];
  bPaths: string[];
  lossless: { aToB: boolean; bToA: boolean };
  /** Absent = no op in that direction. */
  aToB?: OpData;
  bToA?: OpData;
}

export interface InversePair<P> {
  /** The strategy with A on the hub, then its mirror with A on the spoke. */
  names: readonly [StrategyName, StrategyName];
  translate(block: ParamReader, o: Orientation): P;
  compile(params: P, sides: Sides, ctx: RuleContext): PairOutcome;
  /** Linkers of the op codes both strategies emit (registered once, on the first). */
  ops: Record<string, OpLinker>;
}

/**
 * A side-named parameter: `sideParam("hub", "", "Path")` is `hubPath`,
 * `sideParam("spoke", "onUnknown", "Key")` is `onUnknownSpokeKey`.
 */
export function sideParam(side: Side, prefix: string, suffix: string): string {
  if (prefix === "") return side + suffix;
  return prefix + side[0].toUpperCase() + side.slice(1) + suffix;
}

/**
 * Runs A's step and B's step hub side first, so both strategies of a pair emit their diagnostics
 * in the order a hand-written strategy would (diagnostics with equal paths keep that order).
 */
export function hubFirst<A, B>(sides: Sides, forA: () => A, forB: () => B): [A, B] {
  if (sides.a.side === "hub") {
    const a = forA();
    return [a, forB()];
  }
  const b = forB();
  return [forA(), b];
}

/**
 * Reads `hubPath` then `spokePath` (that order in both strategies, so a missing one is reported
 * alike) as A's and B's paths.
 */
export function readPathPair(p: ParamReader, o: Orientation): { aPath: string; bPath: string } {
  const hubPath = p.path("hubPath");
  const spokePath = p.path("spokePath");
  return o.a === "hub"
    ? { aPath: hubPath, bPath: spokePath }
    : { aPath: spokePath, bPath: hubPath };
}

/** Resolves and claims `hubPath`/`spokePath` as A's and B's paths (see bindBoth). */
export function bindPathPair(
  sides: Sides,
  p: { aPath: string; bPath: string },
  subtree: { a?: boolean; b?: boolean } = {},
): [Resolved, Resolved] {
  return bindBoth(
    sides,
    { path: p.aPath, param: `${sides.a.side}Path`, subtree: subtree.a },
    { path: p.bPath, param: `${sides.b.side}Path`, subtree: subtree.b },
  );
}

/** One path of a pair rule: its value, the parameter naming it, and whether to claim its subtree. */
export interface Binding {
  path: string;
  param: string;
  subtree?: boolean;
}

/** Resolves A's and B's paths, then claims them (each step hub side first). */
export function bindBoth(sides: Sides, a: Binding, b: Binding): [Resolved, Resolved] {
  const [ra, rb] = hubFirst(
    sides,
    () => sides.a.resolve(a.path, a.param),
    () => sides.b.resolve(b.path, b.param),
  );
  hubFirst(sides, () => sides.a.claim(ra, a.subtree), () => sides.b.claim(rb, b.subtree));
  return [ra, rb];
}

function view(side: Side, ctx: RuleContext): SideView {
  return side === "hub"
    ? { side, resolve: ctx.resolveHub, claim: ctx.claimHub }
    : { side, resolve: ctx.resolveSpoke, claim: ctx.claimSpoke };
}

function oriented<P>(pair: InversePair<P>, aOnHub: boolean): StrategyDefinition<P> {
  const name = pair.names[aOnHub ? 0 : 1];
  const o: Orientation = aOnHub ? { name, a: "hub", b: "spoke" } : { name, a: "spoke", b: "hub" };
  return {
    name,
    inverse: pair.names[aOnHub ? 1 : 0],
    translate: (block) => pair.translate(block, o),
    compile(params, ctx): RuleOutcome {
      const sides: Sides = { name, a: view(o.a, ctx), b: view(o.b, ctx) };
      const r = pair.compile(params, sides, ctx);
      return aOnHub
        ? {
          hubPaths: r.aPaths,
          spokePaths: r.bPaths,
          lossless: { hubToSpoke: r.lossless.aToB, spokeToHub: r.lossless.bToA },
          hubToSpoke: r.aToB,
          spokeToHub: r.bToA,
        }
        : {
          hubPaths: r.bPaths,
          spokePaths: r.aPaths,
          lossless: { hubToSpoke: r.lossless.bToA, spokeToHub: r.lossless.aToB },
          hubToSpoke: r.bToA,
          spokeToHub: r.aToB,
        };
    },
    ops: aOnHub ? pair.ops : {},
  };
}

/** Both strategies of a pair: `[A on the hub, A on the spoke]`, each naming the other `inverse`. */
export function mirror<P>(
  pair: InversePair<P>,
): readonly [StrategyDefinition<P>, StrategyDefinition<P>] {
  return [oriented(pair, true), oriented(pair, false)];
}
