# Go settings shared by build.sh and pin.sh (sourced, not run). Everything Go downloads or
# compiles stays under one cache folder outside the repository, so a second build is fast and
# `rm -rf ~/.cache/quota-ledger` forgets it all.
QL_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/quota-ledger
export GOCACHE=$QL_CACHE/go-build
export GOMODCACHE=$QL_CACHE/go-mod
# -modcacherw: the module cache can be deleted with rm -rf. No VCS stamping: the module zips
# carry no .git. The builds go through the module proxy only (no toolchain download: the go
# on PATH must be at least each go.mod's go line, 1.26.0 for Kubernetes v1.37).
export GOFLAGS="-modcacherw -buildvcs=false"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
