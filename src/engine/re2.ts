/**
 * Go `regexp` (RE2) patterns for ScalarToFields / FieldsToScalar, on re2js, a port
 * of RE2/J: the same syntax as Go (`(?P<n>…)` and `(?<n>…)`, `\pL`, `[[:alpha:]]`, `\Q…\E`, inline
 * flags, `\A`, `\z`), the same character classes (`\s` is `[\t\n\f\r ]`, `.` excludes only `\n`,
 * `\d`/`\w`/`\b` are ASCII), no lookaround or backreferences, and matching in time linear in the
 * input, so no pattern can stall a conversion.
 */
import { RE2JS } from "re2js";

/** A pattern that does not compile under RE2 rules; the message says why. */
export class Re2SyntaxError extends Error {
  override name = "Re2SyntaxError";
}

/** Constructs Perl/JS regexps have and RE2 lacks, named so the message is actionable. */
const UNSUPPORTED: readonly [RegExp, string][] = [
  [/\(\?<?[=!]/, "lookaround assertions ((?=…), (?!…), (?<=…), (?<!…)) are not supported by RE2"],
  [/\\[1-9]|\\k</, "backreferences are not supported by RE2"],
];

/** A compiled RE2 pattern with its named capture groups. */
export class Re2Pattern {
  /** Named groups in pattern order. */
  readonly groupNames: readonly string[];
  readonly #re: RE2JS;
  readonly #groupIndex: ReadonlyMap<string, number>;

  private constructor(readonly source: string, re: RE2JS) {
    this.#re = re;
    const named = Object.entries(re.namedGroups()).sort((a, b) => a[1] - b[1]);
    this.#groupIndex = new Map(named);
    this.groupNames = named.map(([name]) => name);
  }

  /** Compiles under RE2 rules; throws Re2SyntaxError. */
  static compile(source: string): Re2Pattern {
    try {
      return new Re2Pattern(source, RE2JS.compile(source));
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      for (const [construct, why] of UNSUPPORTED) {
        if (construct.test(source)) throw new Re2SyntaxError(`${why}: ${message}`);
      }
      throw new Re2SyntaxError(message);
    }
  }

  hasGroup(name: string): boolean {
    return this.#groupIndex.has(name);
  }

  /**
   * Unanchored leftmost-first search. Returns each named group's capture (a group that did not
   * take part in the match yields ""), or undefined when the input does not match.
   */
  search(input: string): Map<string, string> | undefined {
    const m = this.#re.matcher(input);
    if (!m.find()) return undefined;
    const out = new Map<string, string>();
    for (const [name, index] of this.#groupIndex) out.set(name, m.group(index) ?? "");
    return out;
  }
}
