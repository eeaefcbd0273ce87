// Package trigger tells a controller when an object it does not reconcile, but whose content
// decides how its own work turns out, really changes: an object created or deleted after the
// informer's first list, or updated in the part that counts. A resync, and an update that leaves
// that part as it was (a status write, a label), is no change.
package trigger

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/eventfilter"
)

// Informer is the part of a shared informer a trigger needs.
type Informer interface {
	AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error)
}

// Source is one kind of object whose changes count.
type Source struct {
	// Kind names the objects in logs and events ("ImageTagMirrorSet").
	Kind     string
	Informer Informer
	// Part is what of an object counts; updates that leave it semantically equal are no change.
	Part func(obj interface{}) interface{}
	// Matters, if set, picks the objects that count at all (a secret of a docker config type).
	Matters func(obj interface{}) bool
	// Again, if set, asks for the change to be acted on a second time that long after: the
	// change takes effect where it is read only later (the pull secret reaches the nodes through
	// a machine-config rollout).
	Again time.Duration
	// Settled, if set, makes the source tell of one change only: an update from an object it
	// is false for to one it is true for (a rollout that ends). Part and Matters are then
	// unused, and creates and deletes are no change.
	Settled func(obj interface{}) bool
}

// Change says what changed.
type Change struct {
	Kind, Namespace, Name string
	// Verb is "created", "updated", "deleted" or "settled".
	Verb  string
	Again time.Duration
}

// Watch calls f, which must not block, on every change of the sources' objects.
func Watch(sources []Source, f func(Change)) error {
	for _, s := range sources {
		if s.Informer == nil {
			continue
		}
		if _, err := s.Informer.AddEventHandler(handler(s, f)); err != nil {
			return err
		}
	}
	return nil
}

func handler(s Source, f func(Change)) cache.ResourceEventHandler {
	tell := func(obj interface{}, verb string) {
		m, ok := eventfilter.ObjectOf(obj)
		if !ok {
			return
		}
		klog.V(2).InfoS("A change that can alter the outcome", "kind", s.Kind, "namespace", m.GetNamespace(), "name", m.GetName(), "verb", verb)
		f(Change{Kind: s.Kind, Namespace: m.GetNamespace(), Name: m.GetName(), Verb: verb, Again: s.Again})
	}
	if s.Settled != nil {
		return cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(oldObj, newObj interface{}) {
				if !eventfilter.IsResync(oldObj, newObj) && !s.Settled(oldObj) && s.Settled(newObj) {
					tell(newObj, "settled")
				}
			},
		}
	}
	matters := func(obj interface{}) bool {
		if s.Matters == nil {
			return true
		}
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		return s.Matters(obj)
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj interface{}, isInInitialList bool) {
			// The first list delivers what was there before the controller started: no change.
			if !isInInitialList && matters(obj) {
				tell(obj, "created")
			}
		},
		UpdateFunc: func(oldObj, newObj interface{}) {
			if !matters(oldObj) && !matters(newObj) || eventfilter.IsResync(oldObj, newObj) {
				return
			}
			if matters(oldObj) != matters(newObj) || !equality.Semantic.DeepEqual(s.Part(oldObj), s.Part(newObj)) {
				tell(newObj, "updated")
			}
		},
		DeleteFunc: func(obj interface{}) {
			if matters(obj) {
				tell(obj, "deleted")
			}
		},
	}
}
