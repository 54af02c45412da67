#!/usr/bin/env bash
# Renders the plain install manifests for `kubectl apply` users from the chart.
#
#   scripts/render-manifests.sh           write deploy/distenv.yaml and
#                                         deploy/distenv-cert-manager.yaml
#   scripts/render-manifests.sh --check   exit 1 (with a diff) when either file
#                                         differs from a fresh render
#
# The chart's default certificate mode (selfSigned) makes a new CA on every
# `helm template`, so it cannot give a file that stays the same in git. The two
# files use the deterministic modes instead:
#   deploy/distenv.yaml               existingSecret: you make the certificate
#                                     once (`distenv-webhook certs`, see
#                                     docs/install.md), store it in the Secret
#                                     distenv-tls and patch its CA into both
#                                     webhook configurations.
#   deploy/distenv-cert-manager.yaml  certManager: cert-manager issues and
#                                     renews the certificate and injects the CA.
# Both install into the namespace "distenv" (created by the file).
# The chart's `helm test` Pod is left out (--skip-tests): `kubectl apply` would
# start it as a plain pod.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=$(bash scripts/deps-image.sh helm)
helm="$bin/helm"

check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*)
	echo "usage: $0 [--check]" >&2
	exit 2
	;;
esac

ns=distenv
# Pinned so that the output does not depend on the helm client's default.
kube_version=1.33.0

render() { # MODE OUT [helm args...]
	local mode=$1 out=$2
	shift 2
	{
		cat <<EOF
# distenv $(cat VERSION) — rendered from charts/distenv by scripts/render-manifests.sh
# (certificates.mode=$mode). Do not edit: change the chart and re-render.
EOF
		case "$mode" in
		existingSecret)
			cat <<'EOF'
#
# Install it with the steps of docs/install.md ("With your own certificate"),
# run from the repository's root with your registry in place of
# registry.example.com/ml/distenv:
#   ./distenv-webhook certs --service distenv --namespace distenv --out certs   # CA + serving cert, 365 days
#   kubectl create namespace distenv
#   kubectl -n distenv create secret generic distenv-tls --type kubernetes.io/tls \
#     --from-file=tls.crt=certs/tls.crt --from-file=tls.key=certs/tls.key --from-file=ca.crt=certs/ca.crt
#   sed 's|image: distenv:|image: registry.example.com/ml/distenv:|' deploy/distenv.yaml | kubectl apply -f -
#   ca=$(base64 -w0 certs/ca.crt)
#   kubectl patch mutatingwebhookconfiguration distenv --type json \
#     -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$ca\"}]"
#   kubectl patch validatingwebhookconfiguration distenv --type json \
#     -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$ca\"},
#          {\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"$ca\"}]"
# Every webhook of both configurations needs the CA: the pod and the workload
# webhooks have failurePolicy Fail, and without a caBundle every opted-in
# workload or pod is refused (x509); the scale webhook fails open, unchecked.
# (docs/install.md has the details, and how to rotate the certificate.)
EOF
			;;
		certManager)
			cat <<'EOF'
#
# Needs cert-manager (cert-manager.io/v1) in the cluster: it issues the
# certificate, and its CA injector fills in the caBundle of both webhook
# configurations (cert-manager.io/inject-ca-from). Apply it with your registry
# in place of registry.example.com/ml/distenv (docs/install.md):
#   sed 's|image: distenv:|image: registry.example.com/ml/distenv:|' deploy/distenv-cert-manager.yaml | kubectl apply -f -
EOF
			;;
		esac
		cat <<EOF
---
apiVersion: v1
kind: Namespace
metadata:
  name: $ns
  labels:
    app.kubernetes.io/name: distenv
EOF
		"$helm" template distenv charts/distenv --namespace "$ns" --kube-version "$kube_version" --skip-tests \
			--set certificates.mode="$mode" "$@"
	} >"$out"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
render existingSecret "$tmp/distenv.yaml" --set certificates.secretName=distenv-tls
render certManager "$tmp/distenv-cert-manager.yaml"

status=0
for f in distenv.yaml distenv-cert-manager.yaml; do
	if ((check)); then
		if ! diff -u "deploy/$f" "$tmp/$f" >"$tmp/$f.diff" 2>&1; then
			echo "render-manifests: deploy/$f is out of date; run scripts/render-manifests.sh (or make manifests)" >&2
			head -n 40 "$tmp/$f.diff" >&2
			status=1
		else
			echo "render-manifests: deploy/$f is up to date"
		fi
	else
		cp "$tmp/$f" "deploy/$f"
		echo "render-manifests: wrote deploy/$f ($(grep -c '^kind:' "deploy/$f") objects)"
	fi
done
exit $status
