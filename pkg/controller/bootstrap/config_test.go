package bootstrap

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

func managedConfig() *samplesv1.Config {
	return &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName, ResourceVersion: "7", Generation: 1},
		Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}}}
}

// patched is the merge patch of the one write, by the operator's field manager, as JSON.
func patched(t *testing.T, writes []clienttesting.Action) string {
	t.Helper()
	if len(writes) != 1 || writes[0].GetVerb() != "patch" {
		t.Fatalf("writes %v, want one patch", writes)
	}
	patch := writes[0].(clienttesting.PatchActionImpl)
	if patch.PatchOptions.FieldManager != bootstrapstate.FieldManager || patch.GetPatchType() != types.MergePatchType || patch.GetName() != names.ConfigName {
		t.Errorf("patched %s by %q as %s, want a merge patch of %s by %q", patch.GetName(), patch.PatchOptions.FieldManager, patch.GetPatchType(), names.ConfigName, bootstrapstate.FieldManager)
	}
	return string(patch.GetPatch())
}

// A Config that names no architecture, as a GitOps tool may apply it, gets the cluster's by a
// patch that carries its resourceVersion, and an event says so; a Config that changed meanwhile
// is left to its event, and another failure is the sync's error.
func TestAConfigNamingNoArchitectureGetsTheClusters(t *testing.T) {
	cfg := managedConfig()
	cfg.Spec.Architectures = nil
	f := newFixture(t, options{cfg: cfg})
	writes, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := patched(t, writes), `{"metadata":{"resourceVersion":"7"},"spec":{"architectures":["x86_64"]}}`; got != want {
		t.Errorf("patched %s, want %s", got, want)
	}
	if got, want := f.told(), []string{"Normal ConfigArchitectureDefaulted: Config cluster named no spec.architectures: set it to x86_64, the cluster's architecture"}; !slices.Equal(got, want) {
		t.Errorf("told %q, want %q", got, want)
	}

	f = newFixture(t, options{cfg: cfg})
	f.fail("patch", apierrors.NewConflict(samplesv1.Resource("configs"), names.ConfigName, errors.New("changed")))
	if _, err := f.sync(); err != nil || len(f.told()) != 0 {
		t.Errorf("a conflict: returned %v, told %d events; want neither", err, len(f.recorder.Events()))
	}
	f = newFixture(t, options{cfg: cfg})
	f.fail("patch", apierrors.NewServiceUnavailable("etcd is down"))
	if _, err := f.sync(); err == nil || len(f.told()) != 0 {
		t.Errorf("another failure: returned %v, told %d events; want the error and nothing told", err, len(f.recorder.Events()))
	}
}

// The bootstrap annotations are dropped, by a patch that carries the Config's resourceVersion,
// once they say nothing any more (an admin set the spec of a Config the operator created
// Removed); a Config whose annotations still explain its state, or that has none, is not written.
func TestBootstrapAnnotationsThatSayNothingAnyMoreAreDropped(t *testing.T) {
	stale := managedConfig()
	stale.Generation = 2
	stale.Annotations = map[string]string{bootstrapstate.ReasonAnnotation: configspec.ReasonIPv6Only, bootstrapstate.MessageAnnotation: "IPv6"}
	f := newFixture(t, options{cfg: stale})
	writes, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	var patch struct {
		Metadata struct {
			ResourceVersion string             `json:"resourceVersion"`
			Annotations     map[string]*string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(patched(t, writes)), &patch); err != nil {
		t.Fatal(err)
	}
	if patch.Metadata.ResourceVersion != "7" || len(patch.Metadata.Annotations) != 3 {
		t.Errorf("patched %+v, want the three annotations dropped at resourceVersion 7", patch.Metadata)
	}
	for k, v := range patch.Metadata.Annotations {
		if v != nil {
			t.Errorf("annotation %s set to %q, want it dropped", k, *v)
		}
	}

	f = newFixture(t, options{cfg: stale})
	f.fail("patch", apierrors.NewServiceUnavailable("etcd is down"))
	if _, err := f.sync(); err == nil {
		t.Error("a failed patch returned no error")
	}

	still := stale.DeepCopy()
	still.Spec.ManagementState, still.Generation = operatorv1.Removed, 1
	for _, cfg := range []*samplesv1.Config{still, managedConfig()} {
		f := newFixture(t, options{cfg: cfg})
		if writes, err := f.sync(); err != nil || len(writes) != 0 || len(f.told()) != 0 {
			t.Errorf("%s with annotations %v: wrote %v (%v), want nothing", cfg.Spec.ManagementState, cfg.Annotations, writes, err)
		}
	}
}

// A Config with another name is ignored, and a warning says so once.
func TestAConfigWithAnotherNameIsToldIgnoredOnce(t *testing.T) {
	f := newFixture(t, options{cfg: managedConfig()})
	other := managedConfig()
	other.Name = "samples"
	f.cache(other)
	for range 2 {
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := f.told(), []string{`Warning ConfigIgnored: Config "samples" is ignored: the samples operator reads only the Config named "cluster"`}; !slices.Equal(got, want) {
		t.Errorf("told %q, want %q", got, want)
	}
}

// A Config that leaves the awaiting state and comes back to it is looked at again at once, and
// the wait starts over from its first length.
func TestTheWaitStartsOverOnceTheConfigStopsAwaitingItsRegistry(t *testing.T) {
	f := newFixture(t, options{cfg: awaitingConfig()})
	f.probeErr = errors.New("connection refused")
	f.updateStored(t, f.step(t, 0, 1, base))
	f.step(t, base, 1, 2*base)
	moved := awaitingConfig()
	moved.Annotations[bootstrapstate.ReasonAnnotation] = configspec.ReasonIPv6Only
	moved.Annotations[bootstrapstate.AwaitingAnnotation] = "false"
	f.cache(moved)
	f.step(t, time.Second, 0)
	f.cache(awaitingConfig())
	f.step(t, time.Second, 1, base)
}

// The first wait before probing again a registry that did not answer is the one New is given,
// a minute when it is given none.
func TestTheFirstWaitIsAMinuteWhenNoneIsGiven(t *testing.T) {
	f := newFixture(t, options{})
	for _, tc := range []struct{ given, want time.Duration }{{0, time.Minute}, {-time.Second, time.Minute}, {time.Second, time.Second}} {
		c := newController("amd64", nil, f.probe, target, f.probeAddress, tc.given, f.inf, f.samples.SamplesV1())
		if c.recheckBase != tc.want {
			t.Errorf("given %s: waits %s first, want %s", tc.given, c.recheckBase, tc.want)
		}
	}
}
