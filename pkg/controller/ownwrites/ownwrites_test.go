package ownwrites

import (
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// newCache returns a Cache and the informer's store it reads, which the test fills with what the
// informer has delivered.
func newCache() (*Cache[*corev1.ConfigMap], cache.Store) {
	informed := cache.NewStore(cache.MetaNamespaceKeyFunc)
	return NewForStore[*corev1.ConfigMap](informed, "ns", corev1.Resource("configmaps")), informed
}

func configMap(resourceVersion, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "python", ResourceVersion: resourceVersion},
		Data:       map[string]string{"v": data},
	}
}

// get is Get's object as "resourceVersion data", or the error's reason.
func get(t *testing.T, c *Cache[*corev1.ConfigMap]) (got string, unseen bool) {
	t.Helper()
	cm, unseen, err := c.Get("python")
	if err != nil {
		return string(apierrors.ReasonForError(err)), unseen
	}
	return cm.ResourceVersion + " " + cm.Data["v"], unseen
}

// TestACreateIsSeenAtEveryReadBeforeItsAddEvent plays what an integration run showed (nodejs,
// created at resourceVersion 1043): a sync created the stream; a Config status write brought
// every key back, and the stream's sync found the create; the keys came back once more before the
// add event, and that sync found nothing and created the stream again (AlreadyExists). The
// create is shown to every read until the informer shows it, not only to the first.
func TestACreateIsSeenAtEveryReadBeforeItsAddEvent(t *testing.T) {
	c, informed := newCache()
	if got, _ := get(t, c); got != string(metav1.StatusReasonNotFound) {
		t.Fatalf("never written: %s, want NotFound", got)
	}
	c.Wrote(configMap("1043", "created"))
	for read := 1; read <= 3; read++ {
		if got, unseen := get(t, c); got != "1043 created" || !unseen {
			t.Fatalf("read %d after the create, not delivered: %s (unseen %v), want the create, unseen", read, got, unseen)
		}
	}
	if err := informed.Add(configMap("1043", "created")); err != nil {
		t.Fatal(err)
	}
	for read := 1; read <= 2; read++ {
		if got, unseen := get(t, c); got != "1043 created" || unseen {
			t.Errorf("read %d after the add event: %s (unseen %v), want the informer's copy, seen", read, got, unseen)
		}
	}
}

// TestAnUpdateOfAnUnseenCreateIsSeenAtEveryRead: the create and an update of it both precede
// their events; every read finds the update.
func TestAnUpdateOfAnUnseenCreateIsSeenAtEveryRead(t *testing.T) {
	c, informed := newCache()
	c.Wrote(configMap("3", "created"))
	c.Wrote(configMap("4", "updated"))
	c.Wrote(configMap("3", "created")) // an older answer never replaces a newer one
	for read := 1; read <= 2; read++ {
		if got, unseen := get(t, c); got != "4 updated" || !unseen {
			t.Errorf("read %d: %s (unseen %v), want the update, unseen", read, got, unseen)
		}
	}
	if err := informed.Add(configMap("3", "created")); err != nil {
		t.Fatal(err)
	}
	if got, unseen := get(t, c); got != "4 updated" || unseen {
		t.Errorf("the create delivered, not the update: %s (unseen %v), want the update, seen", got, unseen)
	}
	if err := informed.Update(configMap("4", "updated")); err != nil {
		t.Fatal(err)
	}
	if got, _ := get(t, c); got != "4 updated" {
		t.Errorf("the update delivered: %s, want it", got)
	}
}

// TestAnUpdateIsSeenBeforeItsEvent: the next sync decides on the update, not on what it
// replaced; a newer change by someone else, once delivered, wins over the write.
func TestAnUpdateIsSeenBeforeItsEvent(t *testing.T) {
	c, informed := newCache()
	if err := informed.Add(configMap("7", "before")); err != nil {
		t.Fatal(err)
	}
	written := configMap("8", "written")
	written.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "cluster-samples-operator"}}
	c.Wrote(written)
	if got, unseen := get(t, c); got != "8 written" || unseen {
		t.Errorf("updated, not delivered: %s (unseen %v), want the update, seen", got, unseen)
	}
	if cm, _, _ := c.Get("python"); cm.ManagedFields != nil {
		t.Errorf("the write is kept with its managedFields, which the informers drop")
	}
	if err := informed.Update(configMap("9", "someone's")); err != nil {
		t.Fatal(err)
	}
	if got, _ := get(t, c); got != "9 someone's" {
		t.Errorf("a newer change delivered: %s, want it", got)
	}
}

func TestConcurrentWorkers(t *testing.T) {
	c, informed := newCache()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 500; j++ {
				c.Wrote(configMap("5", "w"))
				_, _, _ = c.Get("python")
				_ = informed.Add(configMap("5", "w"))
			}
		}()
	}
	wg.Wait()
}

// TestACreateOutlastsAnInformerSecondsLate: behind a loaded API server an informer was seen to
// deliver a create more than 10 s late (a CI run on two cores created a stream twice with a TTL
// of 10 s). The create is still believed after 11 s, and looked at again well before that.
func TestACreateOutlastsAnInformerSecondsLate(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 11 s")
	}
	if Recheck > 10*time.Second {
		t.Errorf("Recheck is %s: a create the informer does not show is looked at again after more than 10 s", Recheck)
	}
	c, _ := newCache()
	c.Wrote(configMap("3", "created"))
	time.Sleep(11 * time.Second)
	if got, unseen := get(t, c); got != "3 created" || !unseen {
		t.Errorf("created 11 s ago, not delivered: %s (unseen %v), want the create, unseen", got, unseen)
	}
}

// TestACreateTheInformerSawDeletedIsForgotten: the add and delete events of a create came
// together, so no read saw the informer show it: the delete forgets the write at once (it is
// not believed until TTL). A delete of an older object leaves a newer write.
func TestACreateTheInformerSawDeletedIsForgotten(t *testing.T) {
	c, _ := newCache()
	c.Wrote(configMap("100", "mine"))
	c.Deleted(cache.DeletedFinalStateUnknown{Key: "ns/python", Obj: configMap("90", "the one before")})
	if got, unseen := get(t, c); got != "100 mine" || !unseen {
		t.Errorf("after an older object's delete: %q (unseen %v), want the write", got, unseen)
	}
	c.Deleted(configMap("120", "mine"))
	if got, _ := get(t, c); got != string(metav1.StatusReasonNotFound) {
		t.Errorf("after its delete: %q, want NotFound", got)
	}
	// The usual delete event carries the object as it was written, at the write's own version.
	c.Wrote(configMap("130", "mine again"))
	c.Deleted(configMap("130", "mine again"))
	if got, _ := get(t, c); got != string(metav1.StatusReasonNotFound) {
		t.Errorf("after the delete of the object as written: %q, want NotFound", got)
	}
}

// TestAWriteTheInformerShowsIsForgotten: once a read finds the informer showing the write itself
// (the same resourceVersion), the write is dropped, and only the informer answers from then on:
// a delete it shows without a delete event reaching the cache is not hidden by the write.
func TestAWriteTheInformerShowsIsForgotten(t *testing.T) {
	c, informed := newCache()
	c.Wrote(configMap("5", "mine"))
	if err := informed.Add(configMap("5", "mine")); err != nil {
		t.Fatal(err)
	}
	if got, unseen := get(t, c); got != "5 mine" || unseen {
		t.Errorf("delivered: %s (unseen %v), want the write, seen", got, unseen)
	}
	if err := informed.Delete(configMap("5", "mine")); err != nil {
		t.Fatal(err)
	}
	if got, unseen := get(t, c); got != string(metav1.StatusReasonNotFound) {
		t.Errorf("after the informer showed the write and then its delete: %s (unseen %v), want NotFound", got, unseen)
	}
}

// TestRecheckIsSoonAndBeforeTTL: a controller looks again at an unseen create every Recheck until
// TTL; a zero Recheck would requeue it at once, over and over.
func TestRecheckIsSoonAndBeforeTTL(t *testing.T) {
	if Recheck <= 0 || Recheck >= TTL {
		t.Errorf("Recheck %s, TTL %s: want 0 < Recheck < TTL", Recheck, TTL)
	}
}
