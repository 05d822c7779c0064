/**
 * The strategy contract. A strategy is one definition object: how to read its params block
 * (translation), its structural checks (docs/design/engine.md#validation-stages), how to compile
 * it against a scope's schemas (claims, diagnostics, verdict, one op per direction), and the
 * linkers that turn its op data into closures. Adding a strategy = one file in strategies/ + one
 * line in strategies/mod.ts; an inverse pair is one `mirror()` call (mirror.ts).
 */
import type {
  DiagnosticClass,
  JsonObject,
  JsonValue,
  Lossless,
  OpData,
  SchemaNode,
  StrategyName,
} from "./types.ts";

/** A runtime op: reads only `input`, writes only into `output`; throws ConversionError. */
export type OpFn = (input: JsonObject, output: JsonObject) => void;

/** Links nested op lists (ForEach, `when` gates). */
export type LinkOps = (ops: readonly OpData[]) => OpFn[];

/** How a plan is linked. */
export interface LinkOptions {
  /**
   * Let the output share carried subtrees (identity copies, passthrough) with the input instead
   * of deep-copying them. Only for callers that own the input and never use it again (the
   * webhook: a parsed request is discarded after the response is encoded). Safe because the
   * carry walk is the last op of every scope: nothing writes into the output after it, so no
   * shared subtree is ever written through either object. The `metadata` map the output starts
   * with is shared too for a direction none of whose ops can write into it (`leavesMetadata` in
   * convert.ts); otherwise it is deep-copied.
   */
  shareInput?: boolean;
  /**
   * Link each op list into one generated function (default true; src/engine/link_compiled.ts).
   * `false` links one interpreted closure per op: the reference the compiled form is tested
   * against. Where `new Function` is unavailable the interpreted closures are linked either way.
   */
  compiled?: boolean;
}

export type OpLinker = (op: OpData, link: LinkOps, options: LinkOptions) => OpFn;

/** A resolved schema path: the dotted path, its segments and the node (undefined = not found). */
export interface Resolved {
  path: string;
  segments: string[];
  node: SchemaNode | undefined;
}

/** The compile-time view a strategy gets of the scope it is compiled in. */
export interface RuleContext {
  /** ForEach nesting depth of this scope (0 = top level). */
  readonly depth: number;
  readonly hubSchema: SchemaNode | undefined;
  readonly spokeSchema: SchemaNode | undefined;
  /** Resolves on the hub schema; emits *path-not-found* (naming `param`) on failure. */
  resolveHub(path: string, param: string): Resolved;
  resolveSpoke(path: string, param: string): Resolved;
  /** Claims `path` on a side; with `subtree`, also every leaf under the resolved node. */
  claimHub(r: Resolved, subtree?: boolean): void;
  claimSpoke(r: Resolved, subtree?: boolean): void;
  error(cls: DiagnosticClass, message: string, path?: string): void;
  warn(cls: DiagnosticClass, message: string, path?: string): void;
  /** Compiles a nested rule list (ForEach) as its own scope over the two item schemas. */
  compileNested(
    rules: readonly EngineRule[],
    hubItems: SchemaNode,
    spokeItems: SchemaNode,
    hubItemsPath: string,
    spokeItemsPath: string,
  ): NestedScope;
}

export interface NestedScope {
  lossless: Lossless;
  hubToSpoke: OpData[];
  spokeToHub: OpData[];
}

/** What compiling one rule yields (the context collects claims and diagnostics). */
export interface RuleOutcome {
  /** Declared paths, as reported in ruleResults. */
  hubPaths: string[];
  spokePaths: string[];
  lossless: Lossless;
  /** Absent = no op in that direction. */
  hubToSpoke?: OpData;
  spokeToHub?: OpData;
}

/** A translated rule: a strategy with its decoded params. */
export interface EngineRule {
  strategy: StrategyName;
  params: unknown;
  acknowledgeLossy: boolean;
  reason: string;
  when?: { path: string; equals: JsonValue };
}

export interface StrategyDefinition<P = unknown> {
  name: StrategyName;
  /** The other strategy of an inverse pair built by `mirror()` (src/engine/mirror.ts). */
  inverse?: StrategyName;
  /** Decodes the params block; throws TranslationError with a message naming the field. */
  translate(block: ParamReader): P;
  /**
   * Structural checks particular to this strategy (config only, no schema).
   * Returns a message, or undefined when fine.
   */
  structural?(raw: JsonObject): string | undefined;
  compile(params: P, ctx: RuleContext): RuleOutcome;
  /** Linkers for the op codes this strategy emits. */
  ops: Record<string, OpLinker>;
}

export class TranslationError extends Error {
  override name = "TranslationError";
}

/** Reads one params block with precise messages; used by `translate`. */
export class ParamReader {
  constructor(
    readonly raw: JsonObject,
    readonly key: string,
    private readonly translateNested: (rules: unknown, where: string) => EngineRule[],
  ) {}

  /** A nested rule list (ForEach), translated recursively. */
  rules(field: string): EngineRule[] {
    return this.translateNested(this.has(field) ? this.raw[field] : [], `${this.key}.${field}`);
  }

  private fail(field: string, want: string): never {
    throw new TranslationError(`${this.key}.${field}: expected ${want}`);
  }

  has(field: string): boolean {
    return Object.hasOwn(this.raw, field) && this.raw[field] !== null;
  }

  string(field: string): string {
    const v = this.raw[field];
    if (typeof v !== "string") this.fail(field, "a string");
    return v;
  }

  /** A required non-empty string. */
  path(field: string): string {
    const v = this.string(field);
    if (v.trim() === "") this.fail(field, "a non-empty path");
    return v;
  }

  optString(field: string, dflt = ""): string {
    if (!this.has(field)) return dflt;
    return this.string(field);
  }

  optBool(field: string): boolean {
    if (!this.has(field)) return false;
    const v = this.raw[field];
    if (typeof v !== "boolean") this.fail(field, "a boolean");
    return v;
  }

  number(field: string): number {
    const v = this.raw[field];
    if (typeof v !== "number" || !Number.isFinite(v)) this.fail(field, "a number");
    return v;
  }

  /** An enum value; the empty string or absence yields the default. */
  choice<T extends string>(field: string, allowed: readonly T[], dflt: T): T {
    const v = this.optString(field, "");
    if (v === "") return dflt;
    if (!(allowed as readonly string[]).includes(v)) {
      this.fail(field, `one of ${allowed.join(", ")} (got ${JSON.stringify(v)})`);
    }
    return v as T;
  }

  json(field: string): JsonValue {
    return Object.hasOwn(this.raw, field) ? this.raw[field] : null;
  }

  stringList(field: string, required = true): string[] {
    if (!this.has(field)) {
      if (required) this.fail(field, "a list of strings");
      return [];
    }
    const v = this.raw[field];
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
      this.fail(field, "a list of strings");
    }
    return v as string[];
  }

  stringMap(field: string, required = false): Record<string, string> {
    if (!this.has(field)) {
      if (required) this.fail(field, "a map of strings");
      return {};
    }
    const v = this.raw[field];
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.fail(field, "a map");
    const out: Record<string, string> = {};
    for (const [k, x] of Object.entries(v)) {
      if (typeof x !== "string") this.fail(`${field}.${k}`, "a string");
      out[k] = x;
    }
    return out;
  }

  jsonMap(field: string): JsonObject {
    if (!this.has(field)) return {};
    const v = this.raw[field];
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.fail(field, "a map");
    return v as JsonObject;
  }

  list(field: string): JsonValue[] {
    if (!this.has(field)) return [];
    const v = this.raw[field];
    if (!Array.isArray(v)) this.fail(field, "a list");
    return v;
  }

  /** `existsOn`; values other than Hub/Spoke are kept so compile can report them precisely. */
  side(field = "existsOn"): string {
    return this.optString(field, "");
  }
}
