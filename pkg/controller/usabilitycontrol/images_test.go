package usabilitycontrol

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/flowcontrol"
	testingclock "k8s.io/utils/clock/testing"
)

// images is a store of images by digest that counts its reads.
type images struct {
	mu     sync.Mutex
	archs  map[string]string // digest -> architecture; absent: NotFound
	failed map[string]bool
	reads  []string
}

func (i *images) Get(_ context.Context, name string, _ metav1.GetOptions) (*imagev1.Image, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.reads = append(i.reads, name)
	if i.failed[name] {
		return nil, errors.New("connection refused")
	}
	arch, ok := i.archs[name]
	if !ok {
		return nil, apierrors.NewNotFound(imagev1.Resource("images"), name)
	}
	return &imagev1.Image{DockerImageMetadata: runtime.RawExtension{Raw: []byte(`{"architecture":"` + arch + `"}`)}}, nil
}

func (i *images) took() []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	out := slices.Sorted(slices.Values(i.reads))
	i.reads = nil
	return out
}

// TestEachImageIsReadOnce: a digest is read when first asked for, once however many tags point
// at it, never again while asked for (a missing image neither); one no longer asked for is
// forgotten.
func TestEachImageIsReadOnce(t *testing.T) {
	store := &images{archs: map[string]string{"a": "amd64", "b": "s390x"}}
	archs := NewImageArchitectures(store)
	ctx := context.Background()

	got, retryIn, err := archs.Of(ctx, []string{"a", "b", "a", "gone", "gone", "a"})
	if err != nil || retryIn != 0 {
		t.Fatalf("first: err %v, retry in %v", err, retryIn)
	}
	if want := map[string][]string{"a": {"amd64"}, "b": {"s390x"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("first: %v, want %v", got, want)
	}
	if reads := store.took(); !reflect.DeepEqual(reads, []string{"a", "b", "gone"}) {
		t.Errorf("first reads %v", reads)
	}

	got, _, err = archs.Of(ctx, []string{"a", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if reads := store.took(); len(reads) != 0 {
		t.Errorf("second reads %v, want none", reads)
	}
	if want := map[string][]string{"a": {"amd64"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("second: %v, want %v", got, want)
	}
	if _, _, err := archs.Of(ctx, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if reads := store.took(); !reflect.DeepEqual(reads, []string{"b"}) {
		t.Errorf("a digest asked for again after it was forgotten: reads %v, want [b]", reads)
	}
}

// TestAFailedReadStopsTheReadsAndBacksOff: on a cluster that refuses the operator its image
// reads, a sync of a hundred new digests asks a few times, not a hundred; no read is made until
// the backoff passes, which doubles while reads fail; a read that succeeds ends it.
func TestAFailedReadStopsTheReadsAndBacksOff(t *testing.T) {
	store := &images{archs: map[string]string{}, failed: map[string]bool{}}
	var digests []string
	for i := range 100 {
		d := fmt.Sprintf("sha256:%03d", i)
		digests = append(digests, d)
		store.archs[d] = "amd64"
		store.failed[d] = true
	}
	clock := testingclock.NewFakeClock(time.Now())
	archs := NewImageArchitectures(store)
	archs.backoff = flowcontrol.NewFakeBackOff(imageRetry, maxImageRetry, clock)
	ctx := context.Background()

	got, retryIn, err := archs.Of(ctx, digests)
	if err == nil || retryIn != imageRetry || len(got) != 0 {
		t.Fatalf("a refused read: %v, retry in %v, err %v; want nothing, a retry in %v and the error", got, retryIn, err, imageRetry)
	}
	if reads := store.took(); len(reads) > 2*imageReaders {
		t.Errorf("%d reads after the first refusal, want at most %d", len(reads), 2*imageReaders)
	}

	clock.Step(imageRetry - time.Second)
	if _, retryIn, err := archs.Of(ctx, digests); err != nil || retryIn <= 0 {
		t.Errorf("during the backoff: retry in %v, err %v; want a retry and no error", retryIn, err)
	}
	if reads := store.took(); len(reads) != 0 {
		t.Errorf("%d reads during the backoff, want none", len(reads))
	}

	clock.Step(2 * time.Second)
	if _, retryIn, _ := archs.Of(ctx, digests); retryIn != 2*imageRetry {
		t.Errorf("a second refusal: retry in %v, want %v", retryIn, 2*imageRetry)
	}
	if reads := store.took(); len(reads) == 0 {
		t.Error("no read once the backoff passed")
	}

	store.failed = nil
	clock.Step(2 * imageRetry)
	got, retryIn, err = archs.Of(ctx, digests)
	if err != nil || retryIn != 0 || len(got) != len(digests) {
		t.Errorf("reads allowed again: %d read, retry in %v, err %v; want all %d, no retry", len(got), retryIn, err, len(digests))
	}
}

// flaky is a store whose reads fail until failUntil on clock, as a server busy with the imports
// that just wrote the images, or restarting, answers for a while.
type flaky struct {
	images
	clock     *testingclock.FakeClock
	failUntil time.Time
}

func (f *flaky) Get(ctx context.Context, name string, opts metav1.GetOptions) (*imagev1.Image, error) {
	if f.clock.Now().Before(f.failUntil) {
		f.mu.Lock()
		f.reads = append(f.reads, name)
		f.mu.Unlock()
		return nil, apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	}
	return f.images.Get(ctx, name, opts)
}

// TestAFailedReadIsRetriedWithinSeconds (issue 56): after reads that failed for a while, every
// image is read within seconds of the server answering again, however long it failed before:
// a tag must get its verdict within 15 s of a node change when the server answers.
func TestAFailedReadIsRetriedWithinSeconds(t *testing.T) {
	for _, failing := range []time.Duration{time.Second, 10 * time.Second, 2 * time.Minute} {
		t.Run(failing.String(), func(t *testing.T) {
			clock := testingclock.NewFakeClock(time.Now())
			store := &flaky{images: images{archs: map[string]string{}}, clock: clock, failUntil: clock.Now().Add(failing)}
			var digests []string
			for i := range 40 {
				d := fmt.Sprintf("sha256:%03d", i)
				digests = append(digests, d)
				store.archs[d] = "amd64"
			}
			archs := NewImageArchitectures(store)
			archs.backoff = flowcontrol.NewFakeBackOff(imageRetry, maxImageRetry, clock)
			ctx := context.Background()
			// The controller's sync comes back after retryIn, as the queue's AddAfter brings it.
			for {
				got, retryIn, _ := archs.Of(ctx, digests)
				if len(got) == len(digests) {
					break
				}
				if retryIn <= 0 {
					t.Fatalf("%d of %d images read at %v and no retry", len(got), len(digests), clock.Since(store.failUntil.Add(-failing)))
				}
				clock.Step(retryIn)
			}
			if late := clock.Now().Sub(store.failUntil); late > 5*time.Second {
				t.Errorf("every image read %v after the server answered again, want within 5 s", late)
			}
			if reads := len(store.took()); reads > len(digests)+(int(failing/maxImageRetry)+5)*2*imageReaders {
				t.Errorf("%d reads, a flood", reads)
			}
		})
	}
}

// refusing is a store that refuses every read, as under a payload whose RBAC does not grant them.
type refusing struct{ images }

func (r *refusing) Get(_ context.Context, name string, _ metav1.GetOptions) (*imagev1.Image, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, name)
	return nil, apierrors.NewForbidden(imagev1.Resource("images"), name, errors.New("RBAC: access denied"))
}

// TestARefusedReadBacksOffLongUntilTheNodesChange: a refusal is not retried within seconds, as
// a busy server's failure is, but after refusedRetry, doubling; a change of the nodes lets the
// next sync read at once.
func TestARefusedReadBacksOffLongUntilTheNodesChange(t *testing.T) {
	store := &refusing{}
	clock := testingclock.NewFakeClock(time.Now())
	archs := NewImageArchitectures(store)
	archs.backoff = flowcontrol.NewFakeBackOff(imageRetry, maxImageRetry, clock)
	digests := []string{"sha256:a", "sha256:b", "sha256:c", "sha256:d", "sha256:e", "sha256:f"}
	ctx := context.Background()

	if _, retryIn, err := archs.Of(ctx, digests); !apierrors.IsForbidden(err) || retryIn != refusedRetry {
		t.Fatalf("a refusal: retry in %v, err %v; want %v and the refusal", retryIn, err, refusedRetry)
	}
	clock.Step(refusedRetry - time.Second)
	if _, retryIn, _ := archs.Of(ctx, digests); retryIn != time.Second {
		t.Errorf("before the retry: retry in %v, want 1s", retryIn)
	}
	if reads := store.took(); len(reads) > 2*imageReaders {
		t.Errorf("%d reads, want at most %d", len(reads), 2*imageReaders)
	}
	clock.Step(time.Second)
	if _, retryIn, _ := archs.Of(ctx, digests); retryIn != 2*refusedRetry {
		t.Errorf("a second refusal: retry in %v, want %v", retryIn, 2*refusedRetry)
	}
	if reads := store.took(); len(reads) == 0 {
		t.Error("no read once the backoff passed")
	}

	archs.LookAgainAll()
	if _, retryIn, _ := archs.Of(ctx, digests); retryIn != refusedRetry {
		t.Errorf("after the nodes changed: retry in %v, want %v", retryIn, refusedRetry)
	}
	if reads := store.took(); len(reads) == 0 {
		t.Error("no read after the nodes changed")
	}
}

// TestAFailedReadKeepsWhatWasRead: architectures read before stay through reads that fail.
func TestAFailedReadKeepsWhatWasRead(t *testing.T) {
	store := &images{archs: map[string]string{"a": "amd64", "b": "arm64"}, failed: map[string]bool{}}
	archs := NewImageArchitectures(store)
	ctx := context.Background()
	if _, _, err := archs.Of(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	store.failed["b"] = true
	got, retryIn, err := archs.Of(ctx, []string{"a", "b"})
	if want := map[string][]string{"a": {"amd64"}}; err == nil || retryIn <= 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("a failed read: %v, retry in %v, err %v; want %v, a retry and the error", got, retryIn, err, want)
	}
}

// TestASyncWithNothingNewToReadLeavesTheBackoffAsItIs: while one image's reads fail, a sync may
// ask only for images read before (the stream whose tag failed moved back). Nothing is read, no
// retry is due for it, and the backoff stands: the failing image is not asked for again sooner.
func TestASyncWithNothingNewToReadLeavesTheBackoffAsItIs(t *testing.T) {
	store := &images{archs: map[string]string{"a": "amd64", "b": "arm64"}, failed: map[string]bool{}}
	clock := testingclock.NewFakeClock(time.Now())
	archs := NewImageArchitectures(store)
	archs.backoff = flowcontrol.NewFakeBackOff(imageRetry, maxImageRetry, clock)
	ctx := context.Background()
	if _, _, err := archs.Of(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	store.failed["b"] = true
	if _, retryIn, err := archs.Of(ctx, []string{"a", "b"}); err == nil || retryIn != imageRetry {
		t.Fatalf("b's read failing: retry in %v, err %v; want %v and the error", retryIn, err, imageRetry)
	}
	store.took()

	clock.Step(imageRetry / 5)
	got, retryIn, err := archs.Of(ctx, []string{"a"})
	if want := map[string][]string{"a": {"amd64"}}; err != nil || retryIn != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("only a asked for: %v, retry in %v, err %v; want %v and no retry", got, retryIn, err, want)
	}
	clock.Step(imageRetry / 5)
	if _, retryIn, _ := archs.Of(ctx, []string{"a", "b"}); retryIn != imageRetry*3/5 {
		t.Errorf("b asked for again within its backoff: retry in %v, want %v", retryIn, imageRetry*3/5)
	}
	if reads := store.took(); len(reads) != 0 {
		t.Errorf("read %v within the backoff, want nothing", reads)
	}
}
