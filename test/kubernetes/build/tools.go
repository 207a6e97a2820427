//go:build tools

// Package build only records, for go.mod, the Kubernetes commands that
// test/kubernetes/build.sh builds; it is never compiled itself.
package build

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
