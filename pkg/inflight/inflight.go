// Package inflight remembers a controller's own writes that its informer has not delivered yet,
// so that a sync in between decides neither on the object the write replaced nor, when the
// event is very late, on the cache at all. A create is the write that replaced nothing: its
// "before" is resourceVersion "", which is also what a cache without the object shows.
package inflight

import (
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
)

// Grace is how long the cache may show what a write replaced before the server is asked what is
// there. Informers deliver an event within milliseconds, but seconds late behind a loaded or
// aggregated API server: a write decided on the cache before its event would be sent again and
// meet AlreadyExists or a conflict. Past the grace the cache is not believed blindly either: the
// server's copy is decided on (Stale), once per grace, until the cache shows the write or the
// server agrees with the cache.
const Grace = 5 * time.Second

// CacheView is what the informer cache is worth for deciding on an object the controller wrote.
type CacheView int

const (
	// Current: the cache shows the controller's last write of the object, or something newer.
	Current CacheView = iota
	// Behind: the cache still shows what the last write replaced; its event is on the way.
	Behind
	// Stale: the cache still shows what the last write replaced after Grace: decide on the
	// server's copy, not on the cache.
	Stale
)

// write is one write the cache has not shown yet.
type write struct {
	replaced  string    // the resourceVersion the write replaced; "" for a create
	lastAsked time.Time // when the server was last asked for want of the cache; the write's time before that
}

// Tracker holds the writes, by key, that the cache has not shown yet. Safe for concurrent workers.
type Tracker struct {
	clock  clock.PassiveClock
	mu     sync.Mutex
	writes map[string]write
}

// New returns an empty tracker that reads time from clk.
func New(clk clock.PassiveClock) *Tracker {
	return &Tracker{clock: clk, writes: map[string]write{}}
}

// Wrote records an accepted write of key that replaced resourceVersion replaced ("" for a create).
func (t *Tracker) Wrote(key, replaced string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.writes[key] = write{replaced: replaced, lastAsked: t.clock.Now()}
}

// View says whether the cache, which shows key at cachedResourceVersion ("" when it shows no such
// object), can be decided on: Behind while it still shows what the last write replaced, with how
// long until the server is asked instead (the write's event brings the key back sooner); Stale
// when that time has come, and again a grace later. Once the cache shows anything else the write
// is forgotten.
func (t *Tracker) View(key, cachedResourceVersion string) (time.Duration, CacheView) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.writes[key]
	if !ok {
		return 0, Current
	}
	if cachedResourceVersion != w.replaced {
		delete(t.writes, key)
		return 0, Current
	}
	if left := Grace - t.clock.Since(w.lastAsked); left > 0 {
		return left, Behind
	}
	w.lastAsked = t.clock.Now()
	t.writes[key] = w
	return 0, Stale
}

// ServerAgrees records that the server's copy of key, read for a Stale cache, is the one the
// cache shows (after a create: the object is gone from both, deleted since and its events merged
// away): the cache is right after all.
func (t *Tracker) ServerAgrees(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.writes, key)
}

// Object is what Lookup needs of an object: *corev1.ConfigMap and every other API object has it.
type Object interface{ GetResourceVersion() string }

// Lookup finds key's object in the cache, or on the server when the cache is Stale. wait > 0
// says the cache is Behind the controller's last write: look again then rather than write once
// more (after a create, the object is absent with a NotFound error). A NotFound error with wait 0
// means the object is not there.
func Lookup[T Object](t *Tracker, key string, fromCache, fromServer func() (T, error)) (obj T, wait time.Duration, err error) {
	var none T
	cached, cachedRV, err := read(fromCache)
	if err != nil && !apierrors.IsNotFound(err) {
		return none, 0, err
	}
	wait, view := t.View(key, cachedRV)
	if view != Stale {
		return cached, wait, err
	}
	server, serverRV, err := read(fromServer)
	if err != nil && !apierrors.IsNotFound(err) {
		return none, 0, err
	}
	if serverRV == cachedRV {
		t.ServerAgrees(key)
	}
	return server, 0, err
}

// read returns get's object and its resourceVersion; on an error, no object and "".
func read[T Object](get func() (T, error)) (obj T, resourceVersion string, err error) {
	if obj, err = get(); err != nil {
		var none T
		return none, "", err
	}
	return obj, obj.GetResourceVersion(), nil
}
