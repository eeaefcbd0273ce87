package integration

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The integration tests are CPU-bound on two cores, and how long the package takes depends on
// which tests run together and in what order: go test starts the paused parallel tests in
// whatever order their goroutines wake, and a minute-long test started last ran nearly alone at
// the end. So -parallel keeps its meaning (how many tests run at once) but this package enforces
// it: TestMain takes the value for its turns and lifts go test's own limit, and each test that
// starts a control plane waits for a turn after t.Parallel (parallel). Of the tests waiting, the
// one expected to run longest goes first (longest first leaves short tests to fill the end).

// expected durations, for the tests whose length sets the package's (measured on two cores under
// the race detector with two others running beside them).
const (
	aboutAMinute      = 60 * time.Second
	aboutHalfAMinute  = 30 * time.Second
	aboutTwentySecond = 20 * time.Second
)

// turns hands out the package's places to run.
type turns struct {
	mu      sync.Mutex
	limit   int // 0: no turns are kept (the package runs without its TestMain's setting)
	running int
	next    int // arrival order, to break ties
	waiting []*waiter
	// opened is when the first turn was asked for. The tests the sequential phase held back all
	// ask within a few milliseconds of each other; none is granted before gather has passed, so
	// that the longest among them go first rather than the first to wake.
	opened time.Time
	timer  *time.Timer
	// holders are the tests holding a turn, by name. A test that holds none (a sequential one)
	// has none to lend; a subtest of a holder takes its parent's turn over instead of waiting
	// for one the parent holds until its subtests end.
	holders map[string]*holding
}

// holding is one test's turn; lent while the test only sleeps (idle) or its subtests hold it.
type holding struct {
	lent bool
}

type waiter struct {
	expected time.Duration
	arrival  int
	granted  chan struct{}
}

// gather is how long the first requests for a turn are collected before any is granted.
const gather = 100 * time.Millisecond

var schedule turns

// takeOverParallelism makes this package's turns what -parallel says, and lifts go test's own
// limit so that every waiting test reaches the turns. It returns the number of turns.
func takeOverParallelism() int {
	atOnce := 1
	if f := flag.Lookup("test.parallel"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n > 0 {
			atOnce = n
		}
		_ = f.Value.Set("10000")
	}
	schedule.limit = atOnce
	return atOnce
}

// parallel is t.Parallel for a test that starts control planes or an operator: it runs beside
// others once it has a turn, which it holds until it ends. expected is about how long it runs,
// for the tests that take longer than most (0 for the others).
func parallel(t *testing.T, expected time.Duration) {
	t.Helper()
	schedule.parallel(t, expected)
}

func (s *turns) parallel(t *testing.T, expected time.Duration) {
	t.Helper()
	t.Parallel()
	stopSharedControlPlane()
	s.take(t, expected)
}

// parallelParent is t.Parallel for a test whose subtests run in parallel and take the turns: it
// takes none itself, since it would hold it while its subtests wait for theirs.
func parallelParent(t *testing.T) {
	t.Helper()
	t.Parallel()
	stopSharedControlPlane()
}

func (s *turns) take(t *testing.T, expected time.Duration) {
	s.mu.Lock()
	if s.limit == 0 {
		s.mu.Unlock()
		return
	}
	if s.holders == nil {
		s.holders = map[string]*holding{}
	}
	// A parent that holds a turn waits for its parallel subtests, which run only once its
	// function returned: with one turn they would wait for it for ever. The parent's turn goes
	// to its subtests (to the one that asks first; the others wait as usual).
	for name, h := range s.holders {
		if strings.HasPrefix(t.Name(), name+"/") && !h.lent {
			h.lent = true
			s.running--
		}
	}
	if s.opened.IsZero() {
		s.opened = time.Now()
		s.timer = time.AfterFunc(gather, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.grantLocked()
		})
	}
	w := &waiter{expected: expected, arrival: s.next, granted: make(chan struct{})}
	s.next++
	s.waiting = append(s.waiting, w)
	s.grantLocked()
	s.mu.Unlock()
	asked := time.Now()
	<-w.granted
	h := &holding{}
	s.mu.Lock()
	s.holders[t.Name()] = h
	s.mu.Unlock()
	t.Cleanup(func() { s.give(t.Name(), h) })
	// go test counts the wait in the test's time; hack/test-report takes it out again.
	t.Logf("waited %s for a turn", time.Since(asked).Round(100*time.Millisecond))
}

// idle is time.Sleep for a test that holds a turn and only waits (a steady window, a quiet
// minute): a waiting test runs in its place meanwhile, and the sleeper takes its turn back when
// it wakes, above the limit if need be, since what it has left is a few reads. A test without a
// turn of its own (a sequential one) only sleeps: it has nothing to lend.
func idle(t *testing.T, d time.Duration) {
	t.Helper()
	lent := schedule.lend(t.Name())
	time.Sleep(d)
	if lent {
		schedule.reclaim(t.Name())
	}
}

// idleUntil is eventuallyEvery for a wait whose end a clock sets rather than the machine's work (a
// stream's next scheduled retry, a backoff's next step, a rollout's wait): the test only polls
// meanwhile, so it lends its turn as idle does and takes it back once cond holds, or the wait
// fails. A wait that a test measures the machine's answer by (a revert, a retry at once) keeps
// its turn: it runs beside as many tests as the bound was set for.
func idleUntil(t *testing.T, timeout, interval time.Duration, cond func() (bool, string)) {
	t.Helper()
	schedule.idleUntil(t, timeout, interval, cond)
}

func (s *turns) idleUntil(t *testing.T, timeout, interval time.Duration, cond func() (bool, string)) {
	t.Helper()
	if s.lend(t.Name()) {
		lent := time.Now()
		defer func() { // also when eventuallyEvery fails the test
			s.reclaim(t.Name())
			t.Logf("lent its turn for %s", time.Since(lent).Round(100*time.Millisecond))
		}()
	}
	eventuallyEvery(t, timeout, interval, cond)
}

// lend gives the turn held by the test named so to a waiting test, and reports whether it had
// one to give.
func (s *turns) lend(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.holders[name]
	if s.limit == 0 || h == nil || h.lent {
		return false
	}
	h.lent = true
	s.running--
	s.grantLocked()
	return true
}

func (s *turns) reclaim(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.holders[name]; h != nil && h.lent {
		h.lent = false
		s.running++
	}
}

// give frees the turn of a test that ended, unless it was lent and never taken back.
func (s *turns) give(name string, h *holding) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holders[name] == h {
		delete(s.holders, name)
	}
	if !h.lent {
		s.running--
	}
	s.grantLocked()
}

// grantLocked hands free turns to the waiting tests, the longest expected first, then in the
// order they asked. s.mu is held.
func (s *turns) grantLocked() {
	if time.Since(s.opened) < gather {
		return
	}
	for s.running < s.limit && len(s.waiting) > 0 {
		best := 0
		for i, w := range s.waiting {
			b := s.waiting[best]
			if w.expected > b.expected || w.expected == b.expected && w.arrival < b.arrival {
				best = i
			}
		}
		w := s.waiting[best]
		s.waiting = append(s.waiting[:best], s.waiting[best+1:]...)
		s.running++
		close(w.granted)
	}
}

// TestEveryParallelTestTakesTurns: a test that called t.Parallel itself would run outside the
// turns, beside as many others as go test's lifted limit lets it. Any call of a method Parallel
// without arguments counts, whatever the receiver's name (st.Parallel(), tc.t.Parallel()).
func TestEveryParallelTestTakesTurns(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("listing the package's files: %v %v", files, err)
	}
	for _, file := range files {
		for _, at := range directParallelCalls(t, file) {
			t.Errorf("%s calls Parallel directly: call parallel(t, ...) or parallelParent(t)", at)
		}
	}
}

// directParallelCalls lists the calls of X.Parallel() in a file, outside the two functions that
// are the package's way to call it.
func directParallelCalls(t *testing.T, file string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && (fn.Name.Name == "parallel" || fn.Name.Name == "parallelParent") {
			continue
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 0 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Parallel" {
				out = append(out, fset.Position(call.Pos()).String())
			}
			return true
		})
	}
	return out
}

func TestDirectParallelCallsAreFoundWhateverTheReceiver(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x_test.go")
	src := `package x
import "testing"
func parallel(t *testing.T) { t.Parallel() }
func TestA(st *testing.T) { st.Parallel() }
type tc struct{ t *testing.T }
func TestB(t *testing.T) { c := tc{t}; c.t.Parallel(); parallel(t) }
`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`:(\d+):\d+$`)
	if got := directParallelCalls(t, file); len(got) != 2 || line.FindStringSubmatch(got[0])[1] != "4" || line.FindStringSubmatch(got[1])[1] != "6" {
		t.Errorf("found %v, want the calls on lines 4 and 6", got)
	}
}

// TestIdleLendsOnlyAHeldTurn: a test without a turn (a sequential one) that sleeps through idle
// must not free a turn it does not hold, which would let one test more run than the limit.
func TestIdleLendsOnlyAHeldTurn(t *testing.T) {
	s := &turns{limit: 1, running: 1, opened: time.Now().Add(-gather), holders: map[string]*holding{"TestHolder": {}}}
	w := &waiter{granted: make(chan struct{})}
	s.waiting = append(s.waiting, w)
	if s.lend("TestSequential") {
		t.Fatal("a test without a turn lent one")
	}
	select {
	case <-w.granted:
		t.Fatal("a turn was granted beyond the limit")
	default:
	}
	if !s.lend("TestHolder") {
		t.Fatal("the holder could not lend its turn")
	}
	<-w.granted
}

// TestNestedParallelDoesNotDeadlockWithOneTurn: a parent holding the only turn, whose subtests
// ask for turns, gives its turn to them (go test runs them only after the parent returns).
func TestNestedParallelDoesNotDeadlockWithOneTurn(t *testing.T) {
	s := &turns{limit: 1}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.Run("parent", func(pt *testing.T) {
			s.take(pt, 0)
			for i := 0; i < 2; i++ {
				pt.Run(strconv.Itoa(i), func(st *testing.T) { s.parallel(st, 0) })
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a parent holding the only turn and its parallel subtests deadlocked")
	}
	if s.running != 0 || len(s.holders) != 0 {
		t.Errorf("after the parent ended: %d running, holders %v", s.running, s.holders)
	}
}

// TestALentTurnGoesToAWaitingTestAndComesBack: a sleeper's turn runs a waiting test, and the
// sleeper gets it back on waking even though the limit is reached, without a grant to anyone else.
func TestALentTurnGoesToAWaitingTestAndComesBack(t *testing.T) {
	sleeper := &holding{}
	s := &turns{limit: 1, running: 1, opened: time.Now().Add(-gather), holders: map[string]*holding{"sleeper": sleeper}}
	waiting := func() *waiter {
		w := &waiter{granted: make(chan struct{}), arrival: s.next}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.next++
		s.waiting = append(s.waiting, w)
		s.grantLocked()
		return w
	}
	granted := func(w *waiter) bool {
		select {
		case <-w.granted:
			return true
		default:
			return false
		}
	}
	first, second := waiting(), waiting()
	if granted(first) || granted(second) {
		t.Fatal("a turn was granted while the only one was held")
	}
	s.lend("sleeper")
	if !granted(first) || granted(second) {
		t.Fatalf("after the lend: first granted %v, second %v; want only the first", granted(first), granted(second))
	}
	s.reclaim("sleeper")
	if s.running != 2 {
		t.Fatalf("%d running after the sleeper woke, want 2 (over the limit)", s.running)
	}
	s.give("first", &holding{}) // the first test ends: the sleeper still holds the one turn
	if granted(second) {
		t.Fatal("the second test was granted a turn while the sleeper held the only one")
	}
	s.give("sleeper", sleeper) // the sleeper ends
	if !granted(second) {
		t.Fatal("the second test never got the freed turn")
	}
}

// TestIdleUntilLendsTheTurnWhileItPolls: a test polling for a clock's event gives its turn to a
// waiting test meanwhile, and takes it back once the condition holds, above the limit if need be.
func TestIdleUntilLendsTheTurnWhileItPolls(t *testing.T) {
	holder := &holding{}
	s := &turns{limit: 1, running: 1, opened: time.Now().Add(-gather), holders: map[string]*holding{t.Name(): holder}}
	w := &waiter{granted: make(chan struct{})}
	s.waiting = append(s.waiting, w)
	polls := 0
	s.idleUntil(t, time.Second, time.Millisecond, func() (bool, string) {
		polls++
		select {
		case <-w.granted:
		default:
			t.Fatal("the waiting test was not granted the turn while the holder polled")
		}
		return polls == 3, "not yet"
	})
	if holder.lent || s.running != 2 {
		t.Errorf("after the poll: lent %v, %d running; want the turn taken back, 2 running", holder.lent, s.running)
	}
}
