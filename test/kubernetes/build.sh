#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from their Go modules at the versions in
# versions.env, into ${XDG_CACHE_HOME:-~/.cache}/quota-ledger/kubernetes-<version>/bin, and
# reuses them when they are there and built from the same pins. No arguments; safe to run again.
#
# Kubernetes: the small module in build/ requires k8s.io/kubernetes and replaces each staging
# module with its published release (pin.sh writes it). etcd: the module in etcd/ requires
# go.etcd.io/etcd/server/v3, whose root package is the etcd command; it is a module of its own so
# etcd is built with the dependencies etcd chose, not those Kubernetes' client libraries pull in.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
. "$here/versions.env"
. "$here/go-env.sh"

fail() { echo "build.sh: $*" >&2; exit 1; }
command -v go >/dev/null || fail "no go on PATH (Go >= 1.26.0 is needed)"
grep -qx "require k8s.io/kubernetes $KUBERNETES_VERSION" "$here/build/go.mod" &&
  grep -q "k8s.io/api => k8s.io/api $KUBERNETES_STAGING_VERSION\$" "$here/build/go.mod" &&
  grep -qx "require go.etcd.io/etcd/server/v3 $ETCD_VERSION" "$here/etcd/go.mod" ||
  fail "build/go.mod or etcd/go.mod disagrees with versions.env: run test/kubernetes/pin.sh"

out=$QL_CACHE/kubernetes-$KUBERNETES_VERSION
partial=$out.partial
binaries=(kube-apiserver kube-controller-manager etcd)
# What the binaries were built from: the pins and the whole dependency graph.
stamp="kubernetes $KUBERNETES_VERSION staging $KUBERNETES_STAGING_VERSION etcd $ETCD_VERSION $(cat "$here"/build/go.mod "$here"/build/go.sum "$here"/etcd/go.mod "$here"/etcd/go.sum | sha256sum | cut -c1-16)"

mkdir -p "$QL_CACHE"
# One build at a time per version (two test runs starting together wait for each other).
exec 9>"$out.lock"
flock 9

cached() {
  [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ] || return 1
  for binary in "${binaries[@]}"; do [ -x "$out/bin/$binary" ] || return 1; done
}

report() {
  echo "  $out/bin"
  for binary in "${binaries[@]}"; do printf '    %-24s %4s MiB\n' "$binary" $(($(stat -c %s "$out/bin/$binary") / 1048576)); done
  echo "  $("$out/bin/kube-apiserver" --version), $("$out/bin/etcd" --version | head -1)"
}

if cached; then
  echo "Kubernetes $KUBERNETES_VERSION (staging $KUBERNETES_STAGING_VERSION) and etcd $ETCD_VERSION: already built"
  report
  exit 0
fi

now() { date +%s.%N; }
timings=()
step() { # step NAME COMMAND...: runs it, records how long it took
  local name=$1 started
  shift
  started=$(now)
  echo "-- $name"
  "$@"
  timings+=("$(awk -v name="$name" -v started="$started" -v ended="$(now)" 'BEGIN { printf "%-40s %7.1f s", name, ended - started }')")
}

# The version the binaries report (kubectl version, /version, discovery), as the release scripts
# set it (hack/lib/version.sh), dated with the release's tag time so a rebuild is byte-identical.
release_time=$(cd "$here/build" && go list -m -json k8s.io/kubernetes | sed -n 's/^\t"Time": "\(.*\)",$/\1/p')
minor=${KUBERNETES_VERSION#v*.}
minor=${minor%%.*}
version_ldflags=""
for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  version_ldflags+=" -X $package.gitVersion=$KUBERNETES_VERSION -X $package.gitMajor=1 -X $package.gitMinor=$minor"
  version_ldflags+=" -X $package.gitTreeState=archive -X $package.buildDate=$release_time"
done

build() { # build MODULE_DIR BINARY PACKAGE [LDFLAGS]
  (cd "$here/$1" && go build -mod=readonly -trimpath -ldflags="-s -w ${4:-}" -o "$partial/bin/$2" "$3")
}

rm -rf "$partial"
mkdir -p "$partial/bin"
echo "Building Kubernetes $KUBERNETES_VERSION (staging $KUBERNETES_STAGING_VERSION) and etcd $ETCD_VERSION with $(go version | cut -d' ' -f3), GOCACHE=$GOCACHE"
step "modules (download what is missing)" sh -c "cd '$here/build' && go list -mod=readonly -deps k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager >/dev/null && cd '$here/etcd' && go list -mod=readonly -deps go.etcd.io/etcd/server/v3 >/dev/null"
step "kube-apiserver" build build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$version_ldflags"
step "kube-controller-manager" build build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$version_ldflags"
step "etcd" build etcd etcd go.etcd.io/etcd/server/v3
echo "$stamp" >"$partial/stamp"
# Only a finished build becomes the cache: a killed one leaves just kubernetes-*.partial behind,
# which the next run deletes.
rm -rf "$out"
mv "$partial" "$out"

echo "Built:"
report
printf '  %s\n' "${timings[@]}"
