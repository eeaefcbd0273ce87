package configreader

import (
	"errors"
	"slices"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

func readerOf(t *testing.T, cfg *samplesv1.Config, goarch string) *Reader {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := indexer.Add(cfg); err != nil {
		t.Fatal(err)
	}
	return New(sampleslisters.NewConfigLister(indexer), nil, configspectest.X86Only{Goarch: goarch})
}

// TestConfigWithoutArchitecturesReadsAsTheClusters: a Config a tool applied without
// spec.architectures is read as the cluster's architecture, valid and Managed, from the first
// sync on: no controller sees it invalid while the bootstrap writes the field. The lister's
// object is left as it is.
func TestConfigWithoutArchitecturesReadsAsTheClusters(t *testing.T) {
	applied := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", ResourceVersion: "7"},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed},
	}
	cfg, eval, found, err := readerOf(t, applied, "amd64").Current()
	if err != nil || !found {
		t.Fatalf("Current: found %v, %v", found, err)
	}
	if !slices.Equal(cfg.Spec.Architectures, []string{"x86_64"}) {
		t.Errorf("read architectures %q, want [x86_64]", cfg.Spec.Architectures)
	}
	if eval.Validation.Err != nil || eval.Mode != desired.Managed || eval.Inventory == nil {
		t.Errorf("evaluation: err %v, mode %v, inventory %v; want valid, Managed, the x86_64 inventory", eval.Validation.Err, eval.Mode, eval.Inventory != nil)
	}
	if applied.Spec.Architectures != nil {
		t.Errorf("the lister's Config was modified: %q", applied.Spec.Architectures)
	}
}

// TestConfigWithoutArchitecturesOnAnUnknownArchitecture: when the operator's GOARCH names no
// spec.architectures value, nothing is filled in and the Config is invalid, saying what to set.
func TestConfigWithoutArchitecturesOnAnUnknownArchitecture(t *testing.T) {
	applied := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", ResourceVersion: "7"},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed},
	}
	cfg, eval, _, err := readerOf(t, applied, "riscv64").Current()
	if err != nil {
		t.Fatal(err)
	}
	if cfg != applied {
		t.Errorf("the Config was copied though nothing was filled in: %q", cfg.Spec.Architectures)
	}
	want := "spec.architectures is empty: set it to one of x86_64, amd64, arm64, ppc64le, s390x"
	if eval.Validation.Err == nil || eval.Validation.Err.Error() != want {
		t.Errorf("validation %v, want %q", eval.Validation.Err, want)
	}
	if eval.Mode != desired.Frozen {
		t.Errorf("mode %v, want Frozen", eval.Mode)
	}
}

// TestTheEvaluationFollowsTheConfigAndTheImageConfiguration: the kept evaluation is read again
// when either object's resourceVersion changes, and only then.
func TestTheEvaluationFollowsTheConfigAndTheImageConfiguration(t *testing.T) {
	configs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	images := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	config := func(rv string, state operatorv1.ManagementState) *samplesv1.Config {
		return &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster", UID: "u", ResourceVersion: rv},
			Spec: samplesv1.ConfigSpec{ManagementState: state, Architectures: []string{"x86_64"}}}
	}
	image := func(rv string, mode configv1.ImportModeType) *configv1.Image {
		return &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster", ResourceVersion: rv},
			Status: configv1.ImageStatus{ImageStreamImportMode: mode}}
	}
	r := New(sampleslisters.NewConfigLister(configs), configlisters.NewImageLister(images), configspectest.X86Only{})
	current := func(what string) configspec.Evaluation {
		t.Helper()
		_, eval, found, err := r.Current()
		if err != nil || !found {
			t.Fatalf("%s: found %v, %v", what, found, err)
		}
		return eval
	}
	for _, step := range []struct {
		what       string
		write      func() error
		mode       desired.Mode
		importMode string
	}{
		{"first read", func() error {
			return errors.Join(configs.Add(config("1", operatorv1.Managed)), images.Add(image("1", configv1.ImportModeLegacy)))
		}, desired.Managed, "Legacy"},
		{"the image configuration changed", func() error { return images.Update(image("2", configv1.ImportModePreserveOriginal)) }, desired.Managed, "PreserveOriginal"},
		{"the Config changed", func() error { return configs.Update(config("2", operatorv1.Removed)) }, desired.Removing, "PreserveOriginal"},
	} {
		if err := step.write(); err != nil {
			t.Fatal(err)
		}
		if eval := current(step.what); eval.Mode != step.mode || string(eval.ImportMode) != step.importMode {
			t.Errorf("%s: mode %v, import mode %q; want %v, %q", step.what, eval.Mode, eval.ImportMode, step.mode, step.importMode)
		}
	}
}
