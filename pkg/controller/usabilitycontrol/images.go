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
	// After a read fails (the server busy, or not answering for a moment), no image is read for
	// imageRetry, doubling up to maxImageRetry while reads keep failing: a tag is judged within
	// seconds of the server answering again. At 30 s doubling to 5 minutes, whole streams whose
	// reads failed during their imports stayed unjudged for minutes (issue 56).
	imageRetry    = 500 * time.Millisecond
	maxImageRetry = 4 * time.Second
	// A read refused (Forbidden, Unauthorized: a payload of another version, or RBAC an admin
	// trimmed) is refused again at once: no image is read for refusedRetry, doubling up to
	// maxRefusedRetry, else such a cluster would be asked once per digest at every import.
	refusedRetry    = 30 * time.Second
	maxRefusedRetry = 5 * time.Minute
	backoffKey      = "images"
)

// ImageArchitectures are the architectures of the images the samples' tags point at. An image
// is immutable under its digest, so each is read once, when a tag first points at it, and kept
// while a tag still does: no sync reads an image it has read before.
type ImageArchitectures struct {
	images ImageGetter
	// backoff spaces the reads after a failure, refusals after a refusal; retryAt is when the
	// next read may be made. Both run on backoff's clock.
	backoff  *flowcontrol.Backoff
	refusals *flowcontrol.Backoff
	mu       sync.Mutex
	retryAt  time.Time
	// known holds each digest read: its architectures (none when the image names none).
	known map[string][]string
	// absent are the digests answered NotFound: not a fact about the image, which an import may
	// write yet, or a server that serves no images never will. Each is read again only after
	// LookAgain or LookAgainAll: the server is not asked at every sync for what it lacks.
	absent map[string]bool
}

// NewImageArchitectures reads images through images.
func NewImageArchitectures(images ImageGetter) *ImageArchitectures {
	return &ImageArchitectures{
		images:   images,
		backoff:  flowcontrol.NewBackOff(imageRetry, maxImageRetry),
		refusals: flowcontrol.NewBackOff(refusedRetry, maxRefusedRetry),
		known:    map[string][]string{},
		absent:   map[string]bool{},
	}
}

// LookAgain has the next Of read again those of digests answered NotFound: the sync calls it
// for the digests of a stream that changed, as a new import may have written the image since.
func (a *ImageArchitectures) LookAgain(digests ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, d := range digests {
		delete(a.absent, d)
	}
}

// LookAgainAll has the next Of read at once every digest it does not know, whatever failed or
// was NotFound before: when the nodes' architectures change, every tag must be judged anew.
func (a *ImageArchitectures) LookAgainAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.absent)
	a.retryAt = time.Time{}
	a.backoff.Reset(backoffKey)
	a.refusals.Reset(backoffKey)
}

// Of returns the architectures of each of digests that could be read, reading those never read
// before, and forgets the digests no longer asked for. An error other than NotFound stops the
// reads and leaves the digests not read unknown; retryIn then says when Of reads again (until
// then it reads nothing). A digest answered NotFound stays unknown until LookAgain.
func (a *ImageArchitectures) Of(ctx context.Context, digests []string) (archs map[string][]string, retryIn time.Duration, err error) {
	now := a.backoff.Clock.Now()
	a.mu.Lock()
	var missing []string
	wanted := map[string]bool{}
	for _, d := range digests {
		if wanted[d] {
			continue // tags of one stream often point at one image
		}
		wanted[d] = true
		if _, ok := a.known[d]; !ok && !a.absent[d] {
			missing = append(missing, d)
		}
	}
	retryAt := a.retryAt
	a.mu.Unlock()

	if len(missing) > 0 && now.Before(retryAt) {
		retryIn = retryAt.Sub(now)
	} else if len(missing) > 0 {
		err = a.read(ctx, missing)
		a.mu.Lock()
		switch {
		case err == nil:
			a.retryAt = time.Time{}
			a.backoff.Reset(backoffKey)
			a.refusals.Reset(backoffKey)
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			a.refusals.Next(backoffKey, now)
			retryIn = a.refusals.Get(backoffKey)
		default:
			a.backoff.Next(backoffKey, now)
			retryIn = a.backoff.Get(backoffKey)
		}
		if retryIn > 0 {
			a.retryAt = now.Add(retryIn)
		}
		a.mu.Unlock()
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	for d := range a.absent {
		if !wanted[d] {
			delete(a.absent, d)
		}
	}
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
				switch {
				case err == nil:
					archs := usability.ArchitecturesOf(img)
					a.mu.Lock()
					a.known[d] = archs
					a.mu.Unlock()
				case apierrors.IsNotFound(err):
					a.mu.Lock()
					a.absent[d] = true
					a.mu.Unlock()
				default:
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
						stop()
					}
					errMu.Unlock()
				}
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
