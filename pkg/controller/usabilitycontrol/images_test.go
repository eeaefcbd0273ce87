package usabilitycontrol

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

// TestEachImageIsReadOnce: a digest is read when first asked for, never again while asked for
// (a missing image neither); one no longer asked for is forgotten; a failed read is tried again.
func TestEachImageIsReadOnce(t *testing.T) {
	store := &images{archs: map[string]string{"a": "amd64", "b": "s390x"}, failed: map[string]bool{"c": true}}
	archs := NewImageArchitectures(store)
	ctx := context.Background()

	got, err := archs.Of(ctx, []string{"a", "b", "c", "gone"})
	if err == nil {
		t.Error("a failed read is no error")
	}
	if want := map[string][]string{"a": {"amd64"}, "b": {"s390x"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("first: %v, want %v", got, want)
	}
	if reads := store.took(); !reflect.DeepEqual(reads, []string{"a", "b", "c", "gone"}) {
		t.Errorf("first reads %v", reads)
	}

	store.failed = nil
	got, err = archs.Of(ctx, []string{"a", "c", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if reads := store.took(); !reflect.DeepEqual(reads, []string{"c"}) {
		t.Errorf("second reads %v, want only the one that failed", reads)
	}
	if want := map[string][]string{"a": {"amd64"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("second: %v, want %v", got, want)
	}
	if _, err := archs.Of(ctx, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if reads := store.took(); !reflect.DeepEqual(reads, []string{"b"}) {
		t.Errorf("a digest asked for again after it was forgotten: reads %v, want [b]", reads)
	}
}
