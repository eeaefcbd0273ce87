// Package eventfilter tells what an informer event is about, tombstones included: filters that
// drop the tombstone a delete seen only on a relist arrives in miss that delete until a resync.
package eventfilter

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// ObjectOf returns the object an informer event is about, looking through the tombstone a delete
// comes in when the informer saw it only on a relist: a filter that drops tombstones misses that
// delete until the next resync.
func ObjectOf(obj interface{}) (metav1.Object, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	m, ok := obj.(metav1.Object)
	return m, ok
}

// NamesFilter passes the events of objects with these names, deletes seen on a relist included
// (library-go's factory.NamesFilter drops those).
func NamesFilter(names ...string) func(obj interface{}) bool {
	return func(obj interface{}) bool {
		m, ok := ObjectOf(obj)
		if !ok {
			return false
		}
		for _, name := range names {
			if m.GetName() == name {
				return true
			}
		}
		return false
	}
}

// Informer is what a library-go factory controller registers its handlers on
// (factory.Informer), and what a shared informer is.
type Informer interface {
	AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error)
	HasSynced() bool
}

// Updates hands the handlers registered through it the updates of inf's objects for which
// changed is true, and every add, delete and resync. Library-go's event filters see one object
// at a time and so cannot tell an update that matters from one that does not; this sees both.
// A resync (the same resourceVersion) always passes: it is the periodic safety net that brings
// every key back whatever was missed. An object of another type than T passes too.
func Updates[T any](inf Informer, changed func(old, updated T) bool) Informer {
	// A pointer: the factory keeps the informers it was given in a set, and a struct holding a
	// func cannot be hashed.
	return &updates{Informer: inf, resyncs: true, changed: func(oldObj, newObj interface{}) bool {
		o, okOld := oldObj.(T)
		n, okNew := newObj.(T)
		return !okOld || !okNew || changed(o, n)
	}}
}

// WithoutResyncs hands the handlers registered through it every add, delete and update of inf's
// objects but the resyncs. For a controller whose single key judges every object at once: each
// object's resync brings that key back, and one that comes while a sync runs queues another
// (3 to 5 whole syncs a resync period at 10x, counted). Such a controller keeps one informer of
// a single object unwrapped (the Config's): its resync is the controller's periodic safety net,
// once a period.
func WithoutResyncs(inf Informer) Informer {
	return &updates{Informer: inf, resyncs: false, changed: func(_, _ interface{}) bool { return true }}
}

type updates struct {
	Informer
	// resyncs: pass the updates that change no resourceVersion.
	resyncs bool
	changed func(oldObj, newObj interface{}) bool
}

func (u *updates) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return u.Informer.AddEventHandler(updateFilter{ResourceEventHandler: h, resyncs: u.resyncs, changed: u.changed})
}

type updateFilter struct {
	cache.ResourceEventHandler
	resyncs bool
	changed func(oldObj, newObj interface{}) bool
}

func (f updateFilter) OnUpdate(oldObj, newObj interface{}) {
	if IsResync(oldObj, newObj) {
		if f.resyncs {
			f.ResourceEventHandler.OnUpdate(oldObj, newObj)
		}
		return
	}
	if f.changed(oldObj, newObj) {
		f.ResourceEventHandler.OnUpdate(oldObj, newObj)
	}
}

// IsResync tells a resync from an update: a resync hands the cached object over again as an
// update of itself, with the same resourceVersion.
func IsResync(oldObj, newObj interface{}) bool {
	o, okOld := oldObj.(metav1.Object)
	n, okNew := newObj.(metav1.Object)
	return okOld && okNew && o.GetResourceVersion() == n.GetResourceVersion()
}
