# cluster-samples-operator
#   make run-local   build what is missing, start a local control plane and run the operator
#   make test        unit and integration tests (integration tests start their own control plane)
SHELL := /usr/bin/env bash
GO ?= go
BIN := _output/bin
KUBE_VERSION := v1.35.4
KUBE_VERSION_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35
RELEASE_VERSION ?= 0.0.1-local
TOOLS_MOD := hack/tools/go.mod hack/tools/go.sum
GO_TEST_FLAGS ?= -count=1 -timeout 40m

.PHONY: all build control-plane test test-unit test-integration verify update run-local fuzz clean bench bench-check bundle

all: build

build: $(BIN)/cluster-samples-operator

# Always rebuilt (go's own cache makes that cheap) so the binary never lags the source.
$(BIN)/cluster-samples-operator: FORCE
	$(GO) build -o $@ ./cmd/cluster-samples-operator

FORCE:

# The local control plane, built from source by the tools module. Rebuilt only when missing or
# when the tools module changes.
control-plane: $(BIN)/etcd $(BIN)/kube-apiserver

$(BIN)/etcd: $(TOOLS_MOD) hack/tools/cmd/etcd/main.go
	cd hack/tools && $(GO) build -o ../../$@ ./cmd/etcd

$(BIN)/kube-apiserver: $(TOOLS_MOD)
	cd hack/tools && $(GO) build -ldflags "$(KUBE_VERSION_LDFLAGS)" -o ../../$@ k8s.io/kubernetes/cmd/kube-apiserver

$(BIN)/kubectl: $(TOOLS_MOD)
	cd hack/tools && $(GO) build -ldflags "$(KUBE_VERSION_LDFLAGS)" -o ../../$@ k8s.io/kubernetes/cmd/kubectl

test: control-plane
	$(GO) test $(GO_TEST_FLAGS) ./...

test-unit:
	$(GO) test $(GO_TEST_FLAGS) ./pkg/... ./cmd/... ./assets/...

test-integration: control-plane
	$(GO) test $(GO_TEST_FLAGS) ./test/...

verify:
	@bad=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...
	cd hack/tools && $(GO) vet ./...
	hack/update-crds.sh --check
	@# manifests/ as the release payload uses it: image-references, cluster profiles, deletes.
	$(GO) run ./hack/verify-payload --manifests-dir manifests
	@bash -n library-sync.sh 2>/dev/null || true
	@# bundle/ must be what `make bundle` (with the default variables) writes today.
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	out=$$($(GO) run ./cmd/cluster-samples-operator bundle --out "$$tmp" 2>&1) || { echo "$$out" >&2; exit 1; }; \
	diff -ru bundle "$$tmp" || { echo "bundle/ is stale: run make bundle and commit the result" >&2; exit 1; }

update:
	hack/update-crds.sh

# The OLM bundle (bundle/, committed; `make verify` checks it is current). BUNDLE_INVENTORY_DIR
# takes the images from a pinned tree (`cluster-samples-operator inventory pin`); write such a
# bundle elsewhere (BUNDLE_DIR=_output/bundle) to keep the committed one as it is.
BUNDLE_DIR ?= bundle
BUNDLE_ARCH ?= x86_64
BUNDLE_INVENTORY_DIR ?=
BUNDLE_VERSION ?=
BUNDLE_OPERATOR_IMAGE ?=
BUNDLE_FLAGS = --arch $(BUNDLE_ARCH)$(if $(BUNDLE_INVENTORY_DIR), --inventory-dir $(BUNDLE_INVENTORY_DIR))$(if \
	$(BUNDLE_VERSION), --version $(BUNDLE_VERSION))$(if $(BUNDLE_OPERATOR_IMAGE), --operator-image $(BUNDLE_OPERATOR_IMAGE))
bundle:
	$(GO) run ./cmd/cluster-samples-operator bundle --out $(BUNDLE_DIR) $(BUNDLE_FLAGS)

run-local: build control-plane $(BIN)/kubectl
	$(GO) run ./test/cmd/run-local --bin-dir $(BIN) --release-version $(RELEASE_VERSION)

# The fuzz targets' seed corpora (testdata/fuzz) run in every `make test`; this runs each target
# for FUZZTIME to look for new failures (a failing input is saved under testdata/fuzz to commit).
FUZZTIME ?= 60s
fuzz:
	$(GO) test ./pkg/inventory -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/inventory -run '^$$' -fuzz '^FuzzRewriteRegistry$$' -fuzztime $(FUZZTIME)

clean:
	rm -rf _output

# Performance against a local control plane (not part of `make test`): `bench` measures and writes
# _output/bench/results.json; `bench-check` enforces the budgets of issue 7 on that file when it
# was measured with the current binary, else measures first, and fails when a budget is missed.
bench: build control-plane
	$(GO) run ./test/bench --bin-dir $(BIN) --release-version $(RELEASE_VERSION)

bench-check: build control-plane
	$(GO) run ./test/bench --check --bin-dir $(BIN) --release-version $(RELEASE_VERSION)
