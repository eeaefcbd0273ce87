package imports

import (
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// FirstRetryDelay is how long after a stream's imports are first seen failing, or after another
// of its tags starts failing, the operator retries them: long enough for the import controller's
// own attempt and the server's status write to settle, short enough that a failure whose cause
// is already gone (a network or proxy not yet up at install) heals within a minute.
const FirstRetryDelay = 30 * time.Second

// retryJitter spreads the retries of streams that began failing together: each delay is
// lengthened by up to 10%, and then held to the cap.
const retryJitter = 0.1

// RetrySchedule says, per imagestream with failed imports, when the next retry is due. The
// delay starts at FirstRetryDelay (or the cap, when that is shorter), doubles after each turn
// and never exceeds the cap; each delay is up to 10% longer, short of the cap. With the
// shipped 15-minute cap a failure that keeps failing costs 7 retries in its first hour and
// exactly 4 in any hour after that.
//
// The delays start again from the first only when the failure really changes, a tag failing
// that did not (Due), and when something that can fix imports changes (RetryAllNow). The
// error texts play no part: real ones quote addresses and request ids that differ at every
// attempt, and a delay that restarted on a new text would retry such a stream every 30 s for
// ever. A tag that heals while others still fail changes nothing either: what still fails
// failed before.
type RetrySchedule struct {
	clock    clock.Clock
	maxDelay time.Duration
	// delays counts each stream's turns and doubles its delay: client-go's per-item
	// exponential rate limiter, one item per stream.
	delays workqueue.TypedRateLimiter[string]

	mu      sync.Mutex
	streams map[string]*streamRetries
}

type streamRetries struct {
	// failing are the tags failing at the stream's last look.
	failing sets.Set[string]
	due     time.Time
	// forFix: the turn due was brought forward by something that can fix imports (RetryAllNow).
	forFix bool
}

// NewRetrySchedule makes a schedule whose delays double up to maxDelay.
func NewRetrySchedule(maxDelay time.Duration, clk clock.Clock) *RetrySchedule {
	return &RetrySchedule{
		clock:    clk,
		maxDelay: maxDelay,
		delays:   workqueue.NewTypedItemExponentialFailureRateLimiter[string](min(FirstRetryDelay, maxDelay), maxDelay),
		streams:  map[string]*streamRetries{},
	}
}

// Due records the stream's failed tags (failed maps each to its error, which is not looked at)
// and returns when its next retry is due. A stream not tracked yet, or with a tag failing that
// did not at its last look, is retried after the first delay.
func (s *RetrySchedule) Due(stream string, failed map[string]string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, tracked := s.streams[stream]
	if !tracked {
		st = &streamRetries{}
		s.streams[stream] = st
	}
	grew := !tracked || failsAnew(st.failing, failed)
	if grew {
		s.delays.Forget(stream)
		st.due = s.nextLocked(stream)
		st.forFix = false
	}
	if grew || len(st.failing) != len(failed) {
		st.failing = sets.KeySet(failed)
	}
	return st.due
}

// failsAnew says whether a tag of failed is not in before.
func failsAnew(before sets.Set[string], failed map[string]string) bool {
	for tag := range failed {
		if !before.Has(tag) {
			return true
		}
	}
	return false
}

// TurnTaken records that the stream's turn came, whether its retry was sent or left out as
// unable to help (its tags about to be rewritten, the retry refused as invalid), and returns
// when the next turn is due: the last delay doubled, at most the cap.
func (s *RetrySchedule) TurnTaken(stream string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, tracked := s.streams[stream]
	if !tracked {
		st = &streamRetries{}
		s.streams[stream] = st
	}
	st.due = s.nextLocked(stream)
	st.forFix = false
	return st.due
}

// ForAFix says whether the stream's turn now due was brought forward by a change that can fix
// imports, rather than come on the schedule: such a turn retries even the tags the import
// controller re-imports on a schedule of its own (NotScheduled).
func (s *RetrySchedule) ForAFix(stream string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, tracked := s.streams[stream]
	return tracked && st.forFix
}

// nextLocked is the stream's next delay from now, with its jitter.
func (s *RetrySchedule) nextLocked(stream string) time.Time {
	delay := min(wait.Jitter(s.delays.When(stream), retryJitter), s.maxDelay)
	return s.clock.Now().Add(delay)
}

// RetryAllNow makes every tracked stream's retry due now, with the delays after it starting
// again from the first, and returns the streams.
func (s *RetrySchedule) RetryAllNow() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	names := make([]string, 0, len(s.streams))
	for name, st := range s.streams {
		s.delays.Forget(name)
		st.due = now
		st.forFix = true
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Forget ends the stream's tracking: it imported cleanly, or is no longer tracked.
func (s *RetrySchedule) Forget(stream string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.streams, stream)
	s.delays.Forget(stream)
}
