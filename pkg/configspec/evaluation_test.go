package configspec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// TestBlocksAsTheServerJudgesUpdates: with an allow-list that leaves registry.access.redhat.com
// out, every stream from it is refused on create; an installed one is blocked only when the write
// would name a repository the stored stream does not, as openshift-apiserver judges updates.
func TestBlocksAsTheServerJudgesUpdates(t *testing.T) {
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}}}
	image := &configv1.Image{Spec: configv1.ImageSpec{AllowedRegistriesForImport: []configv1.RegistryLocation{
		{DomainName: "registry.redhat.io"}, {DomainName: "quay.io"}}}}
	eval := Evaluate(cfg, configspectest.X86Only{}, image)
	const name = "ubi8-openjdk-17"
	if registry := eval.RefusedOnCreate[name]; registry != "registry.access.redhat.com" {
		t.Fatalf("RefusedOnCreate[%s] = %q, want registry.access.redhat.com (all: %v)", name, registry, eval.RefusedOnCreate)
	}
	installed, _, _ := desired.ImageStream(&cfg.Spec, desired.Choice{Version: "v1"}, eval.Inventory, name)
	elsewhere := installed.DeepCopy() // an admin moved every tag to an allowed registry
	for i := range elsewhere.Spec.Tags {
		if from := elsewhere.Spec.Tags[i].From; from != nil && from.Kind == "DockerImage" {
			from.Name = "quay.io/someone/openjdk:" + elsewhere.Spec.Tags[i].Name
		}
	}
	recorded := elsewhere.DeepCopy() // ... after the images were imported
	recorded.Status.Tags = []imagev1.NamedTagEventList{{Tag: "1.11", Items: []imagev1.TagEvent{
		{DockerImageReference: "registry.access.redhat.com/ubi8/openjdk-17@sha256:" + strings.Repeat("ab", 32)}}}}
	for _, tc := range []struct {
		step    string
		live    *imagev1.ImageStream
		blocked bool
	}{
		{"absent: a create", nil, true},
		{"installed: an update naming its own repositories", installed, false},
		{"no tag names the repository any more", elsewhere, true},
		{"the status still names it", recorded, false},
	} {
		registry, blocked := eval.Blocks(name, tc.live)
		if blocked != tc.blocked || blocked && registry != "registry.access.redhat.com" {
			t.Errorf("%s: Blocks = %q, %v; want blocked %v", tc.step, registry, blocked, tc.blocked)
		}
	}
	if _, blocked := eval.Blocks("ruby", nil); blocked {
		t.Error("ruby, from an allowed registry, is blocked")
	}

	lives := map[string]*imagev1.ImageStream{name: installed}
	blocked := eval.Blocked(func(n string) *imagev1.ImageStream { return lives[n] })
	if _, ok := blocked[name]; ok || len(blocked) != len(eval.RefusedOnCreate)-1 {
		t.Errorf("Blocked names %d of the %d refused on create, %s among them: %v", len(blocked), len(eval.RefusedOnCreate), name, blocked)
	}
}

// The mirror sets are judged on what the Config installs: its skips left out, its samplesRegistry
// applied. No inventory (an architecture without one) wants nothing.
func TestWantedPullSpecsFollowTheConfig(t *testing.T) {
	cfg := &samplesv1.Config{Spec: samplesv1.ConfigSpec{SamplesRegistry: "mirror.example.com", SkippedImagestreams: []string{"s2"}}}
	got := Evaluation{Inventory: sourceTagged(t).Inventory}.WantedPullSpecs(cfg)
	if _, ok := got["s2"]; ok || len(got) != 7 {
		t.Errorf("wanted %d streams, s2 among them: %v; want the 7 not skipped", len(got), got)
	}
	if want := []string{"mirror.example.com/ubi8/s1:1"}; !slices.Equal(got["s1"], want) {
		t.Errorf("s1 pulls %v, want %v", got["s1"], want)
	}
	if got := (Evaluation{}).WantedPullSpecs(cfg); got == nil || len(got) != 0 {
		t.Errorf("without an inventory: %v, want an empty map", got)
	}
}

// unloadable ships an x86_64 inventory that does not load.
type unloadable struct{ configspectest.X86Only }

func (unloadable) For(string) (*inventory.Inventory, error) {
	return nil, errors.New("a file of the inventory does not parse")
}

// TestOnlyAValidConfigWithItsInventoryIsManaged: a Config that does not validate, or whose
// inventory does not load, leaves the samples as they are.
func TestOnlyAValidConfigWithItsInventoryIsManaged(t *testing.T) {
	managed := func(registry string) *samplesv1.Config {
		return &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}, SamplesRegistry: registry}}
	}
	for _, tc := range []struct {
		name          string
		cfg           *samplesv1.Config
		inventories   Inventories
		want          desired.Mode
		withInventory bool
	}{
		{"valid, its inventory loaded", managed(""), configspectest.X86Only{}, desired.Managed, true},
		{"a samples registry that is no registry", managed("Not A Registry!"), configspectest.X86Only{}, desired.Frozen, true},
		{"an inventory that does not load", managed(""), unloadable{}, desired.Frozen, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eval := Evaluate(tc.cfg, tc.inventories, nil)
			if eval.Mode != tc.want || (eval.Inventory != nil) != tc.withInventory {
				t.Errorf("mode %v, inventory %t (validation %v); want %v, %t", eval.Mode, eval.Inventory != nil, eval.Validation.Err, tc.want, tc.withInventory)
			}
		})
	}
}
