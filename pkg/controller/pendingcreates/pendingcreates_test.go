package pendingcreates

import (
	"errors"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

var configMaps = schema.GroupResource{Resource: "configmaps"}

// lookups plays a cache and a server that hold an object, or not, and counts the server's reads.
type lookups struct {
	inCache, onServer bool
	serverReads       int
}

func (l *lookups) cache() (string, error) {
	if l.inCache {
		return "cached", nil
	}
	return "", apierrors.NewNotFound(configMaps, "python")
}

func (l *lookups) server() (string, error) {
	l.serverReads++
	if l.onServer {
		return "from the server", nil
	}
	return "", apierrors.NewNotFound(configMaps, "python")
}

func TestLookupWaitsForTheAddThenAsksTheServer(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	p := New(clk)
	l := &lookups{onServer: true}
	find := func() (string, time.Duration, error) { return Lookup(p, "python", l.cache, l.server) }

	if got, wait, err := find(); !apierrors.IsNotFound(err) || wait != 0 || got != "" {
		t.Fatalf("never created, not cached: %q, %s, %v; want NotFound and no wait", got, wait, err)
	}
	p.Created("python")
	clk.SetTime(clk.Now().Add(3 * time.Second))
	if _, wait, err := find(); !apierrors.IsNotFound(err) || wait != 2*time.Second {
		t.Errorf("3 s after the create: %s, %v; want NotFound and a wait of 2s", wait, err)
	}

	// The add is overdue: the server's copy, and the server asked once per grace.
	clk.SetTime(clk.Now().Add(2 * time.Second))
	if got, wait, err := find(); err != nil || wait != 0 || got != "from the server" {
		t.Errorf("a grace after the create: %q, %s, %v; want the server's copy", got, wait, err)
	}
	if _, wait, _ := find(); wait != Grace {
		t.Errorf("right after asking the server: a wait of %s, want %s", wait, Grace)
	}
	if l.serverReads != 1 {
		t.Errorf("the server was read %d times, want 1", l.serverReads)
	}

	// The cache shows it: believed, and the record is done with.
	l.inCache = true
	if got, _, err := find(); err != nil || got != "cached" {
		t.Errorf("cached: %q, %v", got, err)
	}
	l.inCache = false
	if _, wait, err := find(); !apierrors.IsNotFound(err) || wait != 0 {
		t.Errorf("after the cache showed it and lost it again: %s, %v; want NotFound and no wait", wait, err)
	}
}

func TestLookupBelievesAServerWithoutTheObject(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	p := New(clk)
	l := &lookups{}
	p.Created("python")
	clk.SetTime(clk.Now().Add(Grace))
	if _, wait, err := Lookup(p, "python", l.cache, l.server); !apierrors.IsNotFound(err) || wait != 0 {
		t.Errorf("gone from the server too: %s, %v; want NotFound and no wait", wait, err)
	}
	if _, wait, err := Lookup(p, "python", l.cache, l.server); !apierrors.IsNotFound(err) || wait != 0 || l.serverReads != 1 {
		t.Errorf("after the server said it is gone: %s, %v, %d server reads; want NotFound, no wait, 1 read", wait, err, l.serverReads)
	}
}

func TestLookupPassesOtherErrorsOn(t *testing.T) {
	p := New(clocktesting.NewFakePassiveClock(time.Now()))
	broken := errors.New("cache broken")
	if _, _, err := Lookup(p, "python", func() (string, error) { return "", broken }, nil); !errors.Is(err, broken) {
		t.Errorf("got %v, want the cache's error", err)
	}
}

func TestPendingCreatesConcurrentWorkers(t *testing.T) {
	p := New(clocktesting.NewFakePassiveClock(time.Now()))
	l := &lookups{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				p.Created("k")
				_, _, _ = Lookup(p, "k", l.cache, func() (string, error) {
					mu.Lock()
					defer mu.Unlock()
					return l.server()
				})
				p.Seen("k")
			}
		}()
	}
	wg.Wait()
}
