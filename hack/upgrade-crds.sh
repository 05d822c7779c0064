#!/usr/bin/env bash
# Upgrades dco's CRDs, which Helm installs once and never upgrades (docs/installation.md
# "Upgrading"). Reads them with `helm show crds` from a chart (a directory, a packaged .tgz or an
# oci:// reference) and, by default, diffs them against the cluster:
#
#   hack/upgrade-crds.sh [--chart <chart>] [--version <v>] [--print | --apply] [-- <kubectl args>]
#
#   (default)   `kubectl diff --server-side`: exit 0 when the cluster has them, 1 when they differ
#   --apply     `kubectl apply --server-side --force-conflicts` (Helm wrote the fields at install)
#   --print     print them and exit, no cluster needed
#
# --chart defaults to this checkout's charts/declarative-conversion-operator; --version is passed
# to `helm show crds` (for oci:// and repository charts). Arguments after `--` go to kubectl (e.g.
# `--context`, `--kubeconfig`). An empty `helm show crds` is an error, never applied. HELM and
# KUBECTL override the binaries.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
chart="$root/charts/declarative-conversion-operator"
version=""
mode=diff
kubectl_args=()
helm_bin="${HELM:-helm}"
kubectl_bin="${KUBECTL:-kubectl}"

usage() {
  sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --chart) [ $# -ge 2 ] || usage; chart="$2"; shift 2 ;;
    --chart=*) chart="${1#*=}"; shift ;;
    --version) [ $# -ge 2 ] || usage; version="$2"; shift 2 ;;
    --version=*) version="${1#*=}"; shift ;;
    --apply) mode=apply; shift ;;
    --print) mode=print; shift ;;
    --) shift; kubectl_args=("$@"); break ;;
    -h | --help) usage ;;
    *) echo "upgrade-crds.sh: unknown argument $1" >&2; usage ;;
  esac
done

show=("$helm_bin" show crds "$chart")
[ -n "$version" ] && show+=(--version "$version")
if ! crds="$("${show[@]}")"; then
  echo "upgrade-crds.sh: ${show[*]} failed" >&2
  exit 2
fi
if ! grep -q '^kind: CustomResourceDefinition' <<<"$crds"; then
  echo "upgrade-crds.sh: ${show[*]} printed no CustomResourceDefinition; nothing applied" >&2
  exit 2
fi

case "$mode" in
  print) printf '%s\n' "$crds" ;;
  apply)
    printf '%s\n' "$crds" |
      "$kubectl_bin" apply --server-side --force-conflicts --field-manager=dco-upgrade-crds \
        "${kubectl_args[@]}" -f -
    ;;
  diff)
    set +e
    printf '%s\n' "$crds" |
      "$kubectl_bin" diff --server-side --force-conflicts --field-manager=dco-upgrade-crds \
        "${kubectl_args[@]}" -f -
    rc=$?
    set -e
    case "$rc" in
      0) echo "upgrade-crds.sh: the cluster's CRDs match the chart's" >&2 ;;
      1) echo "upgrade-crds.sh: the cluster's CRDs differ; run again with --apply" >&2 ;;
    esac
    exit "$rc"
    ;;
esac
