package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// A test binary that starts dozens of control planes spent about 6 s in each start and 1 s in
// each stop, mostly waiting (on etcd, on kube-apiserver's post-start hooks, on CRDs becoming
// established), not computing: two starts at once take 7.5 s, not 12. With prewarming on, a few
// default control planes are kept started ahead of the tests that take them, and those tests
// give them back when they end, to be reset for later tests (recycle.go) or stopped in the
// background. Starts run side by side: tests running in parallel must not queue behind one start
// at a time.
type prewarmer struct {
	mu        sync.Mutex
	enabled   bool
	atOnce    int                // how many tests take control planes at once
	spares    int                // how many to keep started, starting or being reset
	ready     []startResult      // started or reset, not yet taken
	starting  int                // starts under way
	planned   int                // starts EnablePrewarm planned that have not begun (startAheadLocked)
	recycling int                // resets under way (recycle.go)
	inUse     int                // handed out, not yet given back
	waiting   int                // takers waiting for one of them
	arrived   chan struct{}      // closed and replaced whenever a start or a reset ends
	pending   sync.WaitGroup     // starts and resets under way
	stops     sync.WaitGroup     // stops under way
	starter   func() startResult // Start with the default Options; tests of this file replace it
	recycler  func(*ControlPlane) error
	// What became of the control planes, for the line StopPrewarmed prints.
	started, reused int
	discarded       map[string]int // by reason
}

type startResult struct {
	cp  *ControlPlane
	err error
}

// warmDelay lets the test that just took its control plane get its operator converged before
// the replacement's start competes with it for the CPU.
const warmDelay = time.Second

var prewarm = &prewarmer{starter: startDefault, recycler: recycleDefault}

func startDefault() startResult {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{})
	if err == nil {
		if berr := cp.takeBaseline(ctx); berr != nil {
			cp.notRecyclable("no baseline could be taken: " + berr.Error())
		}
	}
	return startResult{cp: cp, err: err}
}

func recycleDefault(cp *ControlPlane) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return cp.recycle(ctx)
}

// EnablePrewarm makes StartForTest (the default Options only) hand out control planes started
// ahead or reset, keeping spares of them ready, starting or being reset, and StartForTest's
// cleanup give them back; atOnce is the number of tests that run at once, and no more than
// atOnce+spares are started or kept in all, unless tests hold theirs beyond atOnce
// (surplusLocked). It begins at once with atOnce starts, one after another (startAheadLocked).
// The TestMain that enables it calls StopPrewarmed before it exits.
//
// A spare is an idle control plane, and an idle control plane costs about 3.2 % of a core (its
// three servers' own housekeeping, measured on two cores): a package that runs for fifteen minutes
// pays about 30 CPU-s for each spare it keeps. A test that ends gives its control plane back
// and the reset takes about a second, so one spare covers the tests that start while the others
// are being reset.
func EnablePrewarm(atOnce, spares int) {
	prewarm.mu.Lock()
	defer prewarm.mu.Unlock()
	prewarm.enabled, prewarm.atOnce, prewarm.spares = true, max(atOnce, 1), max(spares, 1)
	prewarm.arrived = make(chan struct{})
	prewarm.startAheadLocked(prewarm.atOnce)
}

// startAheadLocked starts n control planes one after another, from now on. The package's first
// tests then take theirs ready, and so do the atOnce tests that take theirs together when its
// sequential tests are over: each of these waited for a start of its own (14 s for the first
// sequential test to take one in CI, 19 s for the third of the first parallel ones), the
// parallel ones with two or three starts at once on the cores the running tests needed. One
// start at a time fits in what the sequential tests leave idle (about half the cores). A taker
// that finds nothing ready and no start it may wait for makes one of those planned itself.
// p.mu is held.
func (p *prewarmer) startAheadLocked(n int) {
	p.planned = n
	p.pending.Add(1)
	go func() {
		defer p.pending.Done()
		p.mu.Lock()
		defer p.mu.Unlock()
		for p.enabled && p.planned > 0 {
			p.planned--
			p.starting++
			p.started++
			p.mu.Unlock()
			r := p.starter()
			p.mu.Lock()
			p.startEndedLocked(r)
		}
	}()
}

// startEndedLocked takes in a start made for no taker in particular: ready for the next, or
// stopped when prewarming is over. p.mu is held.
func (p *prewarmer) startEndedLocked(r startResult) {
	p.starting--
	close(p.arrived)
	p.arrived = make(chan struct{})
	if !p.enabled {
		p.stopBehindLocked(r.cp)
		return
	}
	p.ready = append(p.ready, r)
}

// StopPrewarmed waits for the starts under way, stops every control plane not taken, and waits
// for the background stops.
func StopPrewarmed() {
	prewarm.mu.Lock()
	prewarm.enabled = false
	prewarm.mu.Unlock()
	prewarm.pending.Wait()
	fmt.Fprintln(os.Stderr, prewarm.summary())
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
			if r.err == nil {
				p.inUse++
			}
			p.refillLocked(warmDelay)
			p.mu.Unlock()
			return r.cp, true, r.err
		}
		if p.starting+p.recycling <= p.waiting {
			break
		}
		// A start or a reset is under way that no other taker waits for: it ends sooner than a
		// start begun now.
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
	// Nothing ready, and every start under way is someone's: start this one here (one of those
	// planned, if any are left), and refill the others at once.
	if p.planned > 0 {
		p.planned--
	}
	p.inUse++
	p.started++
	p.refillLocked(0)
	p.mu.Unlock()
	r := p.starter()
	if r.err != nil {
		p.mu.Lock()
		p.inUse--
		p.mu.Unlock()
	}
	return r.cp, true, r.err
}

// refillLocked starts, after delay, as many control planes as keep spares of them ready,
// starting, planned or being reset, as long as there are fewer than atOnce+spares in all: those
// in use come back (giveBack) to be reset. p.mu is held.
func (p *prewarmer) refillLocked(delay time.Duration) {
	for spare := len(p.ready) + p.starting + p.planned + p.recycling; spare < p.spares && spare+p.inUse < p.most(); spare++ {
		p.starting++
		p.started++
		p.pending.Add(1)
		go func() {
			defer p.pending.Done()
			time.Sleep(delay)
			r := p.starter()
			p.mu.Lock()
			defer p.mu.Unlock()
			p.startEndedLocked(r)
		}()
	}
}

// giveBack takes back a control plane take handed out, once its test is over: it is reset for
// another test in the background, or stopped when it cannot be (recycle.go) or is not needed.
// The channel gets the reset's error, nil when there was none to make.
func (p *prewarmer) giveBack(cp *ControlPlane, testFailed bool) <-chan error {
	verdict := make(chan error, 1)
	if testFailed {
		cp.notRecyclable("its test failed: what it holds is kept out of other tests")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse--
	if !p.enabled {
		p.stopBehindLocked(cp)
		verdict <- nil
		return verdict
	}
	p.recycling++
	p.pending.Add(1)
	go func() {
		defer p.pending.Done()
		err := p.recycler(cp)
		verdict <- err
		p.mu.Lock()
		defer p.mu.Unlock()
		p.recycling--
		close(p.arrived)
		p.arrived = make(chan struct{})
		if err == nil && !p.enabled {
			err = errors.New("no test is left")
			cp.record("stopped after its reset: %v", err)
		}
		if err == nil && p.surplusLocked() {
			err = errors.New("a spare is ready already")
			cp.record("stopped after its reset: %v", err)
		}
		if err != nil {
			if p.discarded == nil {
				p.discarded = map[string]int{}
			}
			p.discarded[err.Error()]++
			p.stopBehindLocked(cp)
			p.refillLocked(0)
			return
		}
		p.reused++
		p.ready = append(p.ready, startResult{cp: cp})
	}()
	return verdict
}

// surplusLocked reports whether a control plane just reset is one too many: the tests and
// spares have theirs (most), and keptReady more than the spares are ready or starting beside
// one for each taker waiting. The first alone is not enough: a test that lends its turn while
// it waits (idle) keeps its control plane, so the package held six or seven at times with three
// turns, every reset one was above most and was stopped, and the next taker started one of its
// own (about 13 CPU-s) instead. p.mu is held.
func (p *prewarmer) surplusLocked() bool {
	return len(p.ready)+p.starting+p.recycling+p.inUse >= p.most() &&
		len(p.ready)+p.starting >= p.spares+keptReady+p.waiting
}

// keptReady is how many control planes just reset are kept ready beyond the spares. When the
// tests that lent their turns end, several give theirs back at once, and the tests that start
// next take them: with one ready at most, CI's integration package stopped 9 or 10 of them
// after their reset and started as many again (13 to 14 starts in all), each about 11.4 CPU-s,
// where one kept idle costs about 0.032 CPU-s a second and is taken within a minute.
const keptReady = 2

// most is how many control planes there may be in all: one for each test that runs, and the
// spares.
func (p *prewarmer) most() int { return p.atOnce + p.spares }

// stopBehindLocked stops cp in the background. p.mu is held.
func (p *prewarmer) stopBehindLocked(cp *ControlPlane) {
	if cp == nil {
		return
	}
	p.stops.Add(1)
	go func() {
		defer p.stops.Done()
		cp.Stop()
	}()
}

// summary says how many control planes were started and how many handed out again.
func (p *prewarmer) summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := fmt.Sprintf("control planes: %d started, %d handed out again after a reset", p.started, p.reused)
	reasons := make([]string, 0, len(p.discarded))
	for why, n := range p.discarded {
		reasons = append(reasons, fmt.Sprintf("\n  %d not reset: %s", n, why))
	}
	sort.Strings(reasons)
	return out + strings.Join(reasons, "")
}
