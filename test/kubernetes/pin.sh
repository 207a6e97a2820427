#!/usr/bin/env bash
# Rewrites build/go.mod and etcd/go.mod (and their go.sum) from versions.env. Run after editing
# versions.env; build.sh refuses to build from a go.mod that disagrees with it.
#
# k8s.io/kubernetes is not meant to be a dependency: its go.mod requires every staging module
# (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and replaces it with ./staging/src/..., and a
# replace in a dependency's go.mod does not apply to us. So every staging module it requires is
# replaced here by its published v0.Y.Z of the same release.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
. "$here/versions.env"
. "$here/go-env.sh"

upstream_mod=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
# Staging modules that kubernetes both replaces with ./staging and requires (the sample-* ones it
# replaces but does not require are not published for every release, and never enter the graph).
staging=$(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$upstream_mod" | sort)
required=$(awk '/^require \(/ { inside = 1; next } inside && /^\)/ { inside = 0 } inside && $2 == "v0.0.0" { print $1 }' "$upstream_mod" | sort)
modules=$(comm -12 <(echo "$staging") <(echo "$required"))
[ -n "$modules" ] || { echo "no staging modules found in $upstream_mod" >&2; exit 1; }

generated="// Written by test/kubernetes/pin.sh from test/kubernetes/versions.env: edit those, not this."
cd "$here/build"
{
  printf '%s\n\nmodule quota-ledger/test/kubernetes/build\n\ngo 1.26.0\n\n' "$generated"
  printf 'require k8s.io/kubernetes %s\n\n' "$KUBERNETES_VERSION"
  printf '// What k8s.io/kubernetes replaces with ./staging/src/..., as published for its release.\nreplace (\n'
  for module in $modules; do printf '\t%s => %s %s\n' "$module" "$module" "$KUBERNETES_STAGING_VERSION"; done
  printf ')\n'
} >go.mod
rm -f go.sum
go mod tidy
echo "build/go.mod: k8s.io/kubernetes $KUBERNETES_VERSION, $(echo "$modules" | wc -l) staging modules at $KUBERNETES_STAGING_VERSION"

cd "$here/etcd"
printf '%s\n\nmodule quota-ledger/test/kubernetes/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$generated" "$ETCD_VERSION" >go.mod
rm -f go.sum
go mod tidy
echo "etcd/go.mod: go.etcd.io/etcd/server/v3 $ETCD_VERSION"
