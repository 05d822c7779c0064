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
import { identityOf, type ServerChildSettings, ServerSpecError, type Spec } from "./settings.ts";

/** `repo@digest`, else `repo:tag`, else the operator default. */
export function resolveImage(spec: Spec, defaultImage = ""): string {
  const fallback = defaultImage || DEFAULT_WEBHOOK_SERVER_IMAGE;
  const repo = spec.image?.repository;
  if (!repo) return fallback;
  if (spec.image?.digest) return `${repo}@${spec.image.digest}`;
  if (spec.image?.tag) return `${repo}:${spec.image.tag}`;
  return fallback;
}

/**
 * The managed flags `extraArgs` names (admission rejects them; re-checked at reconcile time so a
 * bypassed webhook cannot rewrite identity/TLS/bind/feature flags). Covers `--flag`, `--flag=value`,
 * `--flag value` (a following non-dash token is skipped as the value) and the single-dash forms.
 */
export function managedFlagsIn(extraArgs: readonly string[] | undefined): string[] {
  const managed = new Set<string>(MANAGED_WEBHOOK_SERVER_FLAGS);
  const found = new Set<string>();
  const args = extraArgs ?? [];
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([^=-][^=]*)(=.*)?$/.exec(args[i]);
    if (m === null) continue;
    if (managed.has(m[1])) found.add(m[1]);
    if (m[2] === undefined && i + 1 < args.length && !args[i + 1].startsWith("-")) i++;
  }
  return [...found].sort();
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
  return [...args, ...(cws.spec.extraArgs ?? [])];
}
