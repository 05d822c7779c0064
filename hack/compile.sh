#!/usr/bin/env bash
# `deno task compile`: one self-contained executable per role with `deno compile`, under the
# role's exact permission flags (the same as its deno.json task and the bundle; tests/repo/
# dockerfile_test.ts fails if they drift). The webhook server carries its compile, conversion and
# listener Workers (`--include src/webhook/compile_worker.ts --include
# src/webhook/convert/convert_worker.ts --include src/webhook/convert/listener_worker.ts`), which it
# starts at run time; convctl carries the Workers of `test --concurrency` and `lint`
# (`--include src/cli/test_worker.ts --include src/cli/lint_worker.ts`).
#
#   hack/compile.sh                         all roles → dist/bin/{manager,webhook-server,convctl}
#   hack/compile.sh webhook-server          one role
#   DCO_COMPILE_TARGET=aarch64-unknown-linux-gnu hack/compile.sh   cross-compile (release.yml)
#   DCO_COMPILE_OUT=/out hack/compile.sh    another output directory (the Dockerfile)
#
# `deno compile` needs its `denort` runtime for the target, which it downloads from
# dl.deno.land on first use (then cached in DENO_DIR). Without network access it fails; this
# script then says so. Offline alternatives: DENORT_BIN=<path to a denort of the same Deno
# version> (read by deno compile itself), or `deno task bundle` (JavaScript per role, run with
# the pinned Deno).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${DCO_COMPILE_OUT:-$root/dist/bin}"
target="${DCO_COMPILE_TARGET:-}"
deno() { bash "$root/hack/deno.sh" "$@"; }
cd "$root"

roles=("$@")
[ "${#roles[@]}" -eq 0 ] && roles=(manager webhook-server convctl)

compile_role() {
  local role="$1"
  local flags entry include=()
  case "$role" in
    manager)
      flags=(--allow-net --allow-env --allow-read=/tmp/k8s-webhook-server/serving-certs,/var/run/secrets/kubernetes.io/serviceaccount)
      entry=src/main/manager.ts
      ;;
    webhook-server)
      flags=(--allow-net --allow-env --allow-read=src,/tls,/var/run/secrets/kubernetes.io/serviceaccount,/sys/fs/cgroup)
      entry=src/main/webhook_server.ts
      include=(--include src/webhook/compile_worker.ts --include src/webhook/convert/convert_worker.ts --include src/webhook/convert/listener_worker.ts)
      ;;
    convctl)
      flags=(--allow-read --allow-env --allow-write --allow-net --allow-run=git)
      entry=src/main/convctl.ts
      include=(--include src/cli/test_worker.ts --include src/cli/lint_worker.ts)
      ;;
    *)
      echo "hack/compile.sh: unknown role ${role@Q} (manager, webhook-server or convctl)" >&2
      return 2
      ;;
  esac
  local args=(compile --frozen)
  [ -n "$target" ] && args+=(--target "$target")
  args+=("${flags[@]}" "${include[@]}" --output "$out/$role" "$entry")
  local log
  log="$(mktemp)"
  if ! deno "${args[@]}" 2>"$log"; then
    cat "$log" >&2
    if grep -qiE 'denort|dl\.deno\.land|error sending request|dns error' "$log"; then
      cat >&2 <<EOF

hack/compile.sh: \`deno compile\` could not fetch its denort runtime (${target:-host target}).
It downloads it from https://dl.deno.land on first use, so this step needs network access
(or DENORT_BIN=<path to a denort $(deno --version | head -n1 | cut -d' ' -f2) binary>).
Offline, use \`deno task bundle\` instead: one JavaScript file per role, run with the pinned Deno.
EOF
    fi
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
  echo "compiled $out/$role" >&2
}

mkdir -p "$out"
for role in "${roles[@]}"; do compile_role "$role"; done
