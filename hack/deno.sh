#!/usr/bin/env bash
# Runs the pinned Deno (tools/package.json) — installing it from npm on first use — so that a
# machine with only Node/npm can run every task: `bash hack/deno.sh task test`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/tools/node_modules/.bin/deno"
if [ ! -x "$bin" ] || ! "$bin" --version >/dev/null 2>&1; then
  echo "hack/deno.sh: installing the pinned Deno from npm into tools/ ..." >&2
  npm ci --prefix "$root/tools" --no-audit --no-fund --loglevel=error >&2
fi
export RUST_BACKTRACE="${RUST_BACKTRACE:-0}"
exec "$bin" "$@"
