package fanout

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
)

// seen records what a handler was told, in order.
type seen struct {
	mu     sync.Mutex
	events []string
}

func (s *seen) handler() cache.ResourceEventHandler {
	record := func(e string) { s.mu.Lock(); s.events = append(s.events, e); s.mu.Unlock() }
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj interface{}, _ bool) { record("add " + obj.(*corev1.ConfigMap).Name) },
		UpdateFunc: func(_, obj interface{}) { record("update " + obj.(*corev1.ConfigMap).Name) },
		DeleteFunc: func(obj interface{}) { record("delete " + obj.(*corev1.ConfigMap).Name) },
	}
}

func (s *seen) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEveryHandlerSeesEveryEventThroughOneRegistration: handlers added before the start and
// after the first list both see each object's events in order; a removed one sees no more; the
// wrapped informer has one handler.
func TestEveryHandlerSeesEveryEventThroughOneRegistration(t *testing.T) {
	source := fcache.NewFakeControllerSource()
	cm := func(name, data string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: map[string]string{"k": data}}
	}
	source.Add(cm("a", "1"))
	inner := cache.NewSharedIndexInformer(source, &corev1.ConfigMap{}, 0, cache.Indexers{})
	shared := Wrap(inner)

	var early1, early2, late, removed seen
	reg1, _ := shared.AddEventHandler(early1.handler())
	if _, err := shared.AddEventHandler(early2.handler()); err != nil {
		t.Fatal(err)
	}
	gone, _ := shared.AddEventHandler(removed.handler())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inner.RunWithContext(ctx)
	waitFor(t, "the first list", func() bool { return reg1.HasSynced() })

	regLate, _ := shared.AddEventHandler(late.handler())
	if !regLate.HasSynced() || fmt.Sprint(late.get()) != "[add a]" {
		t.Fatalf("a handler added after the list: synced %v, told %v; want synced, [add a]", regLate.HasSynced(), late.get())
	}
	if err := shared.RemoveEventHandler(gone); err != nil {
		t.Fatal(err)
	}
	source.Modify(cm("a", "2"))
	source.Add(cm("b", "1"))
	source.Delete(cm("a", "2"))
	want := "[add a update a add b delete a]"
	for name, s := range map[string]*seen{"early1": &early1, "early2": &early2} {
		waitFor(t, name+"'s events", func() bool { return len(s.get()) == 4 })
		if got := fmt.Sprint(s.get()); got != want {
			t.Errorf("%s was told %s, want %s", name, got, want)
		}
	}
	waitFor(t, "late's events", func() bool { return len(late.get()) == 4 })
	if got := fmt.Sprint(late.get()); got != want {
		t.Errorf("late was told %s, want %s", got, want)
	}
	if got := fmt.Sprint(removed.get()); got != "[add a]" {
		t.Errorf("the removed handler was told %s after its removal", got)
	}
}
