package controlplane

import (
	"context"
	"sync"
	"time"
)

// A test binary that starts dozens of control planes spent about 6 s in each start and 1 s in
// each stop, mostly waiting (on etcd, on kube-apiserver's post-start hooks, on CRDs becoming
// established), not computing: two starts at once take 7.5 s, not 12. With prewarming on, a few
// default control planes are kept started ahead, each test that takes one starts its
// replacement, and stops run behind the tests that no longer need them. Starts run side by side:
// tests running in parallel must not queue behind one start at a time.
type prewarmer struct {
	mu       sync.Mutex
	enabled  bool
	ahead    int                // how many to keep started or starting
	ready    []startResult      // started, not yet taken
	starting int                // starts under way
	waiting  int                // takers waiting for one of them
	arrived  chan struct{}      // closed and replaced whenever a start ends
	pending  sync.WaitGroup     // starts under way
	stops    sync.WaitGroup     // stops under way
	starter  func() startResult // Start with the default Options; tests of this file replace it
}

type startResult struct {
	cp  *ControlPlane
	err error
}

// warmDelay lets the test that just took its control plane get its operator converged before
// the replacement's start competes with it for the CPU.
const warmDelay = time.Second

var prewarm = prewarmer{starter: startDefault}

func startDefault() startResult {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{})
	return startResult{cp: cp, err: err}
}

// EnablePrewarm makes StartForTest (the default Options only) hand out control planes started
// ahead, keeping ahead of them started or starting, and StartForTest's cleanup stop them in the
// background. Set ahead to the number of tests that run at once. The TestMain that enables it
// calls StopPrewarmed before it exits.
func EnablePrewarm(ahead int) {
	prewarm.mu.Lock()
	defer prewarm.mu.Unlock()
	prewarm.enabled, prewarm.ahead = true, max(ahead, 1)
	prewarm.arrived = make(chan struct{})
}

// StopPrewarmed waits for the starts under way, stops every control plane not taken, and waits
// for the background stops.
func StopPrewarmed() {
	prewarm.mu.Lock()
	prewarm.enabled = false
	prewarm.mu.Unlock()
	prewarm.pending.Wait()
	prewarm.mu.Lock()
	left := prewarm.ready
	prewarm.ready = nil
	prewarm.mu.Unlock()
	for _, r := range left {
		if r.cp != nil {
			r.cp.Stop()
		}
	}
	prewarm.stops.Wait()
}

// take returns a started default control plane, and has its replacement started; ok is false
// when prewarming is off. It takes one that is ready, else waits for a start under way that no
// other taker is waiting for, else starts one itself.
func (p *prewarmer) take(ctx context.Context) (cp *ControlPlane, ok bool, err error) {
	p.mu.Lock()
	if !p.enabled {
		p.mu.Unlock()
		return nil, false, nil
	}
	for {
		if len(p.ready) > 0 {
			r := p.ready[0]
			p.ready = p.ready[1:]
			p.refillLocked(warmDelay)
			p.mu.Unlock()
			return r.cp, true, r.err
		}
		if p.starting <= p.waiting {
			break
		}
		// A start is under way that no other taker waits for: it ends sooner than one begun now.
		arrived := p.arrived
		p.waiting++
		p.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
			return nil, true, ctx.Err()
		}
		p.mu.Lock()
		p.waiting--
		if !p.enabled {
			p.mu.Unlock()
			return nil, false, nil
		}
	}
	// Nothing ready, and every start under way is someone's: start this one here, and refill
	// the others at once.
	p.refillLocked(0)
	p.mu.Unlock()
	r := p.starter()
	return r.cp, true, r.err
}

// refillLocked starts, after delay, as many control planes as keep ahead of them ready or
// starting. p.mu is held.
func (p *prewarmer) refillLocked(delay time.Duration) {
	for len(p.ready)+p.starting < p.ahead {
		p.starting++
		p.pending.Add(1)
		go func() {
			defer p.pending.Done()
			time.Sleep(delay)
			r := p.starter()
			p.mu.Lock()
			defer p.mu.Unlock()
			p.starting--
			close(p.arrived)
			p.arrived = make(chan struct{})
			if !p.enabled {
				if r.cp != nil {
					p.stops.Add(1)
					go func() {
						defer p.stops.Done()
						r.cp.Stop()
					}()
				}
				return
			}
			p.ready = append(p.ready, r)
		}()
	}
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
