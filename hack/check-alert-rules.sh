#!/usr/bin/env bash
# Checks the alerting rules of manifests/010-prometheus-rules.yaml with `promtool check rules`.
# promtool reads plain rule files (a top-level "groups:"), so the PrometheusRule's spec is taken
# out first. The count of rules promtool reports is compared with the manifest's alerts: a spec
# that the extraction lost would otherwise pass as an empty, valid rule file.
set -euo pipefail
promtool=$(realpath "${1:-$(dirname "$0")/../_output/bin/promtool}")
cd "$(dirname "$0")/.."
manifest=manifests/010-prometheus-rules.yaml

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Everything under the top-level "spec:" key, one indentation level (two spaces) less.
awk '/^[^ #]/ { inspec = ($0 ~ /^spec:/); next } inspec { sub(/^  /, ""); print }' "$manifest" > "$tmp/rules.yaml"

out=$("$promtool" check rules "$tmp/rules.yaml" 2>&1) || { echo "$out" >&2; echo "promtool check rules failed on the spec of $manifest" >&2; exit 1; }
want=$(grep -c '^ *- alert: ' "$manifest")
if ! grep -q "SUCCESS: $want rules found" <<<"$out"; then
	echo "$out" >&2
	echo "promtool did not find the $want alerts of $manifest" >&2
	exit 1
fi
echo "promtool check rules: the $want alerts of $manifest are valid"
