package usabilitycontrol

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/flowcontrol"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// discoveryOf serves the kinds of some group/versions, fails for others, and counts its reads.
type discoveryOf struct {
	kinds  map[string][]string // group/version -> kinds; absent: NotFound
	failed map[string]bool
	reads  []string
}

func (d *discoveryOf) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	d.reads = append(d.reads, gv)
	if d.failed[gv] {
		return nil, errors.New("the server is currently unable to handle the request")
	}
	kinds, ok := d.kinds[gv]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	list := &metav1.APIResourceList{GroupVersion: gv}
	for _, k := range kinds {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: k + "s", Kind: k}, metav1.APIResource{Name: k + "s/status", Kind: k + "Status"})
	}
	return list, nil
}

func (d *discoveryOf) took() []string {
	out := slices.Sorted(slices.Values(d.reads))
	d.reads = nil
	return out
}

// TestEachGroupVersionIsReadOnceUntilAnAPIServiceChanges: only the group/versions asked for are
// read, each once (one not served, one whose read failed, neither again) until an APIService
// changes; a subresource names no kind; a failed group is unknown, not unserved.
func TestEachGroupVersionIsReadOnceUntilAnAPIServiceChanges(t *testing.T) {
	core := schema.GroupVersion{Version: "v1"}
	apps := schema.GroupVersion{Group: "apps.openshift.io", Version: "v1"}
	build := schema.GroupVersion{Group: "build.openshift.io", Version: "v1"}
	route := schema.GroupVersion{Group: "route.openshift.io", Version: "v1"}
	d := &discoveryOf{
		kinds:  map[string][]string{"v1": {"Service", "Secret"}, "apps.openshift.io/v1": {"DeploymentConfig"}, "batch/v1": {"Job"}},
		failed: map[string]bool{"route.openshift.io/v1": true},
	}
	c := &Controller{discovery: d, recheck: flowcontrol.NewFakeBackOff(discoveryRecheck, maxDiscoveryRecheck, testingclock.NewFakeClock(time.Now()))}
	needed := []schema.GroupVersion{apps, build, route, core}

	served, unknown, _ := c.served(needed)
	want := map[schema.GroupVersion]sets.Set[string]{core: sets.New("Service", "Secret"), apps: sets.New("DeploymentConfig"), build: sets.New[string]()}
	if !reflect.DeepEqual(served, want) || !unknown.Equal(sets.New("route.openshift.io")) {
		t.Errorf("served %v unknown %v; want %v and route.openshift.io unknown", served, sets.List(unknown), want)
	}
	if reads := d.took(); !slices.Equal(reads, []string{"apps.openshift.io/v1", "build.openshift.io/v1", "route.openshift.io/v1", "v1"}) {
		t.Errorf("first reads %v", reads)
	}

	d.failed = nil
	if served2, _, _ := c.served(needed); !reflect.DeepEqual(served2, want) {
		t.Errorf("second: served %v", served2)
	}
	if reads := d.took(); len(reads) != 0 {
		t.Errorf("a sync with no APIService change read %v, want nothing", reads)
	}

	c.discoveryStale.Store(true)
	d.kinds["route.openshift.io/v1"] = []string{"Route"}
	served, unknown, _ = c.served(needed)
	if !served[route].Has("Route") || unknown.Len() != 0 {
		t.Errorf("after an APIService change: served %v unknown %v; want Route served", served, sets.List(unknown))
	}
	if reads := d.took(); len(reads) != 4 {
		t.Errorf("after an APIService change read %v, want each needed group/version again", reads)
	}
}

// TestAServedGroupWhoseReadFailsStaysServed: after an APIService change, a group/version whose
// read fails is judged by the kinds its last successful read found, and is not unknown; it is
// read again at the recheck, and what that read finds replaces the answer.
func TestAServedGroupWhoseReadFailsStaysServed(t *testing.T) {
	route := schema.GroupVersion{Group: "route.openshift.io", Version: "v1"}
	clock := testingclock.NewFakeClock(time.Now())
	d := &discoveryOf{kinds: map[string][]string{"route.openshift.io/v1": {"Route"}}}
	c := &Controller{discovery: d, recheck: flowcontrol.NewFakeBackOff(discoveryRecheck, maxDiscoveryRecheck, clock)}
	needed := []schema.GroupVersion{route}
	c.served(needed)

	c.discoveryStale.Store(true)
	d.failed = map[string]bool{"route.openshift.io/v1": true}
	served, unknown, in := c.served(needed)
	if !served[route].Has("Route") || unknown.Len() != 0 || in != time.Second {
		t.Errorf("a failed read after an APIService change: served %v unknown %v recheck in %v; want Route served as before, rechecked in 1s", served, sets.List(unknown), in)
	}
	clock.Step(in)
	d.failed = nil
	delete(d.kinds, "route.openshift.io/v1")
	if served, _, _ := c.served(needed); served[route].Len() != 0 {
		t.Errorf("the recheck found route not served, but served %v", served)
	}
}

// TestANegativeAnswerIsReadAgainAfterABackoff: a group/version found not served, or unreadable,
// after an APIService changed is read again 1 s later, then 2 s, and so on up to 32 s, and no
// sooner; once served it is read no more; after the last recheck a negative answer stands.
func TestANegativeAnswerIsReadAgainAfterABackoff(t *testing.T) {
	build := schema.GroupVersion{Group: "build.openshift.io", Version: "v1"}
	route := schema.GroupVersion{Group: "route.openshift.io", Version: "v1"}
	clock := testingclock.NewFakeClock(time.Now())
	d := &discoveryOf{kinds: map[string][]string{}, failed: map[string]bool{"route.openshift.io/v1": true}}
	c := &Controller{discovery: d, recheck: flowcontrol.NewFakeBackOff(discoveryRecheck, maxDiscoveryRecheck, clock)}
	needed := []schema.GroupVersion{build, route}

	_, _, in := c.served(needed)
	if in != time.Second || len(d.took()) != 2 {
		t.Fatalf("first: recheck in %v, want 1s", in)
	}
	clock.Step(500 * time.Millisecond)
	if _, _, in := c.served(needed); in != 500*time.Millisecond || len(d.took()) != 0 {
		t.Errorf("before the recheck: recheck in %v, want 500ms and no read", in)
	}
	clock.Step(500 * time.Millisecond)
	// kube-apiserver caught up for build only.
	d.kinds["build.openshift.io/v1"] = []string{"BuildConfig"}
	served, unknown, in := c.served(needed)
	if !served[build].Has("BuildConfig") || !unknown.Has("route.openshift.io") || in != 2*time.Second {
		t.Errorf("at the recheck: served %v unknown %v recheck in %v; want BuildConfig served, route unknown, 2s", served, sets.List(unknown), in)
	}
	if reads := d.took(); !slices.Equal(reads, []string{"build.openshift.io/v1", "route.openshift.io/v1"}) {
		t.Errorf("at the recheck read %v", reads)
	}
	var waits []time.Duration
	for range 10 {
		clock.Step(in)
		_, _, in = c.served(needed)
		if reads := d.took(); !slices.Equal(reads, []string{"route.openshift.io/v1"}) {
			t.Fatalf("recheck read %v, want only route", reads)
		}
		if in == 0 {
			break
		}
		waits = append(waits, in)
	}
	if want := []time.Duration{4 * time.Second, 8 * time.Second, 16 * time.Second}; !slices.Equal(waits, want) {
		t.Errorf("rechecks after %v, want %v then none", waits, want)
	}
	clock.Step(time.Hour)
	if _, _, in := c.served(needed); in != 0 || len(d.took()) != 0 {
		t.Errorf("after the last recheck: recheck in %v, reads; want none until an APIService changes", in)
	}
}

// TestAResyncReadsAgainOnlyTheNegativeAnswers: the APIService informer's resync (the same
// resourceVersion) reads again only the group/versions found not served or unreadable, and
// neither reads nor brings the sync back once every group asked for is served; a changed
// APIService still makes every answer stale.
func TestAResyncReadsAgainOnlyTheNegativeAnswers(t *testing.T) {
	apps := schema.GroupVersion{Group: "apps.openshift.io", Version: "v1"}
	build := schema.GroupVersion{Group: "build.openshift.io", Version: "v1"}
	d := &discoveryOf{kinds: map[string][]string{"apps.openshift.io/v1": {"DeploymentConfig"}}}
	c := &Controller{discovery: d, recheck: flowcontrol.NewFakeBackOff(discoveryRecheck, maxDiscoveryRecheck, testingclock.NewFakeClock(time.Now()))}
	syncs := 0
	enqueue := func() { syncs++ }
	c.enqueue.Store(&enqueue)
	events := c.apiServiceEvents()
	apiService := func(rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "v1.build.openshift.io", ResourceVersion: rv}}
	}
	needed := []schema.GroupVersion{apps, build}

	c.served(needed)
	d.took()
	events.UpdateFunc(apiService("7"), apiService("7"))
	if syncs != 1 {
		t.Fatalf("a resync while build is not served brought %d syncs, want 1", syncs)
	}
	d.kinds["build.openshift.io/v1"] = []string{"BuildConfig"}
	served, _, _ := c.served(needed)
	if reads := d.took(); !slices.Equal(reads, []string{"build.openshift.io/v1"}) || !served[build].Has("BuildConfig") {
		t.Errorf("after a resync read %v and found %v; want build alone read again, and served", reads, served)
	}

	events.UpdateFunc(apiService("7"), apiService("7"))
	if syncs != 1 {
		t.Errorf("a resync with every group served brought the sync back")
	}
	if c.served(needed); len(d.took()) != 0 {
		t.Errorf("a resync with every group served read discovery again")
	}

	events.UpdateFunc(apiService("7"), apiService("8"))
	if c.served(needed); len(d.took()) != 2 || syncs != 2 {
		t.Errorf("a changed APIService did not make every answer stale")
	}
}

// TestAFailedReadKeepsTheLastAnswer: with build.openshift.io and apps.openshift.io found not
// served, an APIService change, the informer's resync or a recheck whose reads fail leave every
// template's verdict as it was: no sample is told its marks changed (each would cost a GET and
// a PUT) and no SamplesUsableAgain goes out. The next successful read that finds them served
// takes the marks away, at once and with the Event.
func TestAFailedReadKeepsTheLastAnswer(t *testing.T) {
	d := servingAllBut("apps.openshift.io", "build.openshift.io")
	clock := testingclock.NewFakeClock(time.Now())
	c := syncableController(d, clock)
	heard := &told{}
	c.verdicts.OnChange(heard.listen)
	recorder := events.NewInMemoryRecorder("test", clock)
	syncCtx := factory.NewSyncContext("test", recorder)
	apiServices := c.apiServiceEvents()
	apiService := func(rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "v1.build.openshift.io", ResourceVersion: rv}}
	}
	sync := func(step string) {
		t.Helper()
		if err := c.sync(context.Background(), syncCtx); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	notServed := func() []string { return withReason(c, usability.KindNotServed) }
	usableAgain := func() int {
		n := 0
		for _, e := range recorder.Events() {
			if e.Reason == "SamplesUsableAgain" {
				n++
			}
		}
		return n
	}

	sync("first")
	marked := notServed()
	if len(marked) == 0 {
		t.Fatal("no template is marked with build and apps not served")
	}
	heard.take()

	d.failed = map[string]bool{"apps.openshift.io/v1": true, "build.openshift.io/v1": true}
	for _, step := range []struct {
		name   string
		before func()
	}{
		{"an APIService changed", func() { apiServices.UpdateFunc(apiService("7"), apiService("8")) }},
		{"the informer resynced", func() { apiServices.UpdateFunc(apiService("8"), apiService("8")) }},
		{"a recheck was due", func() { clock.Step(time.Hour) }},
	} {
		step.before()
		sync(step.name)
		if reads := d.took(); !slices.Contains(reads, "apps.openshift.io/v1") || !slices.Contains(reads, "build.openshift.io/v1") {
			t.Errorf("%s: read %v, want apps and build read again", step.name, reads)
		}
		if got := notServed(); !slices.Equal(got, marked) {
			t.Errorf("%s and the reads failed: marked %d templates, want the %d marked before", step.name, len(got), len(marked))
		}
		if got := heard.take(); len(got) != 0 {
			t.Errorf("%s and the reads failed: %d samples told their marks changed, want none", step.name, len(got))
		}
		if n := usableAgain(); n != 0 {
			t.Errorf("%s and the reads failed: %d SamplesUsableAgain events, want none", step.name, n)
		}
	}

	d.failed = nil
	d.kinds["apps.openshift.io/v1"] = []string{"DeploymentConfig"}
	d.kinds["build.openshift.io/v1"] = []string{"BuildConfig"}
	apiServices.UpdateFunc(apiService("8"), apiService("9"))
	sync("served again")
	if got := notServed(); len(got) != 0 {
		t.Errorf("served again: still marked %v", got)
	}
	if got := heard.take(); len(got) != len(marked) {
		t.Errorf("served again: %d samples told their marks changed, want the %d marked", len(got), len(marked))
	}
	if n := usableAgain(); n != 2 {
		t.Errorf("served again: %d SamplesUsableAgain events, want one for each group's cause", n)
	}
}
