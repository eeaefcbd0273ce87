package controlplane

import (
	"context"
	"sync"
	"time"
)

// A test binary that starts dozens of control planes spent about 6 s in each start and 1 s in
// each stop, mostly waiting (on etcd, on kube-apiserver's post-start hooks, on CRDs becoming
// established), not computing: two starts at once take 7.5 s, not 12. With prewarming on, the
// next default control plane starts while the current test runs, and stops run behind the
// tests that no longer need them.
type prewarmer struct {
	mu      sync.Mutex
	enabled bool
	next    chan startResult // the control plane being started ahead; nil when none
	stops   sync.WaitGroup
}

type startResult struct {
	cp  *ControlPlane
	err error
}

// warmDelay lets the test that just took its control plane get its operator converged before
// the next start competes with it for the CPU.
const warmDelay = time.Second

var prewarm prewarmer

// EnablePrewarm makes StartForTest (the default Options only) hand out control planes started
// ahead, and StartForTest's cleanup stop them in the background. The TestMain that enables it
// calls StopPrewarmed before it exits.
func EnablePrewarm() {
	prewarm.mu.Lock()
	defer prewarm.mu.Unlock()
	prewarm.enabled = true
}

// StopPrewarmed stops the control plane started ahead, if any, and waits for the background
// stops.
func StopPrewarmed() {
	prewarm.mu.Lock()
	next := prewarm.next
	prewarm.next, prewarm.enabled = nil, false
	prewarm.mu.Unlock()
	if next != nil {
		if r := <-next; r.cp != nil {
			r.cp.Stop()
		}
	}
	prewarm.stops.Wait()
}

// take returns a started default control plane and starts the next one; ok is false when
// prewarming is off.
func (p *prewarmer) take(ctx context.Context) (cp *ControlPlane, ok bool, err error) {
	p.mu.Lock()
	if !p.enabled {
		p.mu.Unlock()
		return nil, false, nil
	}
	next := p.next
	ahead := make(chan startResult, 1)
	p.next = ahead
	p.mu.Unlock()

	if next != nil {
		select {
		case r := <-next:
			cp, err = r.cp, r.err
		case <-ctx.Done():
			// Whatever it was, the next take gets the one just asked for instead.
			go func() {
				if r := <-next; r.cp != nil {
					r.cp.Stop()
				}
			}()
			err = ctx.Err()
		}
	} else {
		cp, err = Start(ctx, Options{})
	}
	go func() {
		time.Sleep(warmDelay)
		startCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c, e := Start(startCtx, Options{})
		ahead <- startResult{cp: c, err: e}
	}()
	return cp, true, err
}

// stopBehind stops cp in the background when prewarming is on, and at once otherwise.
func (p *prewarmer) stopBehind(cp *ControlPlane) {
	p.mu.Lock()
	enabled := p.enabled
	if enabled {
		p.stops.Add(1)
	}
	p.mu.Unlock()
	if !enabled {
		cp.Stop()
		return
	}
	go func() {
		defer p.stops.Done()
		cp.Stop()
	}()
}
