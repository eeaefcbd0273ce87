package pendingcreates

import (
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestPendingCreates(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	p := New(clk)
	if _, unseen := p.Unseen("python"); unseen {
		t.Fatal("nothing created yet, but python is unseen")
	}
	p.Created("python")
	if left, unseen := p.Unseen("python"); !unseen || left != 5*time.Second {
		t.Errorf("just created: Unseen = %s, %v; want 5s, true", left, unseen)
	}
	if _, unseen := p.Unseen("ruby"); unseen {
		t.Error("ruby was never created, but is unseen")
	}
	clk.SetTime(clk.Now().Add(3 * time.Second))
	if left, unseen := p.Unseen("python"); !unseen || left != 2*time.Second {
		t.Errorf("3s later: Unseen = %s, %v; want 2s, true", left, unseen)
	}
	p.Seen("python")
	if _, unseen := p.Unseen("python"); unseen {
		t.Error("seen by the informer, but still unseen")
	}

	// An add that never comes: after the grace the cache is believed again, once and for all.
	p.Created("ruby")
	clk.SetTime(clk.Now().Add(5 * time.Second))
	if _, unseen := p.Unseen("ruby"); unseen {
		t.Error("after the grace the controller still waits for ruby")
	}
	clk.SetTime(clk.Now().Add(-time.Second)) // the record is gone, not just expired
	if _, unseen := p.Unseen("ruby"); unseen {
		t.Error("an expired record came back")
	}
}

func TestPendingCreatesConcurrentWorkers(t *testing.T) {
	p := New(clocktesting.NewFakePassiveClock(time.Now()))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				p.Created("k")
				p.Unseen("k")
				p.Seen("k")
			}
		}()
	}
	wg.Wait()
}
