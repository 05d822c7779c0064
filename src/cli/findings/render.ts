/**
 * The CI-native renderings of a list of findings: GitHub workflow commands (with a Markdown job
 * summary), SARIF 2.1.0 for code scanning, and a deterministic Markdown table for PR comments.
 * They only present findings; whether a run passes is the command's exit code.
 */
import { toJson } from "../output.ts";
import { buildVersion } from "../version.ts";
import { type Finding, FINDING_DESCRIPTIONS, type FindingLevel, sortFindings } from "./finding.ts";

const COMMAND: Record<FindingLevel, string> = {
  error: "error",
  warning: "warning",
  note: "notice",
};

/** Workflow-command data escaping (the message part). */
function escapeData(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** Workflow-command property escaping (`file=`, `title=`, …). */
function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

/** `::error file=…,line=…,col=…,title=…::message`, one line per finding. */
export function renderGithub(findings: readonly Finding[]): string {
  return sortFindings(findings).map((f) => {
    const props = [`file=${escapeProperty(f.file)}`];
    if (f.line !== undefined) props.push(`line=${f.line}`);
    if (f.column !== undefined) props.push(`col=${f.column}`);
    props.push(`title=${escapeProperty(f.ruleId)}`);
    return `::${COMMAND[f.level]} ${props.join(",")}::${escapeData(f.message)}\n`;
  }).join("");
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, "<br>");
}

function location(f: Finding): string {
  if (f.line === undefined) return f.file;
  return f.column === undefined ? `${f.file}:${f.line}` : `${f.file}:${f.line}:${f.column}`;
}

/** A Markdown section: a title, a count line and a table (or "No findings."). */
export function renderMarkdown(findings: readonly Finding[], title: string): string {
  const sorted = sortFindings(findings);
  const count = (l: FindingLevel) => sorted.filter((f) => f.level === l).length;
  let text = `### ${title}\n\n`;
  text += `${count("error")} error(s), ${count("warning")} warning(s), ${
    count("note")
  } note(s)\n\n`;
  if (sorted.length === 0) return text + "No findings.\n";
  text += "| Level | Finding | Location | Message |\n|---|---|---|---|\n";
  for (const f of sorted) {
    text += `| ${f.level} | \`${f.ruleId}\` | ${cell(location(f))} | ${cell(f.message)} |\n`;
  }
  return text;
}

/**
 * The `github` output: the workflow commands, and — when `$GITHUB_STEP_SUMMARY` names a file, as
 * it does inside a GitHub Actions step — the Markdown table appended to the job summary.
 */
export function githubOutput(findings: readonly Finding[], title: string): string {
  let summary: string | undefined;
  try {
    summary = Deno.env.get("GITHUB_STEP_SUMMARY");
  } catch {
    summary = undefined; // no env permission: no job summary
  }
  if (summary !== undefined && summary !== "") {
    Deno.writeTextFileSync(summary, renderMarkdown(findings, title) + "\n", { append: true });
  }
  return renderGithub(findings);
}

export interface SarifTool {
  version: string;
  informationUri?: string;
}

const SARIF_LEVEL: Record<FindingLevel, string> = {
  error: "error",
  warning: "warning",
  note: "note",
};

/** One SARIF 2.1.0 log with one run of convctl. */
export function renderSarif(findings: readonly Finding[], tool: SarifTool): string {
  const sorted = sortFindings(findings);
  const ids = [...new Set(sorted.map((f) => f.ruleId))].sort();
  const rules = ids.map((id) => ({
    id,
    shortDescription: { text: FINDING_DESCRIPTIONS[id] ?? id },
  }));
  const results = sorted.map((f) => {
    const region: Record<string, number> = {};
    if (f.line !== undefined) region.startLine = f.line;
    if (f.column !== undefined) region.startColumn = f.column;
    return {
      ruleId: f.ruleId,
      ruleIndex: ids.indexOf(f.ruleId),
      level: SARIF_LEVEL[f.level],
      message: { text: f.message },
      locations: [{
        physicalLocation: {
          artifactLocation: { uri: f.file.split("/").map(encodeURIComponent).join("/") },
          ...(f.line !== undefined ? { region } : {}),
        },
      }],
    };
  });
  return toJson({
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [{
      tool: {
        driver: {
          name: "convctl",
          version: tool.version,
          ...(tool.informationUri !== undefined ? { informationUri: tool.informationUri } : {}),
          rules,
        },
      },
      results,
    }],
  });
}

/** The three CI formats of a command, for its `output.formats`. */
export function ciFormats<R, C>(
  findingsOf: (result: R, invocation: C) => Finding[],
  titleOf: (result: R, invocation: C) => string,
): Record<"github" | "sarif" | "markdown", (result: R, invocation: C) => string> {
  return {
    github: (r, c) => githubOutput(findingsOf(r, c), titleOf(r, c)),
    sarif: (r, c) => renderSarif(findingsOf(r, c), { version: buildVersion() }),
    markdown: (r, c) => renderMarkdown(findingsOf(r, c), titleOf(r, c)),
  };
}
