#!/usr/bin/env bash
# One self-contained JavaScript artifact per role (+ the compile, conversion and listener Workers
# beside the webhook server), for machines where `deno compile` cannot fetch its `denort` runtime.
# Run each with the pinned Deno and the role's permission flags, e.g.
#   deno run --allow-net --allow-env --allow-read=/tls,/var/run/secrets/kubernetes.io/serviceaccount,/sys/fs/cgroup,dist/compile_worker.js,dist/convert_worker.js,dist/listener_worker.js dist/webhook_server.js ...
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/dist}"
mkdir -p "$out"
deno() { bash "$root/hack/deno.sh" "$@"; }
cd "$root"
# Separate bundles keep the Workers next to the role, where compile_pool.ts, convert/pool.ts and
# convert/listeners.ts look for them.
deno bundle --quiet --platform deno -o "$out/webhook_server.js" src/main/webhook_server.ts
deno bundle --quiet --platform deno -o "$out/compile_worker.js" src/webhook/compile_worker.ts
deno bundle --quiet --platform deno -o "$out/convert_worker.js" src/webhook/convert/convert_worker.ts
deno bundle --quiet --platform deno -o "$out/listener_worker.js" src/webhook/convert/listener_worker.ts
deno bundle --quiet --platform deno -o "$out/convctl.js" src/main/convctl.ts
deno bundle --quiet --platform deno -o "$out/lint_worker.js" src/cli/lint_worker.ts
deno bundle --quiet --platform deno -o "$out/manager.js" src/main/manager.ts
ls -l "$out" >&2
