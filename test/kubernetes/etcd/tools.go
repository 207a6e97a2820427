//go:build tools

// Package etcd only records, for go.mod, the etcd server that
// test/kubernetes/build.sh builds (its package main is the module root).
package etcd

import (
	_ "go.etcd.io/etcd/server/v3"
)
