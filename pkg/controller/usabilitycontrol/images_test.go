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
