package samples

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// installed is the stream or template name as a Managed operator creates it, to start another
// fixture from.
func installedStream(t *testing.T, name string) *imagev1.ImageStream {
	t.Helper()
	f := newFixture(t, managedConfig())
	f.settle(t, streamKey(name))
	return f.stream(t, name)
}

// dockerImageTag is the index of the stream's first tag that pulls an image by reference.
func dockerImageTag(t *testing.T, is *imagev1.ImageStream) int {
	t.Helper()
	for i, tag := range is.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" {
			return i
		}
	}
	t.Fatalf("%s has no tag that pulls by reference", is.Name)
	return -1
}

func allowingImports(domains ...string) *configv1.Image {
	var allowed []configv1.RegistryLocation
	for _, d := range domains {
		allowed = append(allowed, configv1.RegistryLocation{DomainName: d})
	}
	return &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: names.ClusterConfigName},
		Spec: configv1.ImageSpec{AllowedRegistriesForImport: allowed}}
}

// TestTheImportAllowListFreezesOnlyWhatItBlocks: where allowedRegistriesForImport refuses the
// registry a stream imports from, the server would refuse any write of it, so a Managed operator
// leaves the live stream as it is. Where it allows that registry, an edit that points a tag at a
// registry it does not allow is reverted as any edit is.
func TestTheImportAllowListFreezesOnlyWhatItBlocks(t *testing.T) {
	f0 := newFixture(t, nil)
	name := f0.inv.ImageStreamNames()[0]
	installed := installedStream(t, name)
	tag := dockerImageTag(t, installed)
	host := strings.SplitN(installed.Spec.Tags[tag].From.Name, "/", 2)[0]
	// Every tag moved to a registry the list leaves out: the update, which names the inventory's
	// registry again, would be refused too.
	moved := installed.DeepCopy()
	for i, tag := range moved.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" {
			moved.Spec.Tags[i].From.Name = "blocked.example.com/someone/else:1"
		}
	}
	blocked := newFixture(t, managedConfig(), allowingImports("allowed.example.com"), moved)
	if got := blocked.settle(t, streamKey(name)); len(got) != 0 {
		t.Errorf("the allow-list refuses the stream's registry: wrote %s, want it left as it is", describe(got))
	}

	edited := installed.DeepCopy()
	edited.Spec.Tags[tag].From.Name = "blocked.example.com/someone/else:1"
	allowed := newFixture(t, managedConfig(), allowingImports(host), edited)
	if got := allowed.settle(t, streamKey(name)); !same(got, []string{"get imagestreams/" + name, "update imagestreams/" + name}) {
		t.Errorf("the allow-list allows the stream's registry: wrote %s, want the edit reverted", describe(got))
	}
}

// TestASkippedOrRemovedTemplateIsWrittenFromTheWholeTemplate: the cache keeps only digests of a
// template's content. Labelling a skipped template unmanaged writes the whole template, read
// from the server, or its objects would be lost; a delete needs no content and reads nothing.
func TestASkippedOrRemovedTemplateIsWrittenFromTheWholeTemplate(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.TemplateNames()[0]
	f.settle(t, templateKey(name))
	objects := len(f.template(t, name).Objects)

	f.setConfig(t, func(c *samplesv1.Config) { c.Spec.SkippedTemplates = []string{name} })
	if got := f.settle(t, templateKey(name)); !same(got, []string{"get templates/" + name, "update templates/" + name}) {
		t.Fatalf("skipped: %s, want a get and an update", describe(got))
	}
	live := f.template(t, name)
	if live.Labels[desired.ManagedLabel] != "false" || len(live.Objects) != objects || objects == 0 {
		t.Errorf("skipped: labels %v, %d objects; want managed=false and the %d objects kept", live.Labels, len(live.Objects), objects)
	}

	f.setConfig(t, func(c *samplesv1.Config) {
		c.Spec.SkippedTemplates = nil
		c.Spec.ManagementState = operatorv1.Removed
	})
	f.writes()
	f.setConfig(t, func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Managed })
	f.settle(t, templateKey(name))
	f.setConfig(t, func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Removed })
	if got := f.settle(t, templateKey(name)); !same(got, []string{"delete templates/" + name}) {
		t.Errorf("Removed: %s, want the delete alone", describe(got))
	}
}

// TestAVerdictIsWrittenOnlyOnAManagedSampleTheConfigWants: the operator writes its marks only on
// the samples it manages. Unmanaged, it writes nothing; a skipped template is labelled unmanaged
// and carries no mark.
func TestAVerdictIsWrittenOnlyOnAManagedSampleTheConfigWants(t *testing.T) {
	unusable := desired.Marks{"": {Reason: "creates build.openshift.io/v1 BuildConfig, which this cluster does not serve", Hide: true}}
	for _, tc := range []struct {
		name string
		edit func(*samplesv1.Config)
		want func(name string) []string
	}{
		{"Unmanaged", func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Unmanaged }, func(string) []string { return nil }},
		{"skipped", func(c *samplesv1.Config) {
			c.Spec.SkippedTemplates = append(c.Spec.SkippedTemplates, c.Annotations["test/template"])
		},
			func(name string) []string { return []string{"get templates/" + name, "update templates/" + name} }},
	} {
		f := newFixture(t, managedConfig())
		name := f.inv.TemplateNames()[0]
		f.settle(t, templateKey(name))
		f.verdicts.set(samplewriter.TemplateKind, name, unusable)
		f.setConfig(t, func(c *samplesv1.Config) {
			c.Annotations = map[string]string{"test/template": name}
			tc.edit(c)
		})
		if got := f.settle(t, templateKey(name)); !same(got, tc.want(name)) {
			t.Errorf("%s: wrote %s, want %s", tc.name, describe(got), describe(tc.want(name)))
		}
		if mark, ok := f.template(t, name).Annotations[desired.UnusableAnnotation]; ok {
			t.Errorf("%s: the template carries the mark %q", tc.name, mark)
		}
	}
}

// TestASkipAfterARestartNeedsNoServerRead: labelling unmanaged a stream this process never
// wrote needs no managedFields (no revert is told either way), so the cached stream serves.
func TestASkipAfterARestartNeedsNoServerRead(t *testing.T) {
	f0 := newFixture(t, nil)
	name := f0.inv.ImageStreamNames()[0]
	cfg := managedConfig()
	cfg.Spec.SkippedImagestreams = []string{name}
	f := newFixture(t, cfg, installedStream(t, name))
	if got := f.settle(t, streamKey(name)); !same(got, []string{"update imagestreams/" + name}) {
		t.Errorf("skipped: %s, want the update alone", describe(got))
	}
}

// TestAnUnmanagedStreamsOwnTagsAreNotMarked: a tag an admin added to a stream cannot work here,
// but the Config is Unmanaged: the operator writes nothing, its marks included.
func TestAnUnmanagedStreamsOwnTagsAreNotMarked(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.ImageStreamNames()[0]
	f.settle(t, streamKey(name))
	f.editStream(t, name, func(is *imagev1.ImageStream) {
		is.Spec.Tags = append(is.Spec.Tags, imagev1.TagReference{Name: "mine", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "example.com/mine:1"}})
	})
	f.setConfig(t, func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Unmanaged })
	f.verdicts.set(samplewriter.ImageStreamKind, name, desired.Marks{"mine": {Reason: "no image for node architecture arm64 (image for amd64)", Hide: true}})
	if got := f.settle(t, streamKey(name)); len(got) != 0 {
		t.Errorf("Unmanaged: wrote %s, want nothing", describe(got))
	}
}

// TestAnAdminsUnmanagedLabelOnAWantedSampleIsReverted: an admin labels managed=false a sample
// the Config does not skip. That is an edit like any other: it is reverted and told as one, not
// taken for the operator's own skip being undone.
func TestAnAdminsUnmanagedLabelOnAWantedSampleIsReverted(t *testing.T) {
	f := newFixture(t, managedConfig())
	name := f.inv.ImageStreamNames()[0]
	f.settle(t, streamKey(name))
	f.events()
	f.editStream(t, name, func(is *imagev1.ImageStream) { is.Labels[desired.ManagedLabel] = "false" })
	if got := f.settle(t, streamKey(name)); !same(got, []string{"update imagestreams/" + name}) {
		t.Fatalf("wrote %s", describe(got))
	}
	if got := f.events(); !same(got, []string{"SampleReverted"}) {
		t.Errorf("told %s, want SampleReverted", describe(got))
	}
}

// TestASyncWithoutAConfigLeavesTheRefusalsAsTheyAre: with no Config there is nothing to decide,
// and what the status reports of the refused writes stays as it was.
func TestASyncWithoutAConfigLeavesTheRefusalsAsTheyAre(t *testing.T) {
	f := newFixture(t, nil)
	name := f.inv.ImageStreamNames()[0]
	f.deps.Refusals.Refused(samplewriter.ImageStreamKind, name, "create", "d", refusal.Refusal{Code: 403, Message: "exceeded quota"})
	f.sync(t, streamKey(name))
	if got := f.deps.Refusals.Samples(); len(got) != 1 {
		t.Errorf("after a sync without a Config, refused samples %v, want %s still", got, name)
	}
}

// TestASkippedTagIsLeftOutOfTheStream: the Config's skipped-tags annotation leaves a tag out of
// its stream, and the write is recorded for that choice, so the next sync finds nothing to do.
func TestASkippedTagIsLeftOutOfTheStream(t *testing.T) {
	f := newFixture(t, managedConfig())
	var name, tag string
	for _, s := range f.inv.ImageStreamNames() {
		if tags := f.inv.TagNames(s); len(tags) > 1 {
			name, tag = s, tags[len(tags)-1]
			break
		}
	}
	f.settle(t, streamKey(name))
	f.setConfig(t, func(c *samplesv1.Config) {
		c.Annotations = map[string]string{configspec.SkippedImageStreamTagsAnnotation: name + ":" + tag}
	})
	if got := f.settle(t, streamKey(name)); !same(got, []string{"update imagestreams/" + name}) {
		t.Fatalf("a tag skipped: wrote %s", describe(got))
	}
	for _, kept := range f.stream(t, name).Spec.Tags {
		if kept.Name == tag {
			t.Errorf("the skipped tag %s:%s is still in the stream", name, tag)
		}
	}
	f.sync(t, streamKey(name))
	if got := f.writes(); len(got) != 0 {
		t.Errorf("skipped already: wrote %s", describe(got))
	}
}

// twoArches ships an x86_64 and an arm64 inventory.
type twoArches struct{ x86, arm *inventory.Inventory }

func (twoArches) Has(arch string) bool { return arch == "x86_64" || arch == "arm64" }
func (i twoArches) For(arch string) (*inventory.Inventory, error) {
	switch arch {
	case "x86_64":
		return i.x86, nil
	case "arm64":
		return i.arm, nil
	}
	return nil, fmt.Errorf("no inventory for %q", arch)
}
func (twoArches) GOARCH() string { return "amd64" }

// TestAnUpdateThatFollowsAnArchitectureChangeIsNoRevert: the Config moves from x86_64 to
// arm64. The sample as the operator wrote it for x86_64 is its own write, told by the x86_64
// inventory: the update to arm64's content follows the Config and is no revert.
func TestAnUpdateThatFollowsAnArchitectureChangeIsNoRevert(t *testing.T) {
	x86, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	arm, err := inventory.Embedded(inventory.ArchDirOCPAarch64)
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, s := range x86.ImageStreamNames() {
		if _, inArm := arm.ImageStream(s); inArm && !slices.Equal(x86.TagNames(s), arm.TagNames(s)) {
			name = s
			break
		}
	}
	if name == "" {
		t.Fatal("no stream differs between the x86_64 and arm64 inventories")
	}
	f := newFixtureOver(t, twoArches{x86, arm}, managedConfig())
	f.settle(t, streamKey(name))
	f.events()
	f.setConfig(t, func(c *samplesv1.Config) { c.Spec.Architectures = []string{"arm64"} })
	if got := f.settle(t, streamKey(name)); !same(got, []string{"update imagestreams/" + name}) {
		t.Fatalf("arm64: wrote %s", describe(got))
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("arm64: told %s, want nothing (no revert)", describe(got))
	}
}
