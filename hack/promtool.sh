#!/usr/bin/env bash
# Provides Prometheus' promtool (for `promtool check rules` / `promtool test rules` against the
# chart's PrometheusRule, tests/chart/alerts_test.ts) and prints its absolute path as the ONLY
# stdout line (progress goes to stderr): `PROMTOOL="$(hack/promtool.sh)"`.
#
# Source: Debian's `prometheus` package, which ships /usr/bin/promtool. The .deb is fetched with
# `apt-get download` (no root, no install: no Prometheus server is ever started or enabled) and
# only the promtool binary is extracted with `dpkg-deb -x` into a cache OUTSIDE the repo:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dco-promtool/<package version>/promtool
# Cold: ~20 MB download + extraction, a few seconds. Warm: one file test, a few ms.
#
# Overrides:
#   PROMTOOL            an existing promtool binary (used as-is, nothing is fetched)
#   DCO_PROMTOOL_CACHE  cache root (default above)
set -euo pipefail

log() { echo "promtool.sh: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

if [ -n "${PROMTOOL:-}" ]; then
  [ -f "$PROMTOOL" ] && [ -x "$PROMTOOL" ] || die "PROMTOOL=$PROMTOOL is not an executable file"
  realpath "$PROMTOOL"
  exit 0
fi

cache_root="${DCO_PROMTOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dco-promtool}"
mkdir -p "$cache_root"

# Warm path: any cached promtool that runs (the newest version directory wins).
warm() {
  local d
  for d in $(ls -1d "$cache_root"/*/ 2>/dev/null | sort -rV); do
    if [ -x "$d/promtool" ] && "$d/promtool" --version >/dev/null 2>&1; then
      realpath "$d/promtool"
      return 0
    fi
  done
  return 1
}
warm && exit 0

command -v apt-get >/dev/null || die "apt-get not found: set PROMTOOL to a promtool binary"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found: set PROMTOOL to a promtool binary"

# One fetch at a time (parallel test processes share the cache).
exec 9>"$cache_root/.lock"
if command -v flock >/dev/null; then flock 9; fi
warm && exit 0

tmp="$(mktemp -d "$cache_root/.fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
apt_opts=()
# As root apt would try (and fail, with a warning) to drop to the _apt user for the download.
[ "$(id -u)" = 0 ] && apt_opts=(-o APT::Sandbox::User=root)
fetch() { (cd "$tmp" && apt-get download -q "${apt_opts[@]}" prometheus >&2); }
log "fetching Debian's prometheus package (for promtool) ..."
if ! fetch; then
  # Stale or missing package lists: refresh once when we may (as root), then retry.
  if [ "$(id -u)" = 0 ]; then
    log "apt-get download failed; running apt-get update and retrying"
    apt-get update -q >&2 || true
    fetch || die "apt-get download prometheus failed"
  else
    die "apt-get download prometheus failed (run apt-get update, or set PROMTOOL)"
  fi
fi
deb="$(ls "$tmp"/prometheus_*.deb)"
version="$(dpkg-deb -f "$deb" Version)"
dpkg-deb -x "$deb" "$tmp/x"
[ -x "$tmp/x/usr/bin/promtool" ] || die "the package has no usr/bin/promtool"
dest="$cache_root/$version"
mkdir -p "$dest"
mv "$tmp/x/usr/bin/promtool" "$dest/promtool.new"
mv "$dest/promtool.new" "$dest/promtool"
"$dest/promtool" --version >/dev/null 2>&1 || die "$dest/promtool does not run"
log "promtool $version cached in $dest"
realpath "$dest/promtool"
