// Package informertest holds what the controllers' tests share to see how a controller is wired
// to its informers, and what a sync run by hand asks for and writes; the operator's binary never
// links it.
package informertest

import (
	"sync/atomic"

	"k8s.io/client-go/tools/cache"
)

// Registrations is an informer that counts the event handlers added to it. A test of a running
// controller's wiring counts them before it changes anything: a change whose handler is missing
// may still reach the controller by another path (a sync that another event brings), and pass.
type Registrations struct {
	cache.SharedIndexInformer
	Added *atomic.Int32
}

func (r Registrations) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	r.Added.Add(1)
	return r.SharedIndexInformer.AddEventHandler(h)
}
