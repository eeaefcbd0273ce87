package usabilitycontrol

import (
	"context"
	"sync"

	imagev1 "github.com/openshift/api/image/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// ImageGetter reads one Image (images.image.openshift.io) by its digest.
type ImageGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*imagev1.Image, error)
}

// imageReaders bound the reads of a sync that meets many new digests (a first install).
const imageReaders = 4

// ImageArchitectures are the architectures of the images the samples' tags point at. An image
// is immutable under its digest, so each is read once, when a tag first points at it, and kept
// while a tag still does: no sync reads an image it has read before.
type ImageArchitectures struct {
	images ImageGetter
	mu     sync.Mutex
	// known holds each digest read: its architectures, or nil when the image is not there (pruned,
	// or not served: nothing to judge by).
	known map[string][]string
}

// NewImageArchitectures reads images through images.
func NewImageArchitectures(images ImageGetter) *ImageArchitectures {
	return &ImageArchitectures{images: images, known: map[string][]string{}}
}

// Of returns the architectures of each of digests that could be read, reading those never read
// before, and forgets the digests no longer asked for. An error other than NotFound leaves the
// digest unknown, to be read again at the next sync.
func (a *ImageArchitectures) Of(ctx context.Context, digests []string) (map[string][]string, error) {
	a.mu.Lock()
	var missing []string
	wanted := map[string]bool{}
	for _, d := range digests {
		wanted[d] = true
		if _, ok := a.known[d]; !ok {
			missing = append(missing, d)
		}
	}
	a.mu.Unlock()

	var firstErr error
	var errMu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(imageReaders, len(missing)) {
		wg.Go(func() {
			for d := range work {
				img, err := a.images.Get(ctx, d, metav1.GetOptions{})
				var archs []string
				switch {
				case err == nil:
					archs = usability.ArchitecturesOf(img)
				case !apierrors.IsNotFound(err):
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					continue
				}
				a.mu.Lock()
				a.known[d] = archs
				a.mu.Unlock()
			}
		})
	}
	for _, d := range missing {
		work <- d
	}
	close(work)
	wg.Wait()

	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string][]string{}
	for d, archs := range a.known {
		switch {
		case !wanted[d]:
			delete(a.known, d)
		case len(archs) > 0:
			out[d] = archs
		}
	}
	return out, firstErr
}
