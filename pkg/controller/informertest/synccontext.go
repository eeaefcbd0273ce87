package informertest

import (
	"fmt"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
)

// SyncContext is the sync context of a controller's single key (factory.DefaultQueueKey) for a
// sync run by hand: its queue only records the keys the sync asks to see again later, so that a
// test sees when the controller would come back without waiting for it.
type SyncContext struct {
	factory.SyncContext
	queue *laterQueue
}

// NewSyncContext is a SyncContext recording its events on recorder.
func NewSyncContext(recorder events.Recorder) SyncContext {
	return SyncContext{SyncContext: factory.NewSyncContext("test", recorder), queue: &laterQueue{}}
}

func (s SyncContext) Queue() workqueue.RateLimitingInterface { return s.queue }
func (s SyncContext) QueueKey() string                       { return factory.DefaultQueueKey }

// Later returns the keys the syncs asked for later, each as "key after delay".
func (s SyncContext) Later() []string {
	s.queue.mu.Lock()
	defer s.queue.mu.Unlock()
	return s.queue.later
}

type laterQueue struct {
	workqueue.RateLimitingInterface
	mu    sync.Mutex
	later []string
}

func (q *laterQueue) AddAfter(key interface{}, after time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.later = append(q.later, fmt.Sprintf("%v after %s", key, after))
}

// Writes are the creates and updates among a fake clientset's actions, each as its verb and
// subresource ("create", "update status") and the object sent.
func Writes(actions []clienttesting.Action) (verbs []string, sent []runtime.Object) {
	for _, a := range actions {
		w, ok := a.(interface{ GetObject() runtime.Object })
		if !ok || a.GetVerb() != "create" && a.GetVerb() != "update" {
			continue
		}
		verb := a.GetVerb()
		if a.GetSubresource() != "" {
			verb += " " + a.GetSubresource()
		}
		verbs = append(verbs, verb)
		sent = append(sent, w.GetObject())
	}
	return verbs, sent
}
