#!/usr/bin/env bash
# Copies the CRDs this project uses from the github.com/openshift/api module pinned in go.mod, and
# generates, with hack/crdgen, the CRDs that stand in for the aggregated image, template, build,
# apps, route and authorization APIs (test/crds/aggregated) from the same module's OpenAPI
# definitions, and the ServiceMonitor CRD (test/crds/monitoring). We never hand-write a CRD:
# `make update` refreshes them and `make verify` fails when they drift from the pinned module.
#   hack/update-crds.sh          write the copies and the generated CRDs
#   hack/update-crds.sh --check  exit 1 if any of them differs
set -euo pipefail
cd "$(dirname "$0")/.."

api_dir=$(go list -m -f '{{.Dir}}' github.com/openshift/api)
if [[ -z "$api_dir" || ! -d "$api_dir" ]]; then
  go mod download github.com/openshift/api
  api_dir=$(go list -m -f '{{.Dir}}' github.com/openshift/api)
fi

# source (relative to the module) -> destination (relative to the repo)
copies=(
  "samples/v1/zz_generated.crd-manifests/00_configs.crd.yaml manifests/00-samples-config.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml test/crds/openshift-api/clusteroperators.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml test/crds/openshift-api/clusterversions.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_03_config-operator_01_proxies.crd.yaml test/crds/openshift-api/proxies.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_apiservers-Default.crd.yaml test/crds/openshift-api/apiservers.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_images.crd.yaml test/crds/openshift-api/images.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_infrastructures-Default.crd.yaml test/crds/openshift-api/infrastructures.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_networks.crd.yaml test/crds/openshift-api/networks.crd.yaml"
  # The mirror sets: openshift-apiserver resolves every import through them, and the operator
  # reads them; installed with the stand-ins too.
  "operator/v1alpha1/zz_generated.crd-manifests/0000_10_config-operator_01_imagecontentsourcepolicies.crd.yaml test/crds/openshift-api/imagecontentsourcepolicies.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagedigestmirrorsets.crd.yaml test/crds/openshift-api/imagedigestmirrorsets.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagetagmirrorsets.crd.yaml test/crds/openshift-api/imagetagmirrorsets.crd.yaml"
  # Only for the test that runs the real cluster-version operator, which stops without a FeatureGate.
  "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_featuregates.crd.yaml test/crds/cvo/featuregates.crd.yaml"
  # Read by the real openshift-apiserver when OPENSHIFT_BIN_DIR names it (test/controlplane):
  # installed only then, on top of the ones above.
  "authorization/v1/zz_generated.crd-manifests/0000_03_config-operator_01_rolebindingrestrictions.crd.yaml test/crds/openshift-api/openshift-apiserver/rolebindingrestrictions.crd.yaml"
  "quota/v1/zz_generated.crd-manifests/0000_03_config-operator_01_clusterresourcequotas.crd.yaml test/crds/openshift-api/openshift-apiserver/clusterresourcequotas.crd.yaml"
  "security/v1/zz_generated.crd-manifests/0000_03_config-operator_01_securitycontextconstraints.crd.yaml test/crds/openshift-api/openshift-apiserver/securitycontextconstraints.crd.yaml"
  "securityinternal/v1/zz_generated.crd-manifests/0000_03_config-operator_02_rangeallocations.crd.yaml test/crds/openshift-api/openshift-apiserver/rangeallocations.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_ingresses.crd.yaml test/crds/openshift-api/openshift-apiserver/ingresses.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_projects.crd.yaml test/crds/openshift-api/openshift-apiserver/projects.crd.yaml"
  "config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_featuregates.crd.yaml test/crds/openshift-api/openshift-apiserver/featuregates.crd.yaml"
)

check=false
[[ "${1:-}" == "--check" ]] && check=true
stale=0
for pair in "${copies[@]}"; do
  read -r src dst <<<"$pair"
  if $check; then
    if ! cmp -s "$api_dir/$src" "$dst"; then
      echo "stale: $dst differs from github.com/openshift/api $src (run make update)" >&2
      stale=1
    fi
  else
    mkdir -p "$(dirname "$dst")"
    install -m 0644 "$api_dir/$src" "$dst"
  fi
done
# hack/crdgen is a module of its own; the schemas must come from the openshift/api the operator
# is built with.
want=$(go list -m -f '{{.Version}}' github.com/openshift/api)
have=$(cd hack/crdgen && go list -m -f '{{.Version}}' github.com/openshift/api)
if [[ "$want" != "$have" ]]; then
  echo "hack/crdgen/go.mod requires github.com/openshift/api $have, go.mod $want: align them (cd hack/crdgen && go get github.com/openshift/api@$want && go mod tidy)" >&2
  exit 1
fi
if $check; then
  (cd hack/crdgen && go run . -out ../../test/crds -check) || stale=1
else
  (cd hack/crdgen && go run . -out ../../test/crds)
fi
exit $stale
