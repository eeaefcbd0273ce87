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
