// Package ownwrites lets a controller decide on its own writes before its informer shows them:
// every sync between a create or update and its event sees the server's answer to the write, not
// what the write replaced, and so sends the write neither twice (AlreadyExists) nor on the old
// object (a conflict). A delete is not remembered: a sync before its event finds the object still
// there and may delete it again, which the writers send with preconditions and take NotFound from
// as done.
//
// It does not use client-go's mutation cache (cache.NewIntegerResourceVersionMutationCache): with
// includeAdds, a read of a create the informer does not show yet compares the write with itself,
// takes it for caught up and drops it, so that only the first sync after a create saw it and the
// next one created the object again.
package ownwrites

import (
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// TTL is how long a write is believed over an informer that does not show it yet. The entry goes
// at the first read after the informer shows the write or a newer version of the object, so TTL
// matters only while the informer lags: a write decided on a lagging informer would be sent
// twice (AlreadyExists, a conflict). Informers deliver an event within milliseconds, but behind
// a loaded API server they were seen more than 10 s late (an integration run on two cores at load
// 20 created a stream twice with a TTL of 10 s), so TTL is far longer than any lag worth waiting
// out. Its cost is one case only: an object created
// and deleted while a watch was down, never shown by the informer, is believed for up to TTL.
const TTL = 2 * time.Minute

// Recheck is how soon a controller looks again at its own write that its informer does not show:
// the add event normally brings the controller back first; should the object have been deleted
// meanwhile, unseen, the look after TTL finds it gone.
const Recheck = 10 * time.Second

// Cache reads the objects of one namespace as the newer of the informer's copy and the
// controller's last write. Safe for concurrent workers.
type Cache[T runtime.Object] struct {
	informed  cache.Store
	namespace string
	resource  schema.GroupResource

	mu     sync.Mutex
	writes map[string]write // by namespace/name
}

// write is the server's answer to a create or update, believed until expires.
type write struct {
	obj     runtime.Object
	version uint64
	expires time.Time
}

// New reads the objects of resource in namespace from informer's store, and the writes it is
// told of; the informer's deletes forget the writes of the objects deleted (Deleted).
func New[T runtime.Object](informer cache.SharedIndexInformer, namespace string, resource schema.GroupResource) *Cache[T] {
	c := NewForStore[T](informer.GetStore(), namespace, resource)
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.Deleted}); err != nil {
		// Only a stopped informer refuses a handler, and then no controller reads this cache.
		klog.ErrorS(err, "Own writes will not be forgotten on delete events", "resource", resource.String())
	}
	return c
}

// NewForStore is New over a store with no informer: nothing tells it of deletes (Deleted may be
// called by hand).
func NewForStore[T runtime.Object](informed cache.Store, namespace string, resource schema.GroupResource) *Cache[T] {
	return &Cache[T]{
		informed:  informed,
		namespace: namespace,
		resource:  resource,
		writes:    map[string]write{},
	}
}

// Get returns name's object, NotFound when neither the informer nor a write has it. unseen says
// the object is the controller's own create, which the informer does not show yet: its add event
// brings it back, but should the object have been deleted since (its events merged away), only a
// look after TTL finds it gone; callers look again every Recheck until then.
//
// A write is returned at every read until the informer shows it or a newer version of the
// object (by resourceVersion), and then forgotten.
func (c *Cache[T]) Get(name string) (obj T, unseen bool, err error) {
	key := c.namespace + "/" + name
	c.mu.Lock()
	defer c.mu.Unlock()
	informed, exists, err := c.informed.GetByKey(key)
	if err != nil {
		return obj, false, err
	}
	w, wrote := c.writes[key]
	if wrote && time.Now().After(w.expires) {
		delete(c.writes, key)
		wrote = false
	}
	switch {
	case exists && wrote && versionOf(informed) >= w.version:
		delete(c.writes, key) // the informer has caught up with the write
		return informed.(T), false, nil
	case exists && wrote:
		return w.obj.(T), false, nil
	case exists:
		return informed.(T), false, nil
	case wrote:
		return w.obj.(T), true, nil
	}
	return obj, false, apierrors.NewNotFound(c.resource, name)
}

// Wrote records the server's answer to a create or update. The object is kept, not copied, and
// its managedFields are dropped, as the operator's informers drop them; any other trimming an
// informer does is the caller's to do first. An answer older than a write already recorded
// (workers' answers may arrive out of order) is ignored.
func (c *Cache[T]) Wrote(obj T) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	m.SetManagedFields(nil)
	key := m.GetNamespace() + "/" + m.GetName()
	version := versionOf(obj)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for k, w := range c.writes { // few entries: one per object written within TTL
		if now.After(w.expires) {
			delete(c.writes, k)
		}
	}
	if w, wrote := c.writes[key]; wrote && w.version > version {
		return
	}
	c.writes[key] = write{obj: obj, version: version, expires: now.Add(TTL)}
}

// Deleted forgets the write of an object the informer saw deleted (an informer's DeleteFunc;
// a tombstone is read through): a create deleted before the informer showed it, its add and
// delete events coming together, would otherwise be believed until TTL and its sample not
// created again for that long. A write newer than the deleted object (the controller's create
// of the next one) stays.
func (c *Cache[T]) Deleted(obj interface{}) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	key := m.GetNamespace() + "/" + m.GetName()
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, wrote := c.writes[key]; wrote && w.version <= versionOf(obj) {
		delete(c.writes, key)
	}
}

// versionOf is obj's resourceVersion as a number, which etcd's are; 0 when it has none.
func versionOf(obj interface{}) uint64 {
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	return v
}
