package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// The samples controller tells its own writes from everyone else's by its writer's record
// (pkg/samplewriter), and after a restart by the samples' managedFields: never by the shape of a
// sample or its version annotation, which any other writer can copy or drop.

// TestRepointingASampleToAMirrorIsARevert: an admin (or a script) points every tag of python at a
// mirror host with the inventory's paths, the shape a samplesRegistry rewrite has, seven times in
// about ten seconds. Each is reverted and reported as a revert until the budget is spent; the
// operator then says so and stops.
func TestRepointingASampleToAMirrorIsARevert(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e, _ := newSettledEnv(t)

	since := time.Now()
	e.fightOver(t, "python", 7, func(i int, is *imagev1.ImageStream) {
		host := []string{"mirror-a.example:5000", "mirror-b.example:5000"}[i%2]
		for j := range is.Spec.Tags {
			if from := is.Spec.Tags[j].From; from != nil && from.Kind == "DockerImage" {
				from.Name = host + from.Name[strings.Index(from.Name, "/"):]
			}
		}
	})
	e.assertRevertedWithinTheBudget(t, "python", since)
}

// TestAStaleCopyWithoutTheVersionIsARevert: a stale copy of ruby (another tag list, the version
// annotation dropped, as a backup re-applied would be) is reverted and reported each time, and
// counted against the budget: it is no upgrade, though its annotation no longer says the version.
func TestAStaleCopyWithoutTheVersionIsARevert(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e, _ := newSettledEnv(t)

	since := time.Now()
	e.fightOver(t, "ruby", 5, func(i int, is *imagev1.ImageStream) {
		delete(is.Annotations, desired.VersionAnnotation)
		is.Spec.Tags = is.Spec.Tags[:1]
		is.Spec.Tags[0].From.Name = fmt.Sprintf("registry.access.redhat.com/ubi7/ruby-2%d:latest", i)
	})
	e.assertRevertedWithinTheBudget(t, "ruby", since)
}

// newSettledEnv is a stand-in cluster whose samples an operator installed and left quiet.
func newSettledEnv(t *testing.T) (*env, *runningOperator) {
	t.Helper()
	e := newEnv(t)
	op := e.startOperator(defaultOptions())
	e.waitManaged(t, x86Inventory(t), "v1")
	e.waitQuiet(t, 300*time.Millisecond)
	return e, op
}

// fightOver edits a sample times times, each after the operator's answer to the previous edit (or
// 1.5 s, once the budget holds the operator back).
func (e *env) fightOver(t *testing.T, name string, times int, edit func(i int, is *imagev1.ImageStream)) {
	t.Helper()
	for i := 0; i < times; i++ {
		edited := e.editImageStream(name, func(is *imagev1.ImageStream) { edit(i, is) })
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) && e.imageStream(name).ResourceVersion == edited.ResourceVersion {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// assertRevertedWithinTheBudget: the operator updated the sample exactly the budget's number of
// times since then, each a SampleReverted event, then told SampleRevertBudgetExceeded.
func (e *env) assertRevertedWithinTheBudget(t *testing.T, name string, since time.Time) {
	t.Helper()
	e.waitEvent(t, "SampleRevertBudgetExceeded", "ImageStream openshift/"+name)
	idle(t, time.Second)
	if writes := len(e.operatorRequests(t, verb("update"), on("imagestreams"), noSubresource, named(name), carriedOut, receivedAfter(since))); writes != samplewriter.RevertBudget {
		t.Errorf("the operator updated %s %d times, want the budget's %d", name, writes, samplewriter.RevertBudget)
	}
	reverted := 0
	for _, ev := range e.operatorEvents(t) {
		if ev.Reason == "SampleReverted" && strings.Contains(ev.Message, "ImageStream openshift/"+name+" ") {
			reverted += max(int(ev.Count), 1)
		}
	}
	if reverted != samplewriter.RevertBudget {
		t.Errorf("%d SampleReverted events for %s, want one per revert (%d)", reverted, name, samplewriter.RevertBudget)
	}
	for _, w := range e.sampleWritesSince(t, since) {
		if w != "update imagestreams/"+name {
			t.Errorf("another sample was written meanwhile: %s", w)
		}
	}
}

// TestARegistryChangeIsNoRevertAcrossARestart: a samplesRegistry change is the operator following
// its Config, never a revert, also when the operator restarts in the middle of it and when the
// change is made while no operator runs (and the next is an upgrade): with no record of its
// writes, the samples' managedFields say the operator wrote what is there. An admin's edit made
// meanwhile is still a revert; an admin's schedule, which the upgrade resets, is not.
func TestARegistryChangeIsNoRevertAcrossARestart(t *testing.T) {
	parallel(t, aboutHalfAMinute)
	e, first := newSettledEnv(t)
	inv := x86Inventory(t)

	const mirror = "mirror.example:5000/samples"
	pullsFrom := func(name, prefix string) bool {
		for _, tag := range e.imageStream(name).Spec.Tags {
			if tag.From != nil && tag.From.Kind == "DockerImage" && !strings.HasPrefix(tag.From.Name, prefix) {
				return false
			}
		}
		return true
	}
	allPullFrom := func(prefix string) func() (bool, string) {
		return func() (bool, string) {
			for _, name := range inv.ImageStreamNames() {
				if !pullsFrom(name, prefix) {
					return false, name + " does not pull from " + prefix + " yet"
				}
			}
			return true, ""
		}
	}
	// The restart comes as soon as the first stream is rewritten, seen by a watch begun before
	// the change: the second operator finds the others as the first left them, rewritten or not.
	streams := e.images.ImageV1().ImageStreams("openshift")
	listed, err := streams.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := map[string][]string{} // where each stream pulls from before the change
	for _, is := range listed.Items {
		before[is.Name] = dockerImages(&is)
	}
	w, err := streams.Watch(t.Context(), metav1.ListOptions{ResourceVersion: listed.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = mirror })
	firstRewritten := ""
	for timeout := time.After(10 * time.Second * patience); firstRewritten == ""; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch of the imagestreams ended before any was rewritten")
			}
			if is, isStream := ev.Object.(*imagev1.ImageStream); isStream && allPrefixed(dockerImages(is), mirror+"/") {
				firstRewritten = is.Name
			}
		case <-timeout:
			t.Fatalf("no imagestream pulls from %s within %s", mirror, 10*time.Second*patience)
		}
	}
	w.Stop()
	first.stop(t)
	// The restart came mid-rewrite: when the first operator had stopped, some streams pulled
	// from the mirror and others still from where they did before.
	stopped, err := streams.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var onOld, onNew []string
	for _, is := range stopped.Items {
		switch images := dockerImages(&is); {
		case !slices.Contains(inv.ImageStreamNames(), is.Name) || len(images) == 0:
		case allPrefixed(images, mirror+"/"):
			onNew = append(onNew, is.Name)
		case slices.Equal(images, before[is.Name]):
			onOld = append(onOld, is.Name)
		default:
			t.Errorf("when the first operator stopped, %s pulled from neither the old registries nor only the mirror: %v", is.Name, images)
		}
	}
	t.Logf("when the first operator stopped (the first stream rewritten was %s), %d imagestreams still pulled from the old registries and %d from %s",
		firstRewritten, len(onOld), len(onNew), mirror)
	if len(onOld) == 0 || len(onNew) == 0 {
		t.Fatalf("the restart did not come mid-rewrite: %d imagestreams on the old registries (%v), %d on the mirror (%v)", len(onOld), onOld, len(onNew), onNew)
	}
	second := e.startOperator(defaultOptions())
	eventually(t, 20*time.Second, allPullFrom(mirror+"/"))
	e.waitQuiet(t, 300*time.Millisecond)
	second.stop(t)

	// Changed back while no operator runs, and the next one is a new version; meanwhile an
	// admin edits ruby, and schedules imports of a python tag as the documentation allows (the
	// new version resets that: no revert either).
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "" })
	e.editImageStream("ruby", func(is *imagev1.ImageStream) {
		is.Spec.Tags[0].From.Name = "quay.io/someone/ruby:mine"
	})
	e.editImageStream("python", func(is *imagev1.ImageStream) {
		is.Spec.Tags[0].ImportPolicy.Scheduled = !is.Spec.Tags[0].ImportPolicy.Scheduled
	})
	upgraded := defaultOptions()
	upgraded.Version = "v2"
	e.startOperator(upgraded)
	e.waitManaged(t, inv, "v2")
	eventually(t, 20*time.Second, func() (bool, string) {
		for _, name := range inv.ImageStreamNames() {
			if pullsFrom(name, mirror+"/") || pullsFrom(name, "quay.io/someone/") {
				return false, name + " still pulls from the mirror or the admin's edit"
			}
		}
		return true, ""
	})
	e.waitEvent(t, "SampleReverted", "ImageStream openshift/ruby ")
	e.waitQuiet(t, 300*time.Millisecond)
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) != 1 {
		t.Errorf("want only the admin's edit of ruby reported as reverted, got %v", reverted)
	}
	if exceeded := e.eventsWithReason(t, "SampleRevertBudgetExceeded"); len(exceeded) > 0 {
		t.Errorf("the registry change spent revert budgets: %v", exceeded)
	}
	if c := configCondition(e.getConfig(), samplesv1.SamplesExist); c == nil || strings.Contains(c.Message, "keep being changed") {
		t.Errorf("SamplesExist names samples held back: %+v", c)
	}
}

// dockerImages are the images is's tags pull, in the order of its tags.
func dockerImages(is *imagev1.ImageStream) []string {
	var images []string
	for _, tag := range is.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" {
			images = append(images, tag.From.Name)
		}
	}
	return images
}

// allPrefixed: every image is under prefix, and there is one.
func allPrefixed(images []string, prefix string) bool {
	for _, image := range images {
		if !strings.HasPrefix(image, prefix) {
			return false
		}
	}
	return len(images) > 0
}
