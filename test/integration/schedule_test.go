package integration

import (
	"flag"
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
	t.Parallel()
	schedule.take(t, expected)
}

// parallelParent is t.Parallel for a test whose subtests run in parallel and take the turns: it
// takes none itself, since it would hold it while its subtests wait for theirs.
func parallelParent(t *testing.T) {
	t.Helper()
	t.Parallel()
}

func (s *turns) take(t *testing.T, expected time.Duration) {
	s.mu.Lock()
	if s.limit == 0 {
		s.mu.Unlock()
		return
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
	t.Cleanup(s.give)
	// go test counts the wait in the test's time; hack/test-report takes it out again.
	t.Logf("waited %s for a turn", time.Since(asked).Round(100*time.Millisecond))
}

// idle is time.Sleep for a test that holds a turn and only waits (a steady window, a quiet
// minute): a waiting test runs in its place meanwhile, and the sleeper takes its turn back when
// it wakes, above the limit if need be, since what it has left is a few reads.
func idle(t *testing.T, d time.Duration) {
	t.Helper()
	schedule.lend()
	time.Sleep(d)
	schedule.reclaim()
}

func (s *turns) lend() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit == 0 {
		return
	}
	s.running--
	s.grantLocked()
}

func (s *turns) reclaim() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit == 0 {
		return
	}
	s.running++
}

func (s *turns) give() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
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
// turns, beside as many others as go test's lifted limit lets it.
func TestEveryParallelTestTakesTurns(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("listing the package's files: %v %v", files, err)
	}
	direct := regexp.MustCompile(`\bt\.Parallel\(\)`)
	for _, file := range files {
		if file == "schedule_test.go" {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if direct.MatchString(line) {
				t.Errorf("%s:%d calls t.Parallel directly: call parallel(t, ...) or parallelParent(t)", file, i+1)
			}
		}
	}
}

// TestALentTurnGoesToAWaitingTestAndComesBack: a sleeper's turn runs a waiting test, and the
// sleeper gets it back on waking even though the limit is reached, without a grant to anyone else.
func TestALentTurnGoesToAWaitingTestAndComesBack(t *testing.T) {
	s := &turns{limit: 1, running: 1, opened: time.Now().Add(-gather)}
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
	s.lend()
	if !granted(first) || granted(second) {
		t.Fatalf("after the lend: first granted %v, second %v; want only the first", granted(first), granted(second))
	}
	s.reclaim()
	if s.running != 2 {
		t.Fatalf("%d running after the sleeper woke, want 2 (over the limit)", s.running)
	}
	s.give() // the first test ends: the sleeper still holds the one turn
	if granted(second) {
		t.Fatal("the second test was granted a turn while the sleeper held the only one")
	}
	s.give() // the sleeper ends
	if !granted(second) {
		t.Fatal("the second test never got the freed turn")
	}
}
