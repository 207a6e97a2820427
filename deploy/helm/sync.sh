#!/usr/bin/env bash
# Copies the kustomize manifests the chart is made of into quota-ledger/files/, byte for byte:
# helm reads files inside the chart only, so the chart's templates load these copies and change
# only what a value asks for (templates/_manifests.tpl). test/helm/chart.test.ts fails when a copy
# differs from its source, and compares `helm template` with the kustomize render object by object.
# Run it after changing anything under deploy/kubernetes. No arguments; safe to run again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kubernetes=$here/../kubernetes
files=$here/quota-ledger/files
rm -rf "$files" && mkdir -p "$files/base" "$files/cert-manager" "$files/prometheus-operator" "$files/cloudnative-pg"
cp "$kubernetes"/base/*.yaml "$files/base/"
rm "$files/base/kustomization.yaml"
cp "$kubernetes/overlays/cert-manager/certificates.yaml" "$files/cert-manager/"
cp "$kubernetes"/components/prometheus-operator/{service-monitor.yaml,prometheus-rule.yaml,grafana-dashboard.json} "$files/prometheus-operator/"
cp "$kubernetes"/components/cloudnative-pg/{cluster.yaml,network-policy.yaml} "$files/cloudnative-pg/"
echo "copied deploy/kubernetes into $files"
