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
PROMTOOL_MOD := hack/promtool/go.mod hack/promtool/go.sum
REGISTRY_MOD := hack/registry/go.mod hack/registry/go.sum hack/registry/main.go
# -race in every package but test/integration: the controllers' own tests (fake clients, many
# goroutines) run under it. The integration package runs without it (INTEGRATION_TEST_FLAGS):
# its CPU is mostly the servers', yet the detector made the package a quarter slower (1643 s
# against 1208 s on two cores, issue 42), and `make test-integration-race` runs it with it.
# -parallel 3: three integration tests at once keep two cores busy; the package takes turns of
# its own by that number, the longest tests first (test/integration/schedule_test.go).
# -vet=off: `make verify` runs go vet on every package, test files included, with all of go
# test's checks and more, so go test's own pass would only vet every package of ours a second time.
# -trimpath: without it go's cache keys each of our packages by the checkout's directory, so a
# clean clone elsewhere (CI's) compiled every package again, for vet, go run and go test, though
# an earlier clone had compiled the same sources (warm cache: 115 CPU-s against 185 for the test
# builds of ./...). Only for this module's own builds: the tool modules' builds (the control plane,
# Prometheus, the generators) compile from the module cache, whose paths never change, and with
# the flag would compile all of Kubernetes once more for nothing.
TRIMPATH := -trimpath
# -p 4 (go's default is the number of cores): at -p 2 test/controlplane holds one of the two
# places for three minutes and the sixty other packages' race builds and tests queue for the
# other. `make test`'s first phase took 323 s at -p 2 and 281 s at -p 4, one after the other on the
# quiet two cores.
GO_TEST_FLAGS ?= -count=1 -timeout 40m -race -parallel 3 -p 4 -vet=off $(TRIMPATH)
INTEGRATION_TEST_FLAGS ?= -count=1 -timeout 40m -parallel 3 -vet=off $(TRIMPATH)
INTEGRATION_PKG := ./test/integration
# The packages that take longest in `make test`'s first phase, longest first: go test starts its
# packages in the order they are named, and test/controlplane (minutes, starting control planes)
# named in its alphabetical place started after most others and ended the phase alone.
UNIT_FIRST := test/controlplane test/librarysync cmd/cluster-samples-operator pkg/controller/usabilitycontrol
# The tool modules' tests (hack/crdgen's generator, hack/verify-bundle's validators, the mutation
# runner of hack/gremlins) run on one goroutine and ship nothing: without -race they reuse the
# packages `make verify` compiled, where -race would compile apiextensions-apiserver and
# operator-framework/api's trees a second time, minutes on a cold machine.
TOOL_TEST_FLAGS ?= -count=1 -timeout 10m -vet=off
# go test -json through hack/test-report: each package's result, the whole output of each failed
# test (parallel tests interleave theirs in plain -v output) and the slowest tests; the plain
# output goes to the log named after the arrow.
TEST_REPORT = $(GO) run $(TRIMPATH) ./hack/test-report --log

.PHONY: all build install-plugin control-plane test test-openshift test-unit test-integration test-integration-race verify update run-local fuzz mutation mutation-changed mutation-record clean bench bench-plugin bench-check bundle verify-bundle

all: build

build: $(BIN)/cluster-samples-operator $(BIN)/kubectl-samples

# Always rebuilt (go's own cache makes that cheap) so the binary never lags the source. Built as
# the image builds it (Dockerfile), so that `make bench` measures what ships: static (no libc
# mapped into the process), without the symbol table and DWARF, and without local paths.
$(BIN)/cluster-samples-operator: FORCE
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $@ ./cmd/cluster-samples-operator

# The `kubectl samples` / `oc samples` plugin (pkg/plugin), built as the release builds it.
$(BIN)/kubectl-samples: FORCE
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $@ ./cmd/kubectl-samples

# kubectl and oc run any executable named kubectl-<verb> found on PATH: this puts the plugin in
# $(PLUGIN_DIR) (on PATH on most systems; set PLUGIN_DIR for another).
PLUGIN_DIR ?= $(HOME)/.local/bin
install-plugin: $(BIN)/kubectl-samples
	install -D -m 0755 $(BIN)/kubectl-samples $(PLUGIN_DIR)/kubectl-samples

# The wrapper `make run-local` runs; TestRunLocal runs the same binary (RUN_LOCAL_BINARY)
# instead of building its own while the other tests load the machine.
$(BIN)/run-local: FORCE
	$(GO) build -o $@ ./test/cmd/run-local

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

# promtool checks and tests the alerting rules. It has a module of its own: Prometheus needs newer
# Kubernetes libraries than the control plane pins. remove_all_sd leaves out the service discovery
# plugins, which rule checks and tests never use, and with them a Nomad client version that the
# module proxy does not serve. Rebuilt only when that module changes.
$(BIN)/promtool: $(PROMTOOL_MOD)
	cd hack/promtool && $(GO) build -tags remove_all_sd \
		-ldflags "-X github.com/prometheus/common/version.Version=$$($(GO) list -m -f '{{.Version}}' github.com/prometheus/prometheus)" \
		-o ../../$@ github.com/prometheus/prometheus/cmd/promtool

# Prometheus itself, from the same module and with the same tag: the static target of
# test/integration/prometheus_test.go needs no service discovery plugin. One to two minutes more
# on two cores once promtool's packages are compiled. Rebuilt only when that module changes.
$(BIN)/prometheus: $(PROMTOOL_MOD)
	cd hack/promtool && $(GO) build -tags remove_all_sd \
		-ldflags "-X github.com/prometheus/common/version.Version=$$($(GO) list -m -f '{{.Version}}' github.com/prometheus/prometheus)" \
		-o ../../$@ github.com/prometheus/prometheus/cmd/prometheus

# The registry the real openshift-apiserver imports from in the real-import tests
# (test/controlplane/imports.go): distribution's registry with in-memory storage only, from a
# module of its own (hack/registry/go.mod says why). Rebuilt only when that module changes.
$(BIN)/registry: $(REGISTRY_MOD)
	cd hack/registry && $(GO) build -trimpath -o ../../$@ .

# The alert rule tests (test/integration/alerts_test.go) run promtool, and
# test/integration/prometheus_test.go runs Prometheus.
# The integration tests that run the operator as a process take the binary built here, with
# the shipped flags, instead of building their own.
# With OPENSHIFT_BIN_DIR (README "Testing against the real openshift-apiserver") the
# integration tests run against the real openshift-apiserver, and the CVO, real-import and
# differential tests run too: the loopback registry is built for the real-import test.
test: control-plane $(BIN)/promtool $(BIN)/prometheus $(BIN)/cluster-samples-operator $(BIN)/run-local $(if $(OPENSHIFT_BIN_DIR),$(BIN)/registry)
	@mkdir -p _output
	@# The other packages first, then the integration package, whose first tests must run alone
	@# (a flood, a revert timed to the millisecond); each through its own report, and both
	@# always, so that one failure does not hide the other's. The tool modules' tests (the
	@# generated image and template CRDs pass kube-apiserver's CRD validation and admit the
	@# inventory; the bundle passes operator-framework's validators; the mutation runner finds
	@# the changed lines worth mutating) run beside the other
	@# packages, their output printed after them.
	set -o pipefail; export OPERATOR_BINARY=$(abspath $(BIN)/cluster-samples-operator) RUN_LOCAL_BINARY=$(abspath $(BIN)/run-local); \
	(cd hack/verify-bundle && $(GO) test $(TOOL_TEST_FLAGS) ./... && cd ../crdgen && $(GO) test $(TOOL_TEST_FLAGS) ./... && cd ../gremlins && $(GO) test $(TOOL_TEST_FLAGS) ./...) >_output/test-tools.log 2>&1 & tools=$$!; \
	pkgs=$$($(GO) list ./... | grep -v '/test/integration$$'); \
	first=$$(for p in $(UNIT_FIRST); do grep -x ".*/$$p" <<<"$$pkgs"; done); \
	$(GO) test $(GO_TEST_FLAGS) -json $$first $$(grep -v -x -F "$$first" <<<"$$pkgs") | $(TEST_REPORT) _output/test-unit.log; others=$$?; \
	wait $$tools; tooltests=$$?; cat _output/test-tools.log; \
	$(GO) test $(INTEGRATION_TEST_FLAGS) -json $(INTEGRATION_PKG) | $(TEST_REPORT) _output/test.log; integration=$$?; \
	exit $$((integration || others || tooltests))

# Only the tests that exist for the real OpenShift servers (OPENSHIFT_BIN_DIR, see README): the
# CVO on the payload built from manifests/, the stand-ins compared with the real
# openshift-apiserver, the imports done by openshift-controller-manager's import
# controllers from a loopback registry, and the imports through mirror sets from a loopback
# mirror the server trusts by CA, the first start on a mirrored cluster, openshift-apiserver
# down and back under a running operator, and tags judged by the architectures of the images
# the server imported. `make test` with OPENSHIFT_BIN_DIR runs them too.
# test/integration/openshifttests_test.go checks that this list names every test that needs the real
# servers (requireReal).
OPENSHIFT_TESTS := TestCVO|TestRealImports|TestStandInsAnswerAsOpenShiftAPIServer|TestRealServerImportsThroughMirrorSets|TestCheckMirrorAgreesWithTheRealServer|TestStandInsImportThroughMirrorSets|TestRealFirstStartOnAMirroredCluster|TestOpenShiftAPIServerDownAndBack|TestATagForNoNodeArchitecture|TestEveryImportedTagIsJudged|TestARestartWhileTheImagesCannotBeRead|TestAdminAndRetiredTagsGetTheirArchitectureMarks
test-openshift: control-plane $(BIN)/registry $(BIN)/cluster-samples-operator
	@test -n "$(OPENSHIFT_BIN_DIR)" || { echo "OPENSHIFT_BIN_DIR must name the folder of the real OpenShift servers"; exit 1; }
	@mkdir -p _output
	OPERATOR_BINARY=$(abspath $(BIN)/cluster-samples-operator) $(GO) test $(INTEGRATION_TEST_FLAGS) $(INTEGRATION_PKG) -run '$(OPENSHIFT_TESTS)' -v > _output/test-openshift.log 2>&1; \
		status=$$?; grep -E '^(--- |PASS|FAIL|ok)|^ +[a-z_]+_test\.go:[0-9]+: ' _output/test-openshift.log | grep -v 'known difference' | cut -c1-300; exit $$status

test-unit:
	$(GO) test $(GO_TEST_FLAGS) ./pkg/... ./cmd/... ./assets/...
	cd hack/verify-bundle && $(GO) test $(TOOL_TEST_FLAGS) ./...
	cd hack/crdgen && $(GO) test $(TOOL_TEST_FLAGS) ./...

test-integration: control-plane $(BIN)/promtool $(BIN)/prometheus $(BIN)/cluster-samples-operator
	@mkdir -p _output
	set -o pipefail; OPERATOR_BINARY=$(abspath $(BIN)/cluster-samples-operator) $(GO) test $(INTEGRATION_TEST_FLAGS) -json $(INTEGRATION_PKG) \
		| $(TEST_REPORT) _output/test-integration.log

# The integration package under the race detector, as `make test` ran it until issue 42.
test-integration-race:
	$(MAKE) test-integration INTEGRATION_TEST_FLAGS='$(INTEGRATION_TEST_FLAGS) -race'

verify: $(BIN)/promtool
	@bad=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	$(GO) vet $(TRIMPATH) ./...
	@# No two packages of one name: an import should never need an alias to say which is meant.
	@dup=$$($(GO) list -f '{{.Name}}' ./... | grep -vx main | sort | uniq -d); if [ -n "$$dup" ]; then echo "package names used twice: $$dup"; exit 1; fi
	cd hack/tools && $(GO) vet ./...
	cd hack/crdgen && $(GO) vet ./...
	cd hack/gremlins && $(GO) vet ./...
	hack/update-crds.sh --check
	hack/check-alert-rules.sh $(BIN)/promtool
	@# manifests/ as the release payload uses it: image-references, cluster profiles, deletes.
	$(GO) run $(TRIMPATH) ./hack/verify-payload --manifests-dir manifests
	@# The linker must still drop unused methods: one reflective method call anywhere keeps them
	@# all and grows the resident binary by a third (docs/memory.md).
	$(GO) run $(TRIMPATH) ./hack/verify-deadcode
	bash -n library-sync.sh
	@# assets/operator is openshift/library's content as assets/library.lock records it: no hand edits.
	$(GO) run $(TRIMPATH) ./hack/verify-inventory
	@# The docs (README.md, docs/, test/integration/README.md): links and anchors, `make` targets, repo paths;
	@# design.md's controller table and package map against pkg/operator, pkg/ and hack/pure-packages.
	$(GO) run $(TRIMPATH) ./hack/verify-docs
	@# bundle/ must be what `make bundle` (with the default variables) writes today.
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	out=$$($(GO) run $(TRIMPATH) ./cmd/cluster-samples-operator bundle --out "$$tmp" 2>&1) || { echo "$$out" >&2; exit 1; }; \
	diff -ru bundle "$$tmp" || { echo "bundle/ is stale: run make bundle and commit the result" >&2; exit 1; }
	@# ... and pass operator-framework/api's validators, warnings included (hack/verify-bundle).
	cd hack/verify-bundle && $(GO) vet ./... && $(GO) run . --k8s-version $(KUBE_MINOR) ../../bundle

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
# The CSV's createdAt. Empty keeps the generator's fixed default, so that bundle/ is the same on
# every run; a release passes its own date (an RFC 3339 time or a date).
BUNDLE_CREATED_AT ?=
BUNDLE_FLAGS = --arch $(BUNDLE_ARCH)$(if $(BUNDLE_INVENTORY_DIR), --inventory-dir $(BUNDLE_INVENTORY_DIR))$(if \
	$(BUNDLE_VERSION), --version $(BUNDLE_VERSION))$(if $(BUNDLE_OPERATOR_IMAGE), --operator-image $(BUNDLE_OPERATOR_IMAGE))$(if \
	$(BUNDLE_CREATED_AT), --created-at $(BUNDLE_CREATED_AT))
bundle:
	$(GO) run ./cmd/cluster-samples-operator bundle --out $(BUNDLE_DIR) $(BUNDLE_FLAGS)

# The validators of make verify on $(BUNDLE_DIR), for a bundle written elsewhere (a release's).
# KUBE_MINOR makes the APIs removed by then errors.
KUBE_MINOR := $(patsubst v%,%,$(basename $(KUBE_VERSION)))
verify-bundle:
	cd hack/verify-bundle && $(GO) run . --k8s-version $(KUBE_MINOR) $(abspath $(BUNDLE_DIR))

run-local: build control-plane $(BIN)/kubectl $(BIN)/run-local
	$(BIN)/run-local --bin-dir $(BIN) --release-version $(RELEASE_VERSION)

# The fuzz targets' seed corpora (testdata/fuzz) run in every `make test`; this runs each target
# for FUZZTIME to look for new failures (a failing input is saved under testdata/fuzz to commit).
FUZZTIME ?= 60s
fuzz:
	$(GO) test ./pkg/inventory -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/inventory -run '^$$' -fuzz '^FuzzRewriteRegistry$$' -fuzztime $(FUZZTIME)

# Mutation testing, not part of `make test`: gremlins, pinned by hack/gremlins/go.mod, mutates the
# packages of hack/pure-packages and hack/mutation-packages with every mutator it has and reruns
# each package's own tests; hack/gremlins prints the table and fails on a mutant that lived or went
# uncovered unless hack/mutation-exceptions lists it with its reason, and checks each "fails by
# hand" reason by making the mutant. MUTATION_PACKAGES="desired pin" runs a few.
# mutation-changed (CI) mutates only the lines changed since each package's last whole pass
# (hack/mutation-baseline); mutation-record runs whole and records the packages that pass.
MUTATION_PACKAGES ?=
mutation: $(BIN)/mutation
	$(BIN)/mutation $(BIN)/gremlins $(MUTATION_PACKAGES)
mutation-changed: $(BIN)/mutation
	$(BIN)/mutation -changed $(BIN)/gremlins $(MUTATION_PACKAGES)
mutation-record: $(BIN)/mutation
	$(BIN)/mutation -record $(BIN)/gremlins $(MUTATION_PACKAGES)
$(BIN)/mutation: hack/gremlins/main.go hack/gremlins/go.mod hack/gremlins/go.sum
	cd hack/gremlins && $(GO) build -o ../../$(BIN)/gremlins github.com/go-gremlins/gremlins/cmd/gremlins
	cd hack/gremlins && $(GO) build -o ../../$(BIN)/mutation .

clean:
	rm -rf _output

# Performance against a local control plane (not part of `make test`): `bench` measures and writes
# _output/bench/results.json; `bench-check` enforces the budgets of issue 7 on that file when it
# was measured with the current binary, else measures first, and fails when a budget is missed.
bench: build control-plane
	$(GO) run ./test/bench --bin-dir $(BIN) --release-version $(RELEASE_VERSION)

# `kubectl samples usage` with 5,000 BuildConfigs and 5,000 Deployments over 200 namespaces: wall
# time and peak RSS of the plugin binary (the plugin's issue asks for 10 s and 100 MiB).
bench-plugin: $(BIN)/kubectl-samples control-plane
	$(GO) run ./test/pluginbench --bin-dir $(BIN)

bench-check: build control-plane
	$(GO) run ./test/bench --check --bin-dir $(BIN) --release-version $(RELEASE_VERSION)
