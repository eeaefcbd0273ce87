package usabilitycontrol

import (
	"context"
	"sync"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// ImageGetter reads one Image (images.image.openshift.io) by its digest.
type ImageGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*imagev1.Image, error)
}

const (
	// imageReaders bound the reads of a sync that meets many new digests (a first install).
	imageReaders = 4
	// After a read fails, no image is read for imageRetry, doubling up to maxImageRetry while
	// reads keep failing: a cluster that does not let the operator read images (a payload of
	// another version, or RBAC an admin trimmed) would otherwise be asked once per digest at
	// every import.
	imageRetry    = 30 * time.Second
	maxImageRetry = 5 * time.Minute
	backoffKey    = "images"
)

// ImageArchitectures are the architectures of the images the samples' tags point at. An image
// is immutable under its digest, so each is read once, when a tag first points at it, and kept
// while a tag still does: no sync reads an image it has read before.
type ImageArchitectures struct {
	images  ImageGetter
	backoff *flowcontrol.Backoff
	mu      sync.Mutex
	// known holds each digest read: its architectures, or nil when the image is not there (pruned,
	// or not served: nothing to judge by).
	known map[string][]string
}

// NewImageArchitectures reads images through images.
func NewImageArchitectures(images ImageGetter) *ImageArchitectures {
	return &ImageArchitectures{
		images:  images,
		backoff: flowcontrol.NewBackOff(imageRetry, maxImageRetry),
		known:   map[string][]string{},
	}
}

// Of returns the architectures of each of digests that could be read, reading those never read
// before, and forgets the digests no longer asked for. An error other than NotFound stops the
// reads and leaves the digests not read unknown; retryIn then says when Of reads again (until
// then it reads nothing).
func (a *ImageArchitectures) Of(ctx context.Context, digests []string) (archs map[string][]string, retryIn time.Duration, err error) {
	a.mu.Lock()
	var missing []string
	wanted := map[string]bool{}
	for _, d := range digests {
		if wanted[d] {
			continue // tags of one stream often point at one image
		}
		wanted[d] = true
		if _, ok := a.known[d]; !ok {
			missing = append(missing, d)
		}
	}
	a.mu.Unlock()

	if len(missing) > 0 && a.backoff.IsInBackOffSinceUpdate(backoffKey, a.backoff.Clock.Now()) {
		missing = nil
		retryIn = a.backoff.Get(backoffKey)
	} else if len(missing) > 0 {
		if err = a.read(ctx, missing); err != nil {
			a.backoff.Next(backoffKey, a.backoff.Clock.Now())
			retryIn = a.backoff.Get(backoffKey)
		} else {
			a.backoff.Reset(backoffKey)
		}
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	archs = map[string][]string{}
	for d, known := range a.known {
		switch {
		case !wanted[d]:
			delete(a.known, d)
		case len(known) > 0:
			archs[d] = known
		}
	}
	return archs, retryIn, err
}

// read reads digests, imageReaders at a time, and stops at the first error other than NotFound.
func (a *ImageArchitectures) read(ctx context.Context, digests []string) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var firstErr error
	var errMu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(imageReaders, len(digests)) {
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
						stop()
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
feed:
	for _, d := range digests {
		select {
		case work <- d:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return firstErr
}
