package usabilitycontrol

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// answers is a store of amd64 images whose answer for each digest the test sets: an error, or
// NotFound while the image is not written.
type answers struct {
	images
	fail map[string]error
}

func (a *answers) Get(ctx context.Context, name string, opts metav1.GetOptions) (*imagev1.Image, error) {
	a.mu.Lock()
	err := a.fail[name]
	a.mu.Unlock()
	if err != nil {
		a.mu.Lock()
		a.reads = append(a.reads, name)
		a.mu.Unlock()
		return nil, err
	}
	return a.images.Get(ctx, name, opts)
}

// judgedCluster is a controller over the streams of streams (stream -> its tags' digests), each
// managed and imported, with one amd64 node; its images are read from store on clock.
type judgedCluster struct {
	c       *Controller
	streams cache.Indexer
	nodes   cache.ResourceEventHandler
	clock   *testingclock.FakeClock
	syncCtx factory.SyncContext
}

func newJudgedCluster(t *testing.T, store ImageGetter, streams map[string][]string) *judgedCluster {
	t.Helper()
	j := &judgedCluster{streams: indexer(), clock: testingclock.NewFakeClock(time.Now())}
	for name, digests := range streams {
		j.setStream(name, "1", digests)
	}
	j.c = managedController(j.streams, store)
	j.c.images.backoff = flowcontrol.NewFakeBackOff(imageRetry, maxImageRetry, j.clock)
	// As New wires the Nodes informer.
	j.nodes = j.c.nodes.Handler(j.c.nodesChanged)
	j.nodes.OnAdd(node("node-amd64", "amd64"), true)
	j.syncCtx = factory.NewSyncContext("test", events.NewInMemoryRecorder("test", testingclock.NewFakePassiveClock(time.Now())))
	return j
}

// setStream writes the stream at resourceVersion rv, its tag i pointing at digests[i].
func (j *judgedCluster) setStream(name, rv string, digests []string) {
	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: names.SamplesNamespace, ResourceVersion: rv,
		Labels: map[string]string{desired.ManagedLabel: "true"}}}
	for i, d := range digests {
		tag := fmt.Sprint(i)
		is.Spec.Tags = append(is.Spec.Tags, imagev1.TagReference{Name: tag})
		is.Status.Tags = append(is.Status.Tags, imagev1.NamedTagEventList{Tag: tag, Items: []imagev1.TagEvent{{Image: d}}})
	}
	_ = j.streams.Update(is)
}

func (j *judgedCluster) sync(t *testing.T) {
	t.Helper()
	if err := j.c.sync(context.Background(), j.syncCtx); err != nil {
		t.Fatal(err)
	}
}

// unjudged are the tags of streams not marked for having no image for the nodes.
func (j *judgedCluster) unjudged(streams map[string][]string) []string {
	marked := map[string]bool{}
	for _, v := range j.c.verdicts.All() {
		if v.Kind == usability.KindImageStreamTag && slices.ContainsFunc(v.Reasons, func(r usability.Reason) bool { return r.Code == usability.NoImageForNodes }) {
			marked[v.Name] = true
		}
	}
	var out []string
	for name, digests := range streams {
		for i := range digests {
			if tag := fmt.Sprintf("%s:%d", name, i); !marked[tag] {
				out = append(out, tag)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestEveryImportedTagIsJudgedWithin15sOfANodeChange (issue 56): with images whose reads failed
// for a while before (the server busy after the imports) or that were answered NotFound (read
// before they were written), every amd64 tag gets its verdict within 15 s of the nodes turning
// arm64 only, once the server answers.
func TestEveryImportedTagIsJudgedWithin15sOfANodeChange(t *testing.T) {
	streams := map[string][]string{
		"ruby":                    {"sha256:r1", "sha256:r2", "sha256:r2"},
		"ubi8-openjdk-8-runtime":  {"sha256:j8"},
		"ubi8-openjdk-17-runtime": {"sha256:j17", "sha256:j17b"},
		"python":                  {"sha256:p1"},
	}
	busy := apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	for _, tc := range []struct {
		name string
		// before is what the server answers for a digest before the nodes change.
		before func(digest string) error
		// busyFor is how long after the nodes change reads still fail.
		busyFor time.Duration
	}{
		{"reads failed before", func(d string) error {
			if d == "sha256:p1" {
				return nil
			}
			return busy
		}, 0},
		{"reads failed before and for 6 s after", func(string) error { return busy }, 6 * time.Second},
		{"answered NotFound before", func(d string) error {
			return apierrors.NewNotFound(imagev1.Resource("images"), d)
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &answers{images: images{archs: map[string]string{}}, fail: map[string]error{}}
			for _, digests := range streams {
				for _, d := range digests {
					store.archs[d] = "amd64"
					store.fail[d] = tc.before(d)
				}
			}
			j := newJudgedCluster(t, store, streams)
			// Syncs for a minute while the server answers as before: the imports, their retries.
			for range 60 {
				j.sync(t)
				j.clock.Step(time.Second)
			}
			// The server answers again, but for busyFor after the nodes change.
			j.clock.Step(time.Minute)
			if tc.busyFor > 0 {
				for d := range store.fail {
					store.fail[d] = busy
				}
			} else {
				clear(store.fail)
			}
			changed := j.clock.Now()
			j.nodes.OnAdd(node("node-arm64", "arm64"), false)
			j.nodes.OnDelete(node("node-amd64", "amd64"))
			for {
				if tc.busyFor > 0 && j.clock.Since(changed) >= tc.busyFor {
					clear(store.fail)
				}
				j.sync(t)
				if left := j.unjudged(streams); len(left) == 0 {
					t.Logf("every tag judged %v after the nodes turned arm64", j.clock.Since(changed))
					break
				} else if j.clock.Since(changed) >= 15*time.Second {
					t.Fatalf("15 s after the nodes turned arm64, %d tags still unjudged: %v", len(left), left)
				}
				j.clock.Step(500 * time.Millisecond)
			}
		})
	}
}

// TestAnImageAnsweredNotFoundIsReadAgainWhenItsStreamChanges: an image read before the import
// wrote it is not taken as an image without architecture: its stream's next change (the import
// writing its status) reads it again, and its tag is judged; the server is not asked at every
// sync meanwhile.
func TestAnImageAnsweredNotFoundIsReadAgainWhenItsStreamChanges(t *testing.T) {
	streams := map[string][]string{"ruby": {"sha256:r1", "sha256:r2"}, "python": {"sha256:p1"}}
	store := &answers{images: images{archs: map[string]string{"sha256:p1": "amd64"}}}
	j := newJudgedCluster(t, store, streams)
	j.nodes.OnAdd(node("node-arm64", "arm64"), false)
	j.nodes.OnDelete(node("node-amd64", "amd64"))
	j.sync(t)
	if reads := store.took(); !slices.Equal(reads, []string{"sha256:p1", "sha256:r1", "sha256:r2"}) {
		t.Fatalf("reads %v", reads)
	}
	for range 10 {
		j.clock.Step(time.Second)
		j.sync(t)
	}
	if reads := store.took(); len(reads) != 0 {
		t.Errorf("images answered NotFound read again %v while nothing changed", reads)
	}
	if left := j.unjudged(streams); !slices.Equal(left, []string{"ruby:0", "ruby:1"}) {
		t.Fatalf("unjudged %v, want ruby's tags", left)
	}
	store.archs["sha256:r1"], store.archs["sha256:r2"] = "amd64", "amd64"
	j.setStream("ruby", "2", streams["ruby"])
	j.sync(t)
	if reads := store.took(); !slices.Equal(reads, []string{"sha256:r1", "sha256:r2"}) {
		t.Errorf("reads after ruby changed %v, want its two images", reads)
	}
	if left := j.unjudged(streams); len(left) != 0 {
		t.Errorf("unjudged %v after ruby's images were written", left)
	}
}

// TestAServerThatServesNoImagesIsNotAskedForThem: where image.openshift.io serves streams but no
// images (the stand-ins, a cluster without openshift-apiserver's images), every read would be
// NotFound, and each stream change would ask again (make bench: 110 reads in 30 s of steady
// state). Nothing is read until an APIService change brings the images.
func TestAServerThatServesNoImagesIsNotAskedForThem(t *testing.T) {
	streams := map[string][]string{"ruby": {"sha256:r1", "sha256:r2"}, "python": {"sha256:p1"}}
	store := &answers{images: images{archs: map[string]string{"sha256:p1": "amd64", "sha256:r1": "amd64", "sha256:r2": "amd64"}}}
	j := newJudgedCluster(t, store, streams)
	disc := &discoveryOf{kinds: map[string][]string{"image.openshift.io/v1": {"ImageStream", "ImageStreamImport"}}}
	j.c.discovery = disc
	j.nodes.OnAdd(node("node-arm64", "arm64"), false)
	j.nodes.OnDelete(node("node-amd64", "amd64"))
	for i := range 5 {
		j.setStream("ruby", fmt.Sprint(i+2), streams["ruby"])
		j.clock.Step(time.Second)
		j.sync(t)
	}
	if reads := store.took(); len(reads) != 0 {
		t.Errorf("images read %v from a server that serves none", reads)
	}
	if left := j.unjudged(streams); len(left) != 3 {
		t.Errorf("unjudged %v, want every tag: no image could be read", left)
	}
	disc.kinds["image.openshift.io/v1"] = append(disc.kinds["image.openshift.io/v1"], "Image")
	j.c.discoveryStale.Store(true) // as an APIService change does
	j.sync(t)
	if reads := store.took(); !slices.Equal(reads, []string{"sha256:p1", "sha256:r1", "sha256:r2"}) {
		t.Errorf("reads once the images are served %v, want every image", reads)
	}
	if left := j.unjudged(streams); len(left) != 0 {
		t.Errorf("unjudged %v once the images are served", left)
	}
}
