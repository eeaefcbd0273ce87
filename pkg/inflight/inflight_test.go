package inflight

import (
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

var start = time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)

func newTracker() (*Tracker, *clocktesting.FakePassiveClock) {
	clk := clocktesting.NewFakePassiveClock(start)
	return New(clk), clk
}

// TestACreateIsInFlightUntilTheCacheShowsIt: after a create, a cache without the object lags;
// one that shows it, at any resourceVersion, has caught up. A cache that still lacks it after the
// grace is stale: the server is asked, once per grace, until it agrees with the cache.
func TestACreateIsInFlightUntilTheCacheShowsIt(t *testing.T) {
	tr, clk := newTracker()
	if _, view := tr.View("python", ""); view != Current {
		t.Fatalf("an object never written: %v, want Current", view)
	}
	tr.Wrote("python", "")
	clk.SetTime(start.Add(2 * time.Second))
	if wait, view := tr.View("python", ""); view != Behind || wait != 3*time.Second {
		t.Errorf("absent from the cache 2 s after the create: %s, %v; want Behind for 3s", wait, view)
	}
	if _, view := tr.View("python", "12"); view != Current {
		t.Errorf("the cache shows the created object: %v, want Current", view)
	}
	if _, view := tr.View("python", ""); view != Current {
		t.Errorf("a write the cache has shown is in flight again: %v", view)
	}

	tr.Wrote("ruby", "")
	clk.SetTime(start.Add(2*time.Second + Grace))
	if _, view := tr.View("ruby", ""); view != Stale {
		t.Errorf("absent from the cache a grace after the create: %v, want Stale", view)
	}
	clk.SetTime(start.Add(3*time.Second + Grace))
	if wait, view := tr.View("ruby", ""); view != Behind || wait != Grace-time.Second {
		t.Errorf("a second after the server was asked: %s, %v; want Behind for %s", wait, view, Grace-time.Second)
	}
	clk.SetTime(start.Add(2*time.Second + 2*Grace))
	if _, view := tr.View("ruby", ""); view != Stale {
		t.Errorf("a grace after the server was asked: %v, want Stale again", view)
	}
	tr.ServerAgrees("ruby")
	if _, view := tr.View("ruby", ""); view != Current {
		t.Errorf("the server agrees with the cache: %v, want Current", view)
	}
}

// TestAnUpdateOrDeleteIsInFlightWhileTheCacheShowsWhatItReplaced: an update is shown by a newer
// resourceVersion, a delete by the object's absence ("").
func TestAnUpdateOrDeleteIsInFlightWhileTheCacheShowsWhatItReplaced(t *testing.T) {
	for write, after := range map[string]string{"update": "8", "delete": ""} {
		tr, clk := newTracker()
		tr.Wrote("python", "7")
		clk.SetTime(start.Add(time.Second))
		if wait, view := tr.View("python", "7"); view != Behind || wait != 4*time.Second {
			t.Errorf("%s: cache at the replaced version: %s, %v; want Behind for 4s", write, wait, view)
		}
		clk.SetTime(start.Add(Grace))
		if _, view := tr.View("python", "7"); view != Stale {
			t.Errorf("%s: cache at the replaced version after the grace: %v, want Stale", write, view)
		}
		if _, view := tr.View("python", after); view != Current {
			t.Errorf("%s: the cache caught up (%q): %v, want Current", write, after, view)
		}
	}
}

var configMaps = schema.GroupResource{Resource: "configmaps"}

// lookups plays a cache and a server that hold an object, at a resourceVersion, or not ("") and
// counts the server's reads.
type lookups struct {
	inCache, onServer string
	serverReads       int
}

func found(rv string) (*corev1.ConfigMap, error) {
	if rv == "" {
		return nil, apierrors.NewNotFound(configMaps, "python")
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "python", ResourceVersion: rv}}, nil
}

func (l *lookups) cache() (*corev1.ConfigMap, error) { return found(l.inCache) }

func (l *lookups) server() (*corev1.ConfigMap, error) {
	l.serverReads++
	return found(l.onServer)
}

// rv is the resourceVersion of a looked-up object, "" for none.
func rv(cm *corev1.ConfigMap) string {
	if cm == nil {
		return ""
	}
	return cm.ResourceVersion
}

func TestLookupWaitsForTheAddThenAsksTheServer(t *testing.T) {
	tr, clk := newTracker()
	l := &lookups{onServer: "3"}
	find := func() (*corev1.ConfigMap, time.Duration, error) { return Lookup(tr, "python", l.cache, l.server) }

	if got, wait, err := find(); !apierrors.IsNotFound(err) || wait != 0 || got != nil {
		t.Fatalf("never created, not cached: %v, %s, %v; want NotFound and no wait", got, wait, err)
	}
	tr.Wrote("python", "")
	clk.SetTime(clk.Now().Add(3 * time.Second))
	if got, wait, err := find(); !apierrors.IsNotFound(err) || wait != 2*time.Second || got != nil {
		t.Errorf("3 s after the create: %v, %s, %v; want NotFound and a wait of 2s", got, wait, err)
	}

	// The add is overdue: the server's copy, and the server asked once per grace.
	clk.SetTime(clk.Now().Add(2 * time.Second))
	if got, wait, err := find(); err != nil || wait != 0 || rv(got) != "3" {
		t.Errorf("a grace after the create: %q, %s, %v; want the server's copy", rv(got), wait, err)
	}
	if _, wait, _ := find(); wait != Grace {
		t.Errorf("right after asking the server: a wait of %s, want %s", wait, Grace)
	}
	if l.serverReads != 1 {
		t.Errorf("the server was read %d times, want 1", l.serverReads)
	}

	// The cache shows it: believed, and the record is done with.
	l.inCache = "3"
	if got, _, err := find(); err != nil || rv(got) != "3" {
		t.Errorf("cached: %q, %v", rv(got), err)
	}
	l.inCache = ""
	if _, wait, err := find(); !apierrors.IsNotFound(err) || wait != 0 {
		t.Errorf("after the cache showed it and lost it again: %s, %v; want NotFound and no wait", wait, err)
	}
}

func TestLookupBelievesAServerWithoutTheObject(t *testing.T) {
	tr, clk := newTracker()
	l := &lookups{}
	tr.Wrote("python", "")
	clk.SetTime(clk.Now().Add(Grace))
	if _, wait, err := Lookup(tr, "python", l.cache, l.server); !apierrors.IsNotFound(err) || wait != 0 {
		t.Errorf("gone from the server too: %s, %v; want NotFound and no wait", wait, err)
	}
	if _, wait, err := Lookup(tr, "python", l.cache, l.server); !apierrors.IsNotFound(err) || wait != 0 || l.serverReads != 1 {
		t.Errorf("after the server said it is gone: %s, %v, %d server reads; want NotFound, no wait, 1 read", wait, err, l.serverReads)
	}
}

// TestLookupAfterAnUpdate: the cache at the replaced version is returned with a wait, then
// the server's newer copy is decided on.
func TestLookupAfterAnUpdate(t *testing.T) {
	tr, clk := newTracker()
	l := &lookups{inCache: "7", onServer: "8"}
	tr.Wrote("python", "7")
	if got, wait, err := Lookup(tr, "python", l.cache, l.server); err != nil || wait != Grace || rv(got) != "7" {
		t.Errorf("right after the update: %q, %s, %v; want the cached copy and a wait of %s", rv(got), wait, err, Grace)
	}
	clk.SetTime(clk.Now().Add(Grace))
	if got, wait, err := Lookup(tr, "python", l.cache, l.server); err != nil || wait != 0 || rv(got) != "8" {
		t.Errorf("a grace after the update: %q, %s, %v; want the server's copy", rv(got), wait, err)
	}
}

func TestLookupPassesOtherErrorsOn(t *testing.T) {
	tr, clk := newTracker()
	broken := errors.New("broken")
	fails := func() (*corev1.ConfigMap, error) { return nil, broken }
	if _, _, err := Lookup(tr, "python", fails, nil); !errors.Is(err, broken) {
		t.Errorf("got %v, want the cache's error", err)
	}
	tr.Wrote("python", "")
	clk.SetTime(clk.Now().Add(Grace))
	if _, _, err := Lookup(tr, "python", (&lookups{}).cache, fails); !errors.Is(err, broken) {
		t.Errorf("got %v, want the server's error", err)
	}
}

func TestConcurrentWorkers(t *testing.T) {
	tr := New(clocktesting.NewFakePassiveClock(time.Now()))
	l := &lookups{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				tr.Wrote("k", "")
				_, _, _ = Lookup(tr, "k", l.cache, func() (*corev1.ConfigMap, error) {
					mu.Lock()
					defer mu.Unlock()
					return l.server()
				})
				tr.ServerAgrees("k")
			}
		}()
	}
	wg.Wait()
}
