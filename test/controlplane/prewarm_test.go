package controlplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakePrewarmer hands out starts that take startTime and are named by their number (in err).
func fakePrewarmer(ahead int, startTime time.Duration) (*prewarmer, *atomic.Int32, *atomic.Int32) {
	var started, concurrent, most atomic.Int32
	p := &prewarmer{starter: func() startResult {
		n := started.Add(1)
		now := concurrent.Add(1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		time.Sleep(startTime)
		concurrent.Add(-1)
		return startResult{err: errors.New(fmt.Sprint(n))}
	}}
	p.enabled, p.atOnce, p.spares, p.arrived = true, ahead, ahead, make(chan struct{})
	return p, &started, &most
}

func TestPrewarmStartsSideBySideForParallelTests(t *testing.T) {
	const startTime = 200 * time.Millisecond
	p, started, most := fakePrewarmer(3, startTime)
	begin := time.Now()
	var mu sync.Mutex
	got := map[string]bool{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := p.take(context.Background())
			if !ok || err == nil {
				t.Errorf("take = ok %v, err %v; want a start", ok, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if got[err.Error()] {
				t.Errorf("start %s handed out twice", err)
			}
			got[err.Error()] = true
		}()
	}
	wg.Wait()
	// Six takers at once, three kept ahead: two rounds of side-by-side starts, not six in a row.
	if took := time.Since(begin); took > 4*startTime+warmDelay {
		t.Errorf("six parallel takes took %s, want about two start times (%s each)", took, startTime)
	}
	if most.Load() < 3 {
		t.Errorf("at most %d starts ran at once, want at least 3", most.Load())
	}
	// Each take left a replacement starting: ahead of them are ready or starting.
	p.mu.Lock()
	inFlight := len(p.ready) + p.starting
	p.mu.Unlock()
	if inFlight != 3 {
		t.Errorf("%d ready or starting after the takes, want 3", inFlight)
	}
	disable(p)
	t.Logf("%d starts for 6 takes", started.Load())
}

// Enabled, the pool starts atOnce control planes before any test asks, one at a time: the
// tests that take theirs together (the first parallel ones) find them ready, and the starts
// leave most of the cores to the tests that run meanwhile.
func TestPrewarmStartsAheadOneAtATimeForTheTestsToCome(t *testing.T) {
	const startTime = 50 * time.Millisecond
	p, started, most := startingAhead(t, startTime)
	waitQuiet(t, p)
	if n, m := started.Load(), most.Load(); n != 3 || m != 1 {
		t.Fatalf("%d starts, at most %d at once; want 3, one at a time", n, m)
	}
	began := time.Now()
	for range 3 {
		if _, ok, err := p.take(context.Background()); !ok || err == nil {
			t.Fatalf("take = ok %v, err %v; want one of those started ahead", ok, err)
		}
	}
	if took := time.Since(began); took >= startTime {
		t.Errorf("three takes took %s with three started ahead, want them at once", took)
	}
}

// A taker that comes while the planned starts are under way waits for the one begun and starts
// one of the others itself, rather than wait for them to be made one after another.
func TestPrewarmTakersDoNotQueueBehindThePlannedStarts(t *testing.T) {
	const startTime = 200 * time.Millisecond
	p, started, _ := startingAhead(t, startTime)
	began := time.Now()
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok, err := p.take(context.Background()); !ok || err == nil {
				t.Errorf("take = ok %v, err %v; want a start", ok, err)
			}
		}()
	}
	wg.Wait()
	if took := time.Since(began); took > 2*startTime {
		t.Errorf("three takes while three starts were planned took %s, want about one start time (%s)", took, startTime)
	}
	waitQuiet(t, p)
	// Three takes and the spare that replaces them; a planned start made by a taker is not made
	// again.
	if n := started.Load(); n != 4 {
		t.Errorf("%d starts, want 4: %s", n, p.summary())
	}
}

// startingAhead is a prewarmer for three tests at once and one spare, as EnablePrewarm(3, 1)
// makes it, its three starts ahead begun; the test's end disables it.
func startingAhead(t *testing.T, startTime time.Duration) (*prewarmer, *atomic.Int32, *atomic.Int32) {
	p, started, most := fakePrewarmer(3, startTime)
	p.spares = 1
	t.Cleanup(func() { disable(p) })
	p.mu.Lock()
	p.startAheadLocked(3)
	p.mu.Unlock()
	return p, started, most
}

// waitQuiet waits until p has no start under way or planned, the refills' delay included.
func waitQuiet(t *testing.T, p *prewarmer) {
	t.Helper()
	deadline := time.Now().Add(warmDelay + 5*time.Second)
	var quietSince time.Time
	for ; ; time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		busy := p.starting > 0 || p.planned > 0
		p.mu.Unlock()
		switch {
		case busy:
			quietSince = time.Time{}
		case quietSince.IsZero():
			quietSince = time.Now()
		case time.Since(quietSince) > warmDelay+100*time.Millisecond:
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the starts never ended")
		}
	}
}

func TestPrewarmTakeHandsOutWhatIsReady(t *testing.T) {
	p, started, _ := fakePrewarmer(1, 10*time.Millisecond)
	_, _, first := p.take(context.Background())
	// The replacement starts after warmDelay and is ready soon after.
	deadline := time.Now().Add(warmDelay + 5*time.Second)
	for {
		p.mu.Lock()
		ready := len(p.ready)
		p.mu.Unlock()
		if ready == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replacement never became ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := started.Load()
	_, _, second := p.take(context.Background())
	if second == nil || first == nil || second.Error() == first.Error() {
		t.Errorf("takes got %v then %v, want two different starts", first, second)
	}
	if started.Load() != before {
		t.Errorf("a take with one ready started another at once")
	}
	disable(p)
}

// recyclingPrewarmer hands out fake control planes named by their start's number (in Dir); its
// resets take resetTime and fail for the control planes named in failing.
func recyclingPrewarmer(ahead int, resetTime time.Duration, failing ...string) (*prewarmer, *atomic.Int32) {
	var started atomic.Int32
	p := &prewarmer{
		starter: func() startResult {
			return startResult{cp: &ControlPlane{Dir: fmt.Sprint(started.Add(1))}}
		},
		recycler: func(cp *ControlPlane) error {
			time.Sleep(resetTime)
			if slices.Contains(failing, cp.Dir) {
				return errors.New("left in a state no reset undoes")
			}
			return nil
		},
	}
	p.enabled, p.atOnce, p.spares, p.arrived = true, ahead, ahead, make(chan struct{})
	return p, &started
}

// Tests that follow each other get the control planes their predecessors gave back: after the
// first round no start is needed, unless a reset fails, and then one start replaces it.
func TestPrewarmHandsOutControlPlanesGivenBackAndReplacesThoseNotReset(t *testing.T) {
	p, started := recyclingPrewarmer(2, 20*time.Millisecond, "1")
	defer disable(p)
	handedOut := map[string]int{}
	for round := range 5 {
		taken := takeRound(t, p, round, 2, nil)
		for _, cp := range taken {
			handedOut[cp.Dir]++
			p.giveBack(cp, false)
		}
	}
	disable(p)
	// Two tests at a time, two kept ahead: at most four in all, plus the one that replaced
	// control plane 1, which could not be reset.
	if n := started.Load(); n > 5 {
		t.Errorf("%d starts for 10 takes, want at most 5", n)
	}
	if handedOut["1"] != 1 {
		t.Errorf("control plane 1, whose reset failed, was handed out %d times, want once", handedOut["1"])
	}
	if got := p.summary(); !strings.Contains(got, "1 not reset: left in a state no reset undoes") {
		t.Errorf("summary %q does not say why control plane 1 was not reset", got)
	}
	t.Logf("%s; handed out: %v", p.summary(), handedOut)
}

// A control plane whose test failed is stopped, never handed out again: what is left in it is
// evidence, not a starting point.
func TestPrewarmDoesNotRecycleTheControlPlaneOfAFailedTest(t *testing.T) {
	p, _ := recyclingPrewarmer(1, 0)
	p.recycler = func(cp *ControlPlane) error { return cp.recycle(context.Background()) }
	cp, _, _ := p.take(context.Background())
	p.giveBack(cp, true)
	disable(p)
	if p.reused != 0 || !strings.Contains(p.summary(), "its test failed") {
		t.Errorf("summary %q: want the control plane not reset because its test failed", p.summary())
	}
}

// A test whose operator, or any client of its, still sends requests after it ended fails, by
// name: the reset that sees them answers to that test, not only to the next one, which gets
// another control plane. A reset refused for another reason fails no test.
func TestATestThatLeavesSomethingSendingFails(t *testing.T) {
	ended := time.Now()
	leaked := []AuditEvent{{User: OperatorUser, UserAgent: "cluster-samples-operator/v0.0.0 (linux/amd64)", Verb: "update",
		Group: "samples.operator.openshift.io", Resource: "configs", Name: "cluster", Received: ended.Add(2 * time.Second)}}
	leaky := &fakeTest{TB: t, name: "TestWhoseOperatorKeptWriting"}
	notReset := &fakeTest{TB: t, name: "TestOnAControlPlaneNoResetUndoes"}
	p, _ := recyclingPrewarmer(1, 0)
	// Chosen by the test that held the control plane, not by its start's number: the take's
	// own start and the spare it asks for run side by side, and either may be numbered first.
	p.recycler = func(cp *ControlPlane) error {
		if cp.holder() == leaky.name {
			return &lateRequestsError{test: cp.holder(), late: leaked, since: ended}
		}
		return errors.New("left in a state no reset undoes")
	}
	saved := prewarm
	prewarm = p
	defer func() {
		prewarm = saved
		disable(p)
	}()

	StartForTest(leaky)
	leaky.end()
	failure := strings.Join(leaky.errors, "\n")
	if !leaky.failed || !strings.Contains(failure, "after TestWhoseOperatorKeptWriting ended") || !strings.Contains(failure, OperatorUser) {
		t.Errorf("the test whose operator kept writing: failed %v with %q, want it failed naming itself and the operator", leaky.failed, failure)
	}
	t.Logf("the leaky test failed with: %s", failure)

	StartForTest(notReset)
	notReset.end()
	if notReset.failed {
		t.Errorf("a test whose control plane could not be reset, with nothing of it left sending, failed: %v", notReset.errors)
	}
}

// Three tests at a time with one spare: never more than four control planes in all, and after
// the first round the tests run on those given back.
func TestPrewarmKeepsOneSpareBesideTheTestsThatRun(t *testing.T) {
	p, started := recyclingPrewarmer(3, 20*time.Millisecond)
	p.spares = 1
	defer disable(p)
	most := 0
	count := func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		most = max(most, len(p.ready)+p.starting+p.recycling+p.inUse)
	}
	for round := range 5 {
		taken := takeRound(t, p, round, 3, count)
		var verdicts []<-chan error
		for _, cp := range taken {
			verdicts = append(verdicts, p.giveBack(cp, false))
			count()
		}
		for _, v := range verdicts {
			<-v
			count()
		}
	}
	if most > 4 {
		t.Errorf("%d control planes at once, want at most 4 (three tests and one spare)", most)
	}
	if n := started.Load(); n > 4 {
		t.Errorf("%d starts for 15 takes, want at most 4", n)
	}
	t.Logf("%s; %d at most at once", p.summary(), most)
}

// Tests that lend their turns while they wait keep their control planes: five held with three
// turns. One given back and reset then goes to the next taker, who would otherwise start a
// control plane of its own while the one just reset was stopped.
func TestPrewarmHandsOutWhatIsGivenBackWhileMoreAreHeldThanTestsRun(t *testing.T) {
	p, started := recyclingPrewarmer(3, 20*time.Millisecond)
	p.spares = 1
	defer disable(p)
	held := takeRound(t, p, 0, 5, nil)
	before := started.Load()
	for i := range held {
		if err := <-p.giveBack(held[i], false); err != nil {
			t.Errorf("control plane %s given back with %d others held: %v", held[i].Dir, len(held)-1, err)
		}
		cp, ok, err := p.take(context.Background())
		if !ok || err != nil {
			t.Fatalf("take = %v, %v, %v", cp, ok, err)
		}
		held[i] = cp
	}
	if n := started.Load() - before; n != 0 {
		t.Errorf("%d starts for 5 takes that each followed a reset, want none: %s", n, p.summary())
	}
}

// Five held with three turns, two given back one after the other before anyone takes: both are
// kept ready, and the two tests that start next take them without a start. With one kept ready
// at most, the second was stopped after its reset and the second taker started its own.
func TestPrewarmKeepsWhatSeveralTestsGiveBackForTheTestsToCome(t *testing.T) {
	p, started := recyclingPrewarmer(3, 20*time.Millisecond)
	p.spares = 1
	defer disable(p)
	held := takeRound(t, p, 0, 5, nil)
	// The spare the last takes asked for is started or starting; let it be ready first.
	waitQuiet(t, p)
	before := started.Load()
	for _, cp := range held[:2] {
		if err := <-p.giveBack(cp, false); err != nil {
			t.Errorf("control plane %s given back with others held: %v", cp.Dir, err)
		}
	}
	takeRound(t, p, 1, 2, nil)
	waitQuiet(t, p)
	if n := started.Load() - before; n != 0 {
		t.Errorf("%d starts for 2 takes with two just reset ready, want none: %s", n, p.summary())
	}
}

// disable turns p off as StopPrewarmed does and waits for its starts and stops; the fake
// control planes left ready have nothing to stop.
func disable(p *prewarmer) {
	p.mu.Lock()
	p.enabled = false
	p.mu.Unlock()
	p.pending.Wait()
	p.stops.Wait()
}

// takeRound takes n control planes one after another, as n tests starting together would, and
// calls each, when given, after every take.
func takeRound(t *testing.T, p *prewarmer, round, n int, each func()) []*ControlPlane {
	t.Helper()
	var taken []*ControlPlane
	for range n {
		cp, ok, err := p.take(context.Background())
		if !ok || err != nil || cp == nil {
			t.Fatalf("round %d: take = %v, %v, %v", round, cp, ok, err)
		}
		taken = append(taken, cp)
		if each != nil {
			each()
		}
	}
	return taken
}
