/**
 * The law-case registry: every strategy registers one or more cases (a hub/spoke schema pair, a
 * rule list and its declared verdict) from `cases/<family>.ts`; `laws_test.ts` runs the same laws
 * against each (round trip of declared-lossless directions on generated inputs, rejection of
 * unacknowledged lossy rules, no mutation, determinism). Per-strategy test files only add what is
 * particular to a strategy.
 *
 * Adding a strategy: add `cases/<family>.ts` registering at least one case whose `strategy` names
 * it, and import it from `cases/mod.ts`. The suite fails while an implemented strategy has no case
 * or a case file is not imported.
 */
import type {
  ConversionRuleSpec,
  Direction,
  JsonObject,
  JsonValue,
  Lossless,
  SchemaNode,
  SchemaSource,
  StrategyName,
  UnmappedFieldPolicy,
} from "../../../src/engine/mod.ts";
import type { GenerateOptions, Rng } from "../../../src/engine/generate.ts";
import { setKey } from "../../../src/engine/value.ts";
import { pairSource, xrdPairSource } from "../_helpers.ts";

/** A path whose value may legitimately be missing after a round trip. */
export interface Vanishing {
  /** Dotted path in the round-tripped (source-version) object. */
  path: string;
  /** Only an empty array/map may vanish (default true); false: any value may. */
  onlyIfEmpty?: boolean;
  /** Why this is not a loss (say which rule drops it). */
  reason: string;
}

/**
 * A declared-lossless direction whose round trip the reference's verdict does not promise: the
 * verdict judges one leg, and the reverse leg deliberately drops what this leg kept. The law suite
 * then asserts the round trip really loses data for some input, so a stale exemption fails.
 */
export interface RoundTripExemption {
  direction: Direction;
  reason: string;
}

export interface LawCase {
  /** The `cases/<family>.ts` file stem registering it. */
  family: string;
  /** Unique, used in test names and as the generator seed. */
  name: string;
  /** The strategy this case stands for ("core" for engine features that are not strategies). */
  strategy: StrategyName | "core";
  /** `openAPIV3Schema` of the hub (`v2`, storage) and the spoke (`v1`). */
  hub: SchemaNode;
  spoke: SchemaNode;
  /**
   * Whose versions the pair is: a CRD's (the default) or a Namespaced XRD's, whose generated
   * CRDs carry Crossplane's injected fields in every version.
   */
  target?: "CRD" | "XRD";
  /** The spoke's rules, acknowledged where lossy. */
  rules: ConversionRuleSpec[];
  policy?: UnmappedFieldPolicy;
  /** The declared verdict, which analysis must report. */
  lossless: Lossless;
  /** Per direction: paths that may be missing after the round trip. */
  vanishing?: Partial<Record<Direction, Vanishing[]>>;
  roundTripExemptions?: RoundTripExemption[];
  /**
   * Adjusts a generated source object before it is frozen (e.g. adds the metadata key a
   * From*-strategy restores). `version` is the side the object belongs to.
   */
  prepare?: (obj: JsonObject, version: "hub" | "spoke", rng: Rng) => void;
  /**
   * Why this case has no mirrored twin in the suite (see laws/mirror.ts), when it is of a plain
   * inverse pair but its mirror is not a valid config.
   */
  noMirror?: string;
  /** Generator options (besides the seed). */
  generate?: Omit<GenerateOptions, "seed" | "rng">;
}

const CASES: LawCase[] = [];

export function registerLawCase(c: LawCase): void {
  if (CASES.some((x) => x.name === c.name)) {
    throw new Error(`law case ${JSON.stringify(c.name)} registered twice`);
  }
  CASES.push(c);
}

export function lawCases(): readonly LawCase[] {
  return CASES;
}

/** The schema source a case is analysed against (see `LawCase.target`). */
export function caseSource(c: LawCase): SchemaSource {
  return c.target === "XRD" ? xrdPairSource(c.hub, c.spoke) : pairSource(c.hub, c.spoke);
}

/** Sets `metadata.<map>.<key>` of an object (creating the maps). */
export function putMetadata(
  obj: JsonObject,
  map: "annotations" | "labels",
  key: string,
  value: JsonValue,
): void {
  const metadata = (obj.metadata ??= {}) as JsonObject;
  const m = (metadata[map] ??= {}) as JsonObject;
  setKey(m, key, value);
}
