#!/usr/bin/env bash
# The project's test command (`deno task test`). Where a test lives says what it needs
# (docs/testing.md):
#   tests/e2e/**   a real kube-apiserver + etcd (+ kubelet harness), built or reused by hack/testenv.sh
#   tests/chart/** no control plane, but the helm (and promtool) binaries hack/testenv.sh builds
#   tests/**       everything else: only Deno
# Prints deno's report and ends with a plain `N passed, N failed` line computed from it.
#   hack/test.sh          all tests
#   hack/test.sh unit     every test outside tests/e2e/ and tests/chart/ (needs only Deno)
#   hack/test.sh e2e      tests/e2e/ and tests/chart/ (need the binaries of hack/testenv.sh)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
deno() { bash "$root/hack/deno.sh" "$@"; }
what="${1:-all}"

targets=()
case "$what" in
  unit)
    for d in tests/*/; do
      case "$d" in tests/e2e/ | tests/chart/) ;; *) targets+=("${d%/}") ;; esac
    done
    ;;
  e2e) targets=(tests/e2e tests/chart) ;;
  all) targets=(tests) ;;
  *) echo "usage: hack/test.sh [all|unit|e2e]" >&2; exit 2 ;;
esac
existing=()
for t in "${targets[@]}"; do [ -e "$t" ] && existing+=("$t"); done

if [ "$what" != "unit" ] && [ -z "${DCO_TEST_KUBECONFIG:-}" ]; then
  # Build (cold) or reuse (warm) the control-plane binaries; a failure here fails the run.
  if ! assets="$(bash "$root/hack/testenv.sh")"; then
    echo "error: hack/testenv.sh could not provide the control-plane binaries (see above)" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
  export KUBEBUILDER_ASSETS="$assets"
fi

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
deno test --allow-all --parallel "${existing[@]}" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
# Strip colour codes before reading deno's summary line.
line="$(sed -E 's/\x1b\[[0-9;]*m//g' "$out" | grep -E '^(ok|FAILED) \| ' | tail -n 1)"
passed="$(sed -nE 's/.*\| ([0-9]+) passed.*/\1/p' <<<"$line")"
failed="$(sed -nE 's/.*\| ([0-9]+) failed.*/\1/p' <<<"$line")"
if [ -z "$line" ] && [ "$rc" -ne 0 ]; then failed=1; fi
echo "${passed:-0} passed, ${failed:-0} failed"
exit "$rc"
