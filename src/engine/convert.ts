/**
 * The runtime: link plan data into closures once, convert one object per
 * direction, route between any two versions through the hub, and stamp `apiVersion` as the
 * webhook and CLI do.
 */
import { isJsonObject } from "../lib/json.ts";
import { allOpLinkers } from "./strategies/mod.ts";
import { compiledOps } from "./link_compiled.ts";
import type { LinkOptions, OpFn } from "./strategy.ts";
import type { CarryTree } from "./schema.ts";
import type {
  AnalysisResult,
  Direction,
  JsonObject,
  JsonValue,
  OpData,
  PlanData,
} from "./types.ts";
import { ConversionError, deepCopy, setKey } from "./value.ts";

const LINKERS = allOpLinkers();

/**
 * Turns op data into closures (recursively for nested op lists): one interpreted closure per op
 * (with `compiled: false`, the reference) or — the default — one function for the whole list,
 * generated on its first call (link_compiled.ts).
 */
export function linkOps(ops: readonly OpData[], options: LinkOptions = {}): OpFn[] {
  const link = (nested: readonly OpData[]) => linkOps(nested, options);
  const linkOne = (op: OpData, i: number): OpFn => {
    const linker = LINKERS.get(op.op);
    if (linker === undefined) throw new Error(`unknown op code ${JSON.stringify(op.op)} in plan`);
    // Sharing is safe only for a carry that nothing runs after (see LinkOptions).
    const own = options.shareInput === true && op.op === "carry" && i !== ops.length - 1
      ? { ...options, shareInput: false }
      : options;
    return linker(op, link, own);
  };
  const fns = ops.map(linkOne);
  return options.compiled === false ? fns : [compiledOps(ops, fns, options.shareInput === true)];
}

export interface LinkedPlan {
  readonly hubVersion: string;
  readonly spokeVersion: string;
  readonly hubToSpoke: readonly OpFn[];
  readonly spokeToHub: readonly OpFn[];
  /** Per direction: the output's `metadata` is the input's own map (see LinkOptions.shareInput). */
  readonly sharesMetadata?: Readonly<Record<Direction, boolean>>;
}

export function linkPlan(plan: PlanData, options: LinkOptions = {}): LinkedPlan {
  const share = options.shareInput === true;
  return {
    hubVersion: plan.hubVersion,
    spokeVersion: plan.spokeVersion,
    hubToSpoke: linkOps(plan.hubToSpoke, options),
    spokeToHub: linkOps(plan.spokeToHub, options),
    sharesMetadata: {
      hubToSpoke: share && leavesMetadata(plan.hubToSpoke),
      spokeToHub: share && leavesMetadata(plan.spokeToHub),
    },
  };
}

/**
 * Whether no op of the list can write into the output's `metadata` map, so the seeded map may be
 * the input's own under `shareInput`. Only ops known not to are accepted: `copy`, `set` and
 * `forEach` writing outside `metadata`, `when` around such an op, and the carry walk when it does
 * not descend into `metadata`. Every other op (the metadata strategies, JSONPatch, CEL, …) keeps
 * the deep copy.
 */
export function leavesMetadata(ops: readonly OpData[]): boolean {
  return ops.every(function leaves(op: OpData): boolean {
    switch (op.op) {
      case "copy":
      case "set":
      case "forEach": {
        const to = op.to;
        return Array.isArray(to) && to.length > 0 && to[0] !== "metadata";
      }
      case "when":
        return isJsonObject(op.inner as JsonValue) && leaves(op.inner as unknown as OpData);
      case "carry": {
        const tree = op.tree as CarryTree;
        return !Object.hasOwn(tree, "metadata") || tree.metadata === "skip";
      }
      default:
        return false;
    }
  });
}

const DIRECTION_LABEL: Record<Direction, string> = {
  hubToSpoke: "hub→spoke",
  spokeToHub: "spoke→hub",
};

/** Runs an op list over a fresh output; `kind` and `metadata` are seeded for whole objects. */
export function runOps(ops: readonly OpFn[], input: JsonObject, output: JsonObject): JsonObject {
  for (let i = 0; i < ops.length; i++) ops[i](input, output);
  return output;
}

/** Converts one object in one direction of a plan. The input is never mutated. */
export function convertWithPlan(
  plan: LinkedPlan,
  direction: Direction,
  input: JsonObject,
): JsonObject {
  const output: JsonObject = {};
  if (Object.hasOwn(input, "kind")) output.kind = input.kind;
  const metadata = input.metadata;
  output.metadata = !isJsonObject(metadata)
    ? {}
    : plan.sharesMetadata?.[direction] === true
    ? metadata
    : deepCopy(metadata);
  try {
    return runOps(plan[direction], input, output);
  } catch (e) {
    if (e instanceof ConversionError) {
      throw new ConversionError(
        `${DIRECTION_LABEL[direction]} (${plan.hubVersion}↔${plan.spokeVersion}): ${e.message}`,
      );
    }
    throw e;
  }
}

/** Plans linked on first use: the spoke versions known now, the linking deferred to `link`. */
export interface DeferredPlans {
  readonly spokeVersions: readonly string[];
  readonly link: () => Iterable<LinkedPlan>;
}

/**
 * Routes objects between versions through the hub. Built from linked plans, or from
 * {@link DeferredPlans}: then nothing is linked until the first conversion (or read of `plans`),
 * so a router that is held but never used costs only what its `link` keeps.
 */
export class Router {
  #plans: ReadonlyMap<string, LinkedPlan> | undefined;
  #deferred: DeferredPlans | undefined;
  readonly #spokes: readonly string[];

  constructor(readonly hubVersion: string, plans: Iterable<LinkedPlan> | DeferredPlans) {
    if (isDeferred(plans)) {
      this.#deferred = plans;
      this.#spokes = [...plans.spokeVersions];
    } else {
      this.#plans = planMap(plans);
      this.#spokes = [...this.#plans.keys()];
    }
  }

  /** The linked plans by spoke version (links deferred plans now; a link error is thrown). */
  get plans(): ReadonlyMap<string, LinkedPlan> {
    if (this.#plans === undefined) {
      this.#plans = planMap(this.#deferred!.link());
      this.#deferred = undefined;
    }
    return this.#plans;
  }

  /** Whether the plans are linked (always, unless built deferred and not used yet). */
  get linked(): boolean {
    return this.#plans !== undefined;
  }

  /** The versions this router can convert between (hub first); never links. */
  versions(): string[] {
    return [this.hubVersion, ...this.#spokes];
  }

  private plan(version: string): LinkedPlan {
    const p = this.plans.get(version);
    if (p === undefined) {
      throw new ConversionError(`no compiled plan for version ${JSON.stringify(version)}`);
    }
    return p;
  }

  /** Same version returns `obj` itself (nothing is copied). */
  route(obj: JsonObject, from: string, to: string): JsonObject {
    if (from === to) return obj;
    let cur = obj;
    if (from !== this.hubVersion) cur = convertWithPlan(this.plan(from), "spokeToHub", cur);
    if (to === this.hubVersion) return cur;
    return convertWithPlan(this.plan(to), "hubToSpoke", cur);
  }
}

function isDeferred(p: Iterable<LinkedPlan> | DeferredPlans): p is DeferredPlans {
  return typeof (p as DeferredPlans).link === "function";
}

function planMap(plans: Iterable<LinkedPlan>): ReadonlyMap<string, LinkedPlan> {
  const m = new Map<string, LinkedPlan>();
  for (const p of plans) m.set(p.spokeVersion, p);
  return m;
}

/** Builds a router from an analysis; spokes without a plan (errors) are left out. */
export function createRouter(analysis: AnalysisResult, options?: LinkOptions): Router;
export function createRouter(
  hubVersion: string,
  plans: Iterable<PlanData>,
  options?: LinkOptions,
): Router;
export function createRouter(
  a: AnalysisResult | string,
  b?: Iterable<PlanData> | LinkOptions,
  c?: LinkOptions,
): Router {
  if (typeof a === "string") {
    const plans = (b ?? []) as Iterable<PlanData>;
    return new Router(a, [...plans].map((p) => linkPlan(p, c)));
  }
  const options = b as LinkOptions | undefined;
  const linked: LinkedPlan[] = [];
  for (const s of a.spokes) if (s.plan !== undefined) linked.push(linkPlan(s.plan, options));
  return new Router(a.hubVersion, linked);
}

/** The version part of an apiVersion (text after the last `/`). */
export function versionOf(apiVersion: string): string {
  return apiVersion.slice(apiVersion.lastIndexOf("/") + 1);
}

/**
 * Converts `obj` to `desiredAPIVersion` as the webhook does: route by version, then set
 * `apiVersion` and guarantee a `metadata` map. Returns a new top-level object.
 */
export function convertObject(
  router: Router,
  obj: JsonObject,
  desiredAPIVersion: string,
): JsonObject {
  const apiVersion = obj.apiVersion;
  if (typeof apiVersion !== "string" || apiVersion === "") {
    throw new ConversionError("object has no apiVersion");
  }
  const routed = router.route(obj, versionOf(apiVersion), versionOf(desiredAPIVersion));
  const out: JsonObject = { apiVersion: desiredAPIVersion };
  for (const key in routed) {
    if (key !== "apiVersion" && Object.hasOwn(routed, key)) setKey(out, key, routed[key]);
  }
  if (!isJsonObject(out.metadata)) {
    out.metadata = isJsonObject(obj.metadata) ? deepCopy(obj.metadata) : {};
  }
  return out;
}
