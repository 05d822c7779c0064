/**
 * A `metav1.LabelSelector` given as JSON (as the `--cache-label-selector` flag takes it) turned
 * into the string form the apiserver's `labelSelector` query parameter takes.
 */

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

const KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

function checkKey(key: unknown): string {
  if (typeof key !== "string" || !KEY.test(key)) {
    throw new Error(`invalid label key ${JSON.stringify(key)}`);
  }
  return key;
}

function checkValue(value: unknown): string {
  if (typeof value !== "string" || value.length > 63 || !VALUE.test(value)) {
    throw new Error(`invalid label value ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * "" or an empty selector → "" (everything). Throws with a precise message on invalid JSON, an
 * unknown operator, or an invalid key/value.
 */
export function labelSelectorFromJSON(json: string): string {
  if (json.trim() === "") return "";
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (e) {
    throw new Error(`label selector is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error("label selector must be a JSON object {matchLabels, matchExpressions}");
  }
  const sel = parsed as LabelSelector;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
    parts.push(`${checkKey(k)}=${checkValue(v)}`);
  }
  for (const expr of sel.matchExpressions ?? []) {
    const key = checkKey(expr.key);
    const values = (expr.values ?? []).map(checkValue);
    switch (expr.operator) {
      case "In":
      case "NotIn":
        if (values.length === 0) throw new Error(`${expr.operator} on ${key} needs values`);
        parts.push(`${key} ${expr.operator.toLowerCase()} (${values.join(",")})`);
        break;
      case "Exists":
      case "DoesNotExist":
        if (values.length > 0) throw new Error(`${expr.operator} on ${key} takes no values`);
        parts.push(expr.operator === "Exists" ? key : `!${key}`);
        break;
      default:
        throw new Error(`unknown label selector operator ${JSON.stringify(expr.operator)}`);
    }
  }
  return parts.join(",");
}
