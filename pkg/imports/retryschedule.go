package imports

import (
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// FirstRetryDelay is how long after a stream's imports are first seen failing, or fail in a way
// not seen before, the operator retries them: long enough for the import controller's own
// attempt and the server's status write to settle, short enough that a failure whose cause is
// already gone (a network or proxy not yet up at install) heals within a minute.
const FirstRetryDelay = 30 * time.Second

// retryJitter spreads the retries of streams that began failing together: each step of the
// doubling adds up to 10% of the step. No delay exceeds the cap.
const retryJitter = 0.1

// RetrySchedule says, per imagestream with failed imports, when the next retry is due. The
// delay starts at FirstRetryDelay (or the cap, when that is shorter) and doubles after each
// retry up to the cap; it starts again when the stream fails in a way not seen since it last
// imported cleanly (other tags, another error), and when something that can fix imports
// changes (RetryAllNow). A failure that keeps its cause costs, with a 15-minute cap, at most 7
// retries in its first hour and 4 an hour after that.
//
// A failure seen before in the same episode does not start the delay again: an error that
// alternates between two texts (a timeout reported two ways) would otherwise be retried every
// 30 seconds for ever.
type RetrySchedule struct {
	clock   clock.Clock
	backoff *flowcontrol.Backoff

	mu      sync.Mutex
	streams map[string]*streamRetries
}

type streamRetries struct {
	// seen are the failures (Signature) the stream has had since it last imported cleanly.
	seen map[string]bool
	due  time.Time
}

// NewRetrySchedule makes a schedule whose delays double up to maxDelay.
func NewRetrySchedule(maxDelay time.Duration, clk clock.Clock) *RetrySchedule {
	// The backoff adds its jitter to the first step too: a cap shorter than FirstRetryDelay
	// leaves room for it.
	initial := min(FirstRetryDelay, time.Duration(float64(maxDelay)/(1+retryJitter)))
	return &RetrySchedule{
		clock:   clk,
		backoff: flowcontrol.NewFakeBackOffWithJitter(initial, maxDelay, clk, retryJitter),
		streams: map[string]*streamRetries{},
	}
}

// Signature names a stream's failure: its failed tags and their errors, in tag order.
func Signature(failed map[string]string) string {
	tags := make([]string, 0, len(failed))
	for tag := range failed {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	var b strings.Builder
	for _, tag := range tags {
		b.WriteString(tag)
		b.WriteByte(0)
		b.WriteString(failed[tag])
		b.WriteByte(0)
	}
	return b.String()
}

// Due records the stream's current failure and returns when its next retry is due: a failure
// not seen in this episode is retried after the first delay.
func (s *RetrySchedule) Due(stream string, failed map[string]string) time.Time {
	signature := Signature(failed)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.streamLocked(stream)
	if !st.seen[signature] {
		st.seen[signature] = true
		now := s.clock.Now()
		s.backoff.Reset(stream)
		s.backoff.Next(stream, now)
		st.due = now.Add(s.backoff.Get(stream))
	}
	return st.due
}

// Retried records a retry sent now: the next one is due after twice the last delay, at most
// the cap.
func (s *RetrySchedule) Retried(stream string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.streamLocked(stream)
	now := s.clock.Now()
	s.backoff.Next(stream, now)
	st.due = now.Add(s.backoff.Get(stream))
	return st.due
}

// Postpone moves the stream's next retry one step away without a retry sent: its turn was
// skipped (a rewrite of its tags is coming) or refused as invalid.
func (s *RetrySchedule) Postpone(stream string) time.Time {
	return s.Retried(stream)
}

// RetryAllNow makes every tracked stream's retry due now, with the delays after it starting
// again from the first, and returns the streams. The failures seen so far stay seen.
func (s *RetrySchedule) RetryAllNow() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	names := make([]string, 0, len(s.streams))
	for name, st := range s.streams {
		s.backoff.Reset(name)
		st.due = now
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Forget ends the stream's episode: it imported cleanly, or is no longer tracked.
func (s *RetrySchedule) Forget(stream string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.streams, stream)
	s.backoff.Reset(stream)
}

func (s *RetrySchedule) streamLocked(stream string) *streamRetries {
	st, tracked := s.streams[stream]
	if !tracked {
		st = &streamRetries{seen: map[string]bool{}}
		s.streams[stream] = st
	}
	return st
}
