// Package ownwrites lets a controller decide on its own writes before its informer shows them.
// It is client-go's mutation cache (cache.NewIntegerResourceVersionMutationCache) with the
// controllers' typed reads: a sync between a create or update and its event sees the server's
// answer to the write, not what the write replaced, and so sends the write neither twice
// (AlreadyExists) nor on the old object (a conflict). A delete is not remembered: a sync before
// its event finds the object still there and may delete it again, which the writers send with
// preconditions and take NotFound from as done.
package ownwrites

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// TTL is how long a write is believed over an informer that does not show it yet. The entry goes
// at the first read after the informer shows the write (client-go's mutation cache drops a write
// the informer has caught up with), so TTL matters only while the informer lags: a write decided
// on a lagging informer would be sent twice (AlreadyExists, a conflict). Informers deliver an
// event within milliseconds, but behind a loaded API server they were seen more than 10 s late
// (an integration run on two cores at load 20 created a stream twice with a TTL of 10 s), so
// TTL is far longer than any lag worth waiting out. Its cost is one case only: an object created
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
	writes    cache.MutationCache
	namespace string
	resource  schema.GroupResource
}

// New reads the objects of resource in namespace from informed, an informer's store, and the
// writes it is told of.
func New[T runtime.Object](informed cache.Store, namespace string, resource schema.GroupResource) *Cache[T] {
	return &Cache[T]{
		informed:  informed,
		writes:    cache.NewIntegerResourceVersionMutationCache(klog.Background(), informed, nil, TTL, true),
		namespace: namespace,
		resource:  resource,
	}
}

// Get returns name's object, NotFound when neither the informer nor a write has it. unseen says
// the object is the controller's own create, which the informer does not show yet: its add event
// brings it back, but should the object have been deleted since (its events merged away), only a
// look after TTL finds it gone; callers look again every Recheck until then.
func (c *Cache[T]) Get(name string) (obj T, unseen bool, err error) {
	key := c.namespace + "/" + name
	found, exists, err := c.writes.GetByKey(key)
	if err == nil && !exists {
		err = apierrors.NewNotFound(c.resource, name)
	}
	if err != nil {
		return obj, false, err
	}
	if _, informed, _ := c.informed.GetByKey(key); !informed {
		unseen = true
	}
	return found.(T), unseen, nil
}

// Wrote records the server's answer to a create or update. The object is kept, not copied, and
// its managedFields are dropped, as the operator's informers drop them; any other trimming an
// informer does is the caller's to do first.
func (c *Cache[T]) Wrote(obj T) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	c.writes.Mutation(obj)
}
