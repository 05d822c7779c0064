#!/usr/bin/env bash
# `convctl` from this checkout, runnable from any directory: the deno.json task's permissions on
# src/main/convctl.ts with the pinned Deno. The convctl GitHub Actions take `convctl` from PATH;
# .github/workflows/convctl-actions.yml adopts this script as that binary (setup-convctl's
# `binary` input), as a release binary would be.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)" # also via a symlink
exec bash "$root/hack/deno.sh" run --quiet --allow-read --allow-env --allow-write --allow-net \
  "$root/src/main/convctl.ts" "$@"
