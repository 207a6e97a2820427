#!/usr/bin/env bash
# Builds helm from its Go module (helm.sh/helm/v3/cmd/helm at HELM_VERSION) into
# ${XDG_CACHE_HOME:-~/.cache}/quota-ledger/helm-<version>/bin/helm, and reuses it when it is there.
# The go command (through the module proxy) is the only downloader, as for test/kubernetes/build.sh,
# whose Go settings (cache folders, no toolchain download, CGO off) it shares. No arguments; safe
# to run again. Prints the binary's path on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# The version test/helm/chart.test.ts expects; `go list -m -versions helm.sh/helm/v3` lists them.
HELM_VERSION=v3.22.0
# shellcheck source=/dev/null
. "$here/../kubernetes/go-env.sh"

command -v go >/dev/null || { echo "build.sh: no go on PATH (Go >= 1.25 is needed to build helm)" >&2; exit 1; }
out=$QL_CACHE/helm-$HELM_VERSION
mkdir -p "$QL_CACHE"
exec 9>"$out.lock"
flock 9
if [ -x "$out/bin/helm" ] && "$out/bin/helm" version --template '{{.Version}}' 2>/dev/null | grep -qx "$HELM_VERSION"; then
  echo "helm $HELM_VERSION: already built"
  echo "$out/bin/helm"
  exit 0
fi
started=$(date +%s)
rm -rf "$out.partial" && mkdir -p "$out.partial/bin"
# -ldflags: the version `helm version` reports (the release Makefile sets the same variable).
GOBIN=$out.partial/bin go install -ldflags "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
rm -rf "$out" && mv "$out.partial" "$out" # only a complete build is taken for the cache
echo "helm $HELM_VERSION built in $(($(date +%s) - started)) s"
echo "$out/bin/helm"
