#!/usr/bin/env bash
# Makes what this overlay needs and cannot make itself: a CA, a serving certificate signed by it
# for the API's Service (quota-ledger.quota-ledger.svc), and ca.crt beside the kustomization
# (kustomize copies it into both webhooks' caBundle). Without ca.crt, `kubectl apply -k` of this
# overlay stops with kustomize's "evalsymlink failure on '…/no-cert-manager/ca.crt'": that is
# what it means. Using a CA of your own instead: copy its certificate (PEM, no key) here as ca.crt.
#
#   deploy/kubernetes/overlays/no-cert-manager/make-ca.sh [DIR]
#
# The keys go to DIR (default: ./pki beside this script, which git ignores), never to ca.crt.
# Prints the kubectl command that creates the Secret quota-ledger-tls from them. Needs openssl.
# Refuses to replace an existing ca.crt: delete it first to start over with a new CA.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/pki}
namespace=${NAMESPACE:-quota-ledger}
service=${SERVICE:-quota-ledger}
fail() { echo "make-ca.sh: $*" >&2; exit 1; }
command -v openssl >/dev/null || fail "openssl is needed"
[ -e "$here/ca.crt" ] && fail "$here/ca.crt is there already (delete it to make a new CA; the webhooks would then trust only the new one)"
mkdir -p "$dir" && chmod 700 "$dir"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -days 3650 -subj /CN=quota-ledger-ca \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req "${ec[@]}" -subj "/CN=$service.$namespace.svc" -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
printf 'subjectAltName=DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local\nextendedKeyUsage=serverAuth\n' "$service" "$namespace" "$service" "$namespace" > "$dir/tls.ext"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 365 -extfile "$dir/tls.ext" -out "$dir/tls.crt" 2>/dev/null
rm -f "$dir/tls.csr" "$dir/tls.ext" "$dir/ca.srl"
cp "$dir/ca.crt" "$here/ca.crt"
cat <<MSG
wrote $here/ca.crt (the webhooks' caBundle), and in $dir: ca.key (keep it offline), tls.crt, tls.key
create the API's Secret from them:
  kubectl -n $namespace create secret generic quota-ledger-tls --type=kubernetes.io/tls \\
    --from-file=$dir/tls.crt --from-file=$dir/tls.key --from-file=$dir/ca.crt
MSG
