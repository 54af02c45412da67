#!/usr/bin/env bash
# Offline chart tier: helm lint, helm template in every certificate mode with
# assertions on the rendered objects, schema rejections, the rendered config
# and certificate used by the real binary, deploy/ manifests and examples.
# Ends with "chart: N passed, N failed". Needs no cluster.
#   test/chart/run.sh [--binary PATH]   (default ./distenv-webhook, made first)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
binary=""
if [[ "${1:-}" == "--binary" ]]; then
	binary=$2
fi
bin=$(bash scripts/deps-image.sh helm)
if [[ -z "$binary" ]]; then
	binary=./distenv-webhook
	make -s distenv-webhook >&2 || echo "chart: building ./distenv-webhook failed" >&2
fi
# PyYAML from Debian's python3-yaml.
# promtool: Debian's, or the one deps-image.sh unpacked into $bin.
promtool=$(command -v promtool || echo "$bin/promtool")
exec /usr/bin/python3 test/chart/check.py --helm "${DISTENV_HELM:-$bin/helm}" --binary "$binary" \
	--promtool "$promtool"
