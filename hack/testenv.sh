#!/usr/bin/env bash
# Provides the control-plane binaries the e2e tests run against — kube-apiserver,
# kube-controller-manager, kubectl, etcd, helm and crossplane at pinned versions, and an
# OpenTelemetry Collector (otelcol) — and prints the absolute directory holding them as its ONLY stdout
# line (all progress goes to stderr), so callers can do `KUBEBUILDER_ASSETS="$(hack/testenv.sh)"`.
#
# Neither Debian nor npm has kube-apiserver and no machine of ours has Docker, so the binaries are
# built from Go source modules (the envtest approach) into a cache OUTSIDE the repo:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dco-testenv/<pins>/bin
# Cold: ~20 min on 2 cores (see docs/testing.md). Warm: one `test -d`, a few ms.
#
# Overrides (envtest's names), each skipping the corresponding build:
#   TEST_ASSET_KUBE_APISERVER, TEST_ASSET_KUBE_CONTROLLER_MANAGER, TEST_ASSET_ETCD,
#   TEST_ASSET_KUBECTL, TEST_ASSET_HELM, TEST_ASSET_OTELCOL  one binary each
#   TEST_ASSET_CROSSPLANE  the crossplane binary; TEST_ASSET_CROSSPLANE_CRDS its CRDs' directory
#   KUBEBUILDER_ASSETS  a directory (e.g. from setup-envtest) holding any of them by name
#                       (crossplane's CRDs, if it holds crossplane, in crossplane-crds/ there)
# Anything not overridden is built; a mix is printed as a directory of symlinks.
#
# Other knobs: DCO_TESTENV_CACHE (cache root), GOFLAGS/GOPROXY/GOMODCACHE/GOCACHE as usual.
set -euo pipefail

K8S_VERSION=v1.37.2   # k8s.io/kubernetes; staging modules k8s.io/* are pinned to v0.37.2
ETCD_VERSION=v3.6.16  # go.etcd.io/etcd/server/v3 (k8s 1.37 talks to etcd >= 3.5 through client v3.7)
HELM_VERSION=v3.22.0  # helm.sh/helm/v3
# The OpenTelemetry Collector (group otelcol): outside PINS, like kcm, so adding it builds one group.
OTELCOL_VERSION=v0.165.0      # go.opentelemetry.io/collector beta modules (otelcol, otlp receiver, …)
OTELCOL_STABLE_VERSION=v1.71.0 # its stable modules of the same release (confmap providers)
# Not in PINS (that would rebuild everything): after a bump, rm -rf <pins>/.parts/crossplane
# <pins>/bin/crossplane <pins>/bin/crossplane-crds and run this script again.
CROSSPLANE_VERSION=v2.4.0 # github.com/crossplane/crossplane/v2 (cmd/crossplane; CRDs: cluster/crds)
PINS="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_helm-${HELM_VERSION}"

cache_root="${DCO_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dco-testenv}"
dir="$cache_root/$PINS"
bin="$dir/bin"

log() { echo "testenv: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# --- resolve overrides --------------------------------------------------------------------------
tools=(kube-apiserver kube-controller-manager etcd kubectl helm)
tools+=(crossplane)
declare -A env_of=([kube-apiserver]=TEST_ASSET_KUBE_APISERVER [etcd]=TEST_ASSET_ETCD
  [kube-controller-manager]=TEST_ASSET_KUBE_CONTROLLER_MANAGER
  [kubectl]=TEST_ASSET_KUBECTL [helm]=TEST_ASSET_HELM)
# kube-controller-manager is a group of its own: it joined later, and a cache built before it
# gains it by one more (warm: ~2 min) build instead of a cold rebuild of the whole kube group.
declare -A group_of=([kube-apiserver]=kube [kubectl]=kube [kube-controller-manager]=kcm
  [etcd]=etcd [helm]=helm)
# otelcol: an OpenTelemetry Collector (OTLP receiver; otlphttp and debug exporters) for the trace e2e.
tools+=(otelcol)
env_of[otelcol]=TEST_ASSET_OTELCOL
group_of[otelcol]=otelcol
# crossplane joined the same way (group crossplane).
env_of[crossplane]=TEST_ASSET_CROSSPLANE
group_of[crossplane]=crossplane
declare -A given=() # tool -> absolute path supplied by the user
for t in "${tools[@]}"; do
  var="${env_of[$t]}"
  if [ -n "${!var:-}" ]; then
    [ -x "${!var}" ] && [ -f "${!var}" ] || die "$var=${!var} is not an executable file"
    given[$t]="$(realpath "${!var}")"
  elif [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/$t" ]; then
    given[$t]="$(realpath "$KUBEBUILDER_ASSETS/$t")"
  fi
done
if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ ! -d "$KUBEBUILDER_ASSETS" ]; then
  die "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS is not a directory"
fi
groups=(kube kcm etcd helm)
groups+=(otelcol)
groups+=(crossplane)
needed_groups=()
for g in "${groups[@]}"; do
  for t in "${tools[@]}"; do
    if [ "${group_of[$t]}" = "$g" ] && [ -z "${given[$t]:-}" ]; then
      needed_groups+=("$g")
      break
    fi
  done
done

# Everything supplied by one KUBEBUILDER_ASSETS directory: print it unchanged.
if [ "${#needed_groups[@]}" -eq 0 ] && [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
  kb="$(realpath "$KUBEBUILDER_ASSETS")"
  same=1
  for t in "${tools[@]}"; do [ "${given[$t]}" = "$(realpath "$kb/$t")" ] || same=0; done
  if [ "$same" -eq 1 ]; then
    echo "$kb"
    exit 0
  fi
fi

# Warm fast path: nothing to build and no overrides.
complete() { for t in "${tools[@]}"; do [ -x "$bin/$t" ] || return 1; done; }
if [ "${#given[@]}" -eq 0 ] && complete; then
  echo "$bin"
  exit 0
fi

# --- build ---------------------------------------------------------------------------------------
command -v go >/dev/null 2>&1 || die "Go is required to build the control plane (none on PATH);
  or point KUBEBUILDER_ASSETS / TEST_ASSET_* at existing binaries (see docs/testing.md)"
command -v flock >/dev/null 2>&1 || die "flock (util-linux) is required"
mkdir -p "$dir/.parts" "$dir/src"

# One builder at a time per pin set; a parallel caller waits here, then finds the work done.
exec 9>"$dir/.lock"
if ! flock -n 9; then
  log "another hack/testenv.sh is building $PINS; waiting for its lock ..."
  flock 9
fi
# Leftovers of an interrupted build are never used: completed parts only ever appear by rename.
rm -rf "$dir"/.parts/*.tmp.* "$dir"/bin.tmp.*

export GOFLAGS="-mod=mod ${GOFLAGS:-}" GOWORK=off CGO_ENABLED=0
ldflags_common="-s -w"

# Writes a throwaway module in $dir/src/<group> that requires <module>@<version> and replaces each
# listed module with the given version (the upstream go.mod replaces them with local paths, which
# is why `go install pkg@version` refuses these modules).
make_module() { # group require-module version [replace-spec...]
  local g="$1" mod="$2" ver="$3" r
  shift 3
  local src="$dir/src/$g"
  rm -rf "$src" && mkdir -p "$src" || return 1
  (cd "$src" && go mod init "dco.test/testenv/$g" 2>/dev/null && go mod edit -require="$mod@$ver") >&2 ||
    { log "cannot create the build module in $src" && return 1; }
  for r in "$@"; do (cd "$src" && go mod edit -replace="$r") >&2 || return 1; done
}

# The collector distribution: the main package the collector's builder (ocb) generates, for the
# components the tests use, in the throwaway module of group otelcol.
write_otelcol_main() { # src-dir
  cat >"$1/main.go" <<'GO'
// Program otelcol is an OpenTelemetry Collector for dco's tests: OTLP in, otlphttp or debug out.
package main

import (
	"os"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func components() (otelcol.Factories, error) {
	var err error
	factories := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	if factories.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory()); err != nil {
		return otelcol.Factories{}, err
	}
	if factories.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		debugexporter.NewFactory(), otlphttpexporter.NewFactory()); err != nil {
		return otelcol.Factories{}, err
	}
	return factories, nil
}

var version = "dev" // set by -ldflags -X

func main() {
	set := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "otelcol", Description: "dco test collector", Version: version},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					envprovider.NewFactory(), fileprovider.NewFactory(), yamlprovider.NewFactory(),
				},
			},
		},
	}
	if err := otelcol.NewCommand(set).Execute(); err != nil {
		os.Exit(1)
	}
}
GO
}

# NB: called as `build_group g || die`, where `set -e` is off: every step checks its own status.
build_group() { # group
  local g="$1" out="$dir/.parts/$1" tmp start b
  [ -d "$out" ] && return 0
  tmp="$(mktemp -d "$dir/.parts/$g.tmp.XXXXXX")"
  start=$(date +%s)
  case "$g" in
    kube | kcm)
      local pkgs=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl)
      [ "$g" = kcm ] && pkgs=(k8s.io/kubernetes/cmd/kube-controller-manager)
      log "building ${pkgs[*]##*/} from k8s.io/kubernetes@$K8S_VERSION (cold: the longest step) ..."
      local minor staging=() reps=() s
      minor="${K8S_VERSION#v1.}"
      # The staging modules, read from the upstream go.mod's `replace k8s.io/x => ./staging/...`.
      make_module "$g" k8s.io/kubernetes "$K8S_VERSION" || return 1
      (cd "$dir/src/$g" && go mod download "k8s.io/kubernetes@$K8S_VERSION") >&2 ||
        return 1
      mapfile -t staging < <(sed -nE 's#^\s*(k8s\.io/[a-z0-9-]+) => \./staging/.*#\1#p' \
        "$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$K8S_VERSION.mod")
      if [ "${#staging[@]}" -lt 10 ]; then
        log "could not read the staging modules of k8s.io/kubernetes@$K8S_VERSION"
        return 1
      fi
      for s in "${staging[@]}"; do
        case "$s" in k8s.io/sample-cli-plugin | k8s.io/sample-controller) continue ;; esac # not published, not needed
        reps+=("$s=$s@v0.$minor")
      done
      make_module "$g" k8s.io/kubernetes "$K8S_VERSION" "${reps[@]}" || return 1
      local v="k8s.io/component-base/version" cv="k8s.io/client-go/pkg/version" x="" major min
      major="${K8S_VERSION#v}"
      major="${major%%.*}"
      min="${minor%%.*}"
      # Version stamping as the k8s build does it: helm and kubectl read the server version.
      for p in "$v" "$cv"; do
        x+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$min"
        x+=" -X $p.gitTreeState=clean"
      done
      (cd "$dir/src/$g" && go build -trimpath -ldflags="$ldflags_common$x" -o "$tmp/" \
        "${pkgs[@]}") >&2 || return 1
      ;;
    etcd)
      log "building etcd from go.etcd.io/etcd/server/v3@$ETCD_VERSION ..."
      make_module etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" \
        "go.etcd.io/etcd/api/v3=go.etcd.io/etcd/api/v3@$ETCD_VERSION" \
        "go.etcd.io/etcd/client/pkg/v3=go.etcd.io/etcd/client/pkg/v3@$ETCD_VERSION" \
        "go.etcd.io/etcd/client/v3=go.etcd.io/etcd/client/v3@$ETCD_VERSION" \
        "go.etcd.io/etcd/pkg/v3=go.etcd.io/etcd/pkg/v3@$ETCD_VERSION" || return 1
      (cd "$dir/src/etcd" && go build -trimpath -ldflags="$ldflags_common" -o "$tmp/etcd" \
        go.etcd.io/etcd/server/v3) >&2 || return 1
      ;;
    helm)
      log "building helm from helm.sh/helm/v3@$HELM_VERSION ..."
      make_module helm helm.sh/helm/v3 "$HELM_VERSION" || return 1
      (cd "$dir/src/helm" && go build -trimpath \
        -ldflags="$ldflags_common -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
        -o "$tmp/helm" helm.sh/helm/v3/cmd/helm) >&2 || return 1
      ;;
    otelcol)
      log "building otelcol from go.opentelemetry.io/collector@$OTELCOL_VERSION ..."
      make_module otelcol go.opentelemetry.io/collector/otelcol "$OTELCOL_VERSION" || return 1
      local m
      for m in receiver/otlpreceiver exporter/otlphttpexporter exporter/debugexporter service; do
        (cd "$dir/src/otelcol" && go mod edit -require="go.opentelemetry.io/collector/$m@$OTELCOL_VERSION") >&2 || return 1
      done
      for m in envprovider fileprovider yamlprovider; do
        (cd "$dir/src/otelcol" && go mod edit \
          -require="go.opentelemetry.io/collector/confmap/provider/$m@$OTELCOL_STABLE_VERSION") >&2 || return 1
      done
      write_otelcol_main "$dir/src/otelcol" || return 1
      (cd "$dir/src/otelcol" && go build -trimpath \
        -ldflags="$ldflags_common -X main.version=$OTELCOL_VERSION" -o "$tmp/otelcol" .) >&2 ||
        return 1
      ;;
    crossplane)
      # Crossplane's go.mod replaces its apis module with ./apis; the published one of the same
      # tag is that directory. Its core CRDs (what `crossplane core init --crds-path` installs)
      # are plain YAML in the module: copied beside the binary as crossplane-crds/.
      log "building crossplane from github.com/crossplane/crossplane/v2@$CROSSPLANE_VERSION ..."
      make_module crossplane github.com/crossplane/crossplane/v2 "$CROSSPLANE_VERSION" \
        "github.com/crossplane/crossplane/apis/v2=github.com/crossplane/crossplane/apis/v2@$CROSSPLANE_VERSION" ||
        return 1
      local xpmod
      xpmod="$(cd "$dir/src/crossplane" && go mod download -json \
        "github.com/crossplane/crossplane/v2@$CROSSPLANE_VERSION" |
        sed -nE 's/^\s*"Dir": "(.*)",?$/\1/p')" || return 1
      [ -d "$xpmod/cluster/crds" ] || { log "no cluster/crds in $xpmod" && return 1; }
      (cd "$dir/src/crossplane" && go build -trimpath \
        -ldflags="$ldflags_common -X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$CROSSPLANE_VERSION" \
        -o "$tmp/crossplane" github.com/crossplane/crossplane/v2/cmd/crossplane) >&2 || return 1
      mkdir "$tmp/crossplane-crds" && cp "$xpmod"/cluster/crds/*.yaml "$tmp/crossplane-crds/" &&
        chmod -R u+w "$tmp/crossplane-crds" || return 1
      ;;
  esac
  for b in "${tools[@]}"; do
    if [ "${group_of[$b]}" = "$g" ] && [ ! -x "$tmp/$b" ]; then
      log "$b is missing after the build"
      return 1
    fi
  done
  echo "$g $(($(date +%s) - start))s" >"$tmp/.build-seconds" || return 1
  mv -T "$tmp" "$out" || return 1 # atomic: a group directory exists only once it is complete
  log "built $g in $(($(date +%s) - start))s"
}

# crossplane-crds/ (a directory, so not in tools) goes into bin/ beside the binary, before it:
# a bin/ with crossplane always has its CRDs. The harness reads <dir of crossplane>/crossplane-crds
# (or TEST_ASSET_CROSSPLANE_CRDS).
add_crossplane_crds() { # target-dir
  local from="$dir/.parts/crossplane/crossplane-crds" to="$1/crossplane-crds"
  [ -d "$to" ] || [ ! -d "$from" ] && return 0
  rm -rf "$to.tmp" && cp -rl "$from" "$to.tmp" && mv -T "$to.tmp" "$to"
}

total_start=$(date +%s)
for g in "${needed_groups[@]}"; do
  build_group "$g" || die "building $g failed (log above). Overrides: see the header of hack/testenv.sh"
done

if [ "${#given[@]}" -eq 0 ]; then
  if [ -d "$bin" ] && ! complete; then
    # A cache from before a tool joined: add the new binaries (each link appears atomically).
    add_crossplane_crds "$bin" || die "cannot link crossplane-crds"
    for t in "${tools[@]}"; do
      [ -x "$bin/$t" ] || ln -f "$dir/.parts/${group_of[$t]}/$t" "$bin/$t" || die "cannot link $t"
    done
    cat "$dir"/.parts/*/.build-seconds >>"$bin/VERSIONS" 2>/dev/null || true
  fi
  if [ ! -d "$bin" ]; then
    stage="$(mktemp -d "$dir/bin.tmp.XXXXXX")"
    for t in "${tools[@]}"; do ln "$dir/.parts/${group_of[$t]}/$t" "$stage/$t"; done
    add_crossplane_crds "$stage"
    {
      echo "k8s.io/kubernetes $K8S_VERSION"
      echo "go.etcd.io/etcd/server/v3 $ETCD_VERSION"
      echo "helm.sh/helm/v3 $HELM_VERSION"
      echo "go.opentelemetry.io/collector $OTELCOL_VERSION"
      echo "github.com/crossplane/crossplane/v2 $CROSSPLANE_VERSION"
      go version
      cat "$dir"/.parts/*/.build-seconds 2>/dev/null || true
    } >"$stage/VERSIONS"
    chmod 755 "$stage"
    mv -T "$stage" "$bin" # atomic: bin/ appears complete or not at all
    log "control plane ready in $bin ($(($(date +%s) - total_start))s)"
  fi
  echo "$bin"
  exit 0
fi

# Mixed: some binaries supplied, the rest built. Publish a symlink directory named after its content.
links=""
for t in "${tools[@]}"; do
  if [ -n "${given[$t]:-}" ]; then p="${given[$t]}"; else p="$dir/.parts/${group_of[$t]}/$t"; fi
  links+="$t=$p"$'\n'
done
if [ -n "${TEST_ASSET_CROSSPLANE_CRDS:-}" ]; then
  links+="crossplane-crds=$(realpath "$TEST_ASSET_CROSSPLANE_CRDS")"$'\n'
elif [ -z "${given[crossplane]:-}" ]; then
  links+="crossplane-crds=$dir/.parts/crossplane/crossplane-crds"$'\n'
fi
mixed="$cache_root/mixed/$(printf '%s' "$links" | sha256sum | cut -c1-16)"
if [ ! -d "$mixed" ]; then
  mkdir -p "$cache_root/mixed"
  stage="$(mktemp -d "$mixed.tmp.XXXXXX")"
  chmod 755 "$stage"
  while IFS='=' read -r t p; do [ -n "$t" ] && ln -s "$p" "$stage/$t"; done <<<"$links"
  mv -T "$stage" "$mixed" 2>/dev/null || rm -rf "$stage" # a concurrent caller made the same one
fi
echo "$mixed"
