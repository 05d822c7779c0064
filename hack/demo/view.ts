/** Terminal output helpers shared by the offline and the live demo. */
import { useColor } from "../../src/cli/output.ts";

const color = useColor(Deno.stdout);
const paint = (code: string) => (text: string) => color ? `\x1b[${code}m${text}\x1b[0m` : text;
export const bold = paint("1");
export const dim = paint("2");
export const green = paint("32");
export const yellow = paint("33");
export const red = paint("31");
export const cyan = paint("36");

export function say(text = ""): void {
  console.log(text);
}

/** A section heading: `━━ title ━━━…`. */
export function heading(title: string): string {
  return bold(`━━ ${title} ${"━".repeat(Math.max(4, 72 - title.length))}`);
}

/** Display width: code points, not counting colour escapes. */
function visible(text: string): number {
  // deno-lint-ignore no-control-regex -- matching ANSI SGR sequences is the point
  return [...text.replace(/\x1b\[[0-9;]*m/g, "")].length;
}

/** Two YAML documents next to each other, or one above the other when too wide. */
export function beforeAfter(
  leftTitle: string,
  left: string,
  rightTitle: string,
  right: string,
): string {
  const l = [leftTitle, ...left.trimEnd().split("\n")];
  const r = [rightTitle, ...right.trimEnd().split("\n")];
  const width = Math.max(...l.map(visible)) + 4;
  const columns = Deno.stdout.isTerminal() ? Deno.consoleSize().columns : 120;
  if (width + Math.max(...r.map(visible)) + 4 > columns) {
    return [...l, "", ...r].map((s) => `    ${s}`).join("\n");
  }
  const rows: string[] = [];
  for (let i = 0; i < Math.max(l.length, r.length); i++) {
    const a = l[i] ?? "";
    const b = r[i] ?? "";
    const gutter = i === 0 ? "  " : dim("│ ");
    rows.push(`    ${a}${" ".repeat(width - visible(a))}${gutter}${b}`.trimEnd());
  }
  return rows.join("\n");
}
