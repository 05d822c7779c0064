/**
 * The webhook-server container's image and arguments
 * (docs/design/server-children.md#the-deployment): the managed flags first, in a fixed order, then
 * `spec.extraArgs`, which may not name a managed flag.
 */
import { type ConversionWebhookServer, MANAGED_WEBHOOK_SERVER_FLAGS } from "../../api/mod.ts";
import {
  CONVERSION_PORT,
  DEFAULT_WEBHOOK_SERVER_IMAGE,
  METRICS_PORT,
  TLS_MOUNT_PATH,
} from "./names.ts";
import {
  identityOf,
  metricsSecureOf,
  type ServerChildSettings,
  ServerSpecError,
  type Spec,
} from "./settings.ts";

/** `repo@digest`, else `repo:tag`, else the operator default. */
export function resolveImage(spec: Spec, defaultImage = ""): string {
  const fallback = defaultImage || DEFAULT_WEBHOOK_SERVER_IMAGE;
  const repo = spec.image?.repository;
  if (!repo) return fallback;
  if (spec.image?.digest) return `${repo}@${spec.image.digest}`;
  if (spec.image?.tag) return `${repo}:${spec.image.tag}`;
  return fallback;
}

/** One flag occurrence in an argument list: `--name=value`, `--name value`, `-name`, …. */
export interface FlagUse {
  name: string;
  /** The token as written. */
  token: string;
  /** undefined: no inline value and no following value token. */
  value: string | undefined;
}

/**
 * Go-flag-style scan: a token starting with `-` is a flag (one or two dashes, the single-dash form
 * included as hardening); without `=value`, a following token that does not start with `-` is
 * its value and is skipped.
 */
export function scanFlags(args: readonly string[]): FlagUse[] {
  const out: FlagUse[] = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i];
    if (!token.startsWith("-") || token === "-" || token === "--") continue;
    const body = token.startsWith("--") ? token.slice(2) : token.slice(1);
    const eq = body.indexOf("=");
    if (eq >= 0) {
      out.push({ name: body.slice(0, eq), token, value: body.slice(eq + 1) });
      continue;
    }
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith("-")) {
      out.push({ name: body, token, value: next });
      i++;
    } else {
      out.push({ name: body, token, value: undefined });
    }
  }
  return out;
}

/**
 * The managed flags `extraArgs` names, sorted (admission rejects them; re-checked at reconcile
 * time so a bypassed webhook cannot rewrite identity/TLS/bind/feature flags), in any of the forms
 * {@link scanFlags} reads.
 */
export function managedFlagsIn(extraArgs: readonly string[] | undefined): string[] {
  const managed = new Set<string>(MANAGED_WEBHOOK_SERVER_FLAGS);
  const found = scanFlags(extraArgs ?? []).map((f) => f.name).filter((n) => managed.has(n));
  return [...new Set(found)].sort();
}

function sortedRecord(r: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * `cacheSelector` as the JSON `--cache-label-selector` takes; undefined for an absent or empty
 * selector (≡ unscoped, flag omitted). `matchLabels` keys are sorted so the rendered argument, and
 * with it the pod template, is stable.
 */
export function cacheSelectorJSON(spec: Spec): string | undefined {
  const sel = spec.cacheSelector;
  const labels = sel?.matchLabels ?? {};
  const exprs = sel?.matchExpressions ?? [];
  if (Object.keys(labels).length === 0 && exprs.length === 0) return undefined;
  const out: Record<string, unknown> = {};
  if (Object.keys(labels).length > 0) out.matchLabels = sortedRecord(labels);
  if (exprs.length > 0) out.matchExpressions = exprs;
  return JSON.stringify(out);
}

/** Container args, managed flags first; throws if `extraArgs` names a managed flag. */
export function containerArgs(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): string[] {
  const { name } = identityOf(cws);
  const clash = managedFlagsIn(cws.spec.extraArgs);
  if (clash.length > 0) {
    throw new ServerSpecError(
      `spec.extraArgs must not set managed flags: ${clash.map((f) => `--${f}`).join(", ")}`,
    );
  }
  const args = [
    `--webhook-server-name=${name}`,
    `--tls-cert-dir=${TLS_MOUNT_PATH}`,
    `--conversion-bind-address=:${CONVERSION_PORT}`,
    `--metrics-bind-address=:${METRICS_PORT}`,
    `--enable-xrd-support=${settings.enableXrdSupport}`,
    `--enable-crd-support=${settings.enableCrdSupport}`,
  ];
  const selector = cacheSelectorJSON(cws.spec);
  if (selector !== undefined) args.push(`--cache-label-selector=${selector}`);
  if (metricsSecureOf(cws, settings)) args.push("--metrics-secure=true");
  return [...args, ...(cws.spec.extraArgs ?? [])];
}
