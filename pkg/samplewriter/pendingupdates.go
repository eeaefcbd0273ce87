package samplewriter

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// PendingUpdates remembers, for each object a controller updated or deleted, the resourceVersion
// its write replaced, until the informer shows another. A sync of the same key in that window (a
// Config status write re-queues every sample; an aggregated API server's watch can lag a second
// under load) reads the object as it was before the write: deciding on it would send the same
// write again with a resourceVersion the server has moved past, and meet a conflict the cache
// could have spared. Safe for concurrent workers.
type PendingUpdates struct {
	clock    clock.PassiveClock
	mu       sync.Mutex
	replaced map[string]pendingUpdate
}

type pendingUpdate struct {
	resourceVersion string
	at              time.Time
}

// NewPendingUpdates returns an empty record that reads time from clk.
func NewPendingUpdates(clk clock.PassiveClock) *PendingUpdates {
	return &PendingUpdates{clock: clk, replaced: map[string]pendingUpdate{}}
}

// Wrote records that the controller's write of key replaced the object at resourceVersion.
func (p *PendingUpdates) Wrote(key, resourceVersion string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replaced[key] = pendingUpdate{resourceVersion: resourceVersion, at: p.clock.Now()}
}

// Behind reports whether the cache still shows key at the resourceVersion the controller's last
// write replaced, less than CreateGrace ago, and how long until the cache is believed again: the
// informer's event for the write brings the key back sooner. Any other resourceVersion (or the
// object gone from the cache) means the cache caught up.
func (p *PendingUpdates) Behind(key, cachedResourceVersion string) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.replaced[key]
	if !ok {
		return 0, false
	}
	if w.resourceVersion == cachedResourceVersion {
		if left := CreateGrace - p.clock.Since(w.at); left > 0 {
			return left, true
		}
	}
	delete(p.replaced, key)
	return 0, false
}
