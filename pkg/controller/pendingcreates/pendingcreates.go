// Package pendingcreates remembers the objects a controller created whose add event its informer
// has not delivered yet (the sample writer keeps its own record of this, pkg/samplewriter).
package pendingcreates

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Grace is how long an object a controller created may stay unseen by its informer before
// the controller believes the cache again. Informers deliver an add within milliseconds (a second
// or so behind an aggregated API server under load); should the add never come (the object was
// deleted again and both events were merged away), the object is created again after this.
const Grace = 5 * time.Second

// Tracker remembers the objects a controller created whose add event its informer has not
// delivered yet. A second sync of the same key in that window (a Config event re-queues every
// sample) finds nothing in the cache; without this it would create the object again and meet
// AlreadyExists, a write the cache could have spared. Safe for concurrent workers.
type Tracker struct {
	clock   clock.PassiveClock
	mu      sync.Mutex
	created map[string]time.Time
}

// New returns an empty record that reads time from clk.
func New(clk clock.PassiveClock) *Tracker {
	return &Tracker{clock: clk, created: map[string]time.Time{}}
}

// Created records that the controller created key.
func (p *Tracker) Created(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created[key] = p.clock.Now()
}

// Seen records that the informer shows key: the cache tells the truth about it again.
func (p *Tracker) Seen(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.created, key)
}

// Unseen reports whether key was created less than Grace ago without the informer showing
// it yet, and how long until the cache is believed again; the caller should look again then
// rather than create it a second time.
func (p *Tracker) Unseen(key string) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.created[key]
	if !ok {
		return 0, false
	}
	if left := Grace - p.clock.Since(at); left > 0 {
		return left, true
	}
	delete(p.created, key)
	return 0, false
}
