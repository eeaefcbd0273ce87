package samplewriter

import (
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestPendingUpdates(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	p := NewPendingUpdates(clk)
	if _, behind := p.Behind("python", "10"); behind {
		t.Fatal("nothing written, yet behind")
	}
	p.Wrote("python", "10")
	if left, behind := p.Behind("python", "10"); !behind || left != 5*time.Second {
		t.Fatalf("cache still at the replaced version: behind=%v left=%s, want true 5s", behind, left)
	}
	if _, behind := p.Behind("ruby", "10"); behind {
		t.Fatal("another key is behind")
	}
	clk.SetTime(clk.Now().Add(3 * time.Second))
	if left, behind := p.Behind("python", "10"); !behind || left != 2*time.Second {
		t.Fatalf("3s later: behind=%v left=%s, want true 2s", behind, left)
	}
	// The informer delivered the write: the record is gone, even should the old version come back
	// (a relist after a restore from backup is the truth).
	if _, behind := p.Behind("python", "11"); behind {
		t.Fatal("a newer version in the cache is still behind")
	}
	if _, behind := p.Behind("python", "10"); behind {
		t.Fatal("the record outlived the cache catching up")
	}
	// A delete: the cache still holding the object is behind; its absence is caught up.
	p.Wrote("ruby", "20")
	if _, behind := p.Behind("ruby", "20"); !behind {
		t.Fatal("deleted object still cached: not behind")
	}
	if _, behind := p.Behind("ruby", ""); behind {
		t.Fatal("deleted object gone from the cache: still behind")
	}
	// An event that never comes: believed again after the grace.
	p.Wrote("perl", "30")
	clk.SetTime(clk.Now().Add(CreateGrace))
	if _, behind := p.Behind("perl", "30"); behind {
		t.Fatal("still behind after the grace")
	}
}

func TestPendingUpdatesConcurrentWorkers(t *testing.T) {
	p := NewPendingUpdates(clocktesting.NewFakePassiveClock(time.Now()))
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				p.Wrote("k", "1")
				p.Behind("k", "2")
			}
		}()
	}
	wg.Wait()
}
