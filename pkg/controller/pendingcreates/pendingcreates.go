// Package pendingcreates remembers the objects a controller created whose add event its informer
// has not delivered yet (the sample writer keeps its own record of this, pkg/samplewriter).
package pendingcreates

import (
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
)

// Grace is how long an object a controller created may stay unseen by its informer before the
// controller asks the server whether it is there. Informers deliver an add within milliseconds,
// but seconds late on a loaded control plane; a controller that believed the cache after a fixed
// time would create the object again and meet AlreadyExists.
const Grace = 5 * time.Second

// Tracker remembers the objects a controller created whose add event its informer has not
// delivered yet. A second sync of the same key in that window (a Config event re-queues every
// sample) finds nothing in the cache; without this it would create the object again and meet
// AlreadyExists, a write the cache could have spared. Safe for concurrent workers.
type Tracker struct {
	clock   clock.PassiveClock
	mu      sync.Mutex
	created map[string]time.Time // when created, or when the server was last asked
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

// unseen reports whether key was created without the informer showing it yet, and how long
// until the server is asked (0 and true: now; the record is kept, and the server asked again a
// grace later should the cache still lack it).
func (p *Tracker) unseen(key string) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.created[key]
	if !ok {
		return 0, false
	}
	if left := Grace - p.clock.Since(at); left > 0 {
		return left, true
	}
	p.created[key] = p.clock.Now()
	return 0, true
}

// Lookup finds key's object: in the cache, or, when the cache lacks an object the controller
// created, on the server once its add event is overdue. wait > 0 (with a NotFound error) says
// the add event is on the way: look again then rather than create the object a second time. A
// NotFound error with wait 0 means the object is not there.
func Lookup[T any](p *Tracker, key string, fromCache, fromServer func() (T, error)) (obj T, wait time.Duration, err error) {
	var none T
	cached, err := fromCache()
	if err == nil {
		p.Seen(key)
		return cached, 0, nil
	}
	if !apierrors.IsNotFound(err) {
		return none, 0, err
	}
	wait, unseen := p.unseen(key)
	switch {
	case !unseen:
		return none, 0, err
	case wait > 0:
		return none, wait, err
	}
	server, serverErr := fromServer()
	if apierrors.IsNotFound(serverErr) {
		p.Seen(key) // deleted since it was created, and its events merged away
	}
	if serverErr != nil {
		return none, 0, serverErr
	}
	return server, 0, nil
}
