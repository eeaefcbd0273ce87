package imports

import (
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// permanentFailure drives a schedule as the imports controller does for a stream whose failure
// never changes, for the given time, and returns when each retry was sent.
func permanentFailure(t *testing.T, maxDelay, runFor time.Duration) []time.Duration {
	t.Helper()
	start := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	s := NewRetrySchedule(maxDelay, clk)
	failed := map[string]string{"3.11": `dockerimage.image.openshift.io "registry.redhat.io/ubi9/python-311:latest" not found`}
	var sent []time.Duration
	for clk.Since(start) < runFor {
		due := s.Due("python", failed)
		if due.After(clk.Now()) {
			clk.SetTime(due)
			continue
		}
		sent = append(sent, clk.Since(start))
		s.TurnTaken("python")
	}
	return sent
}

// TestAPermanentFailureCostsSevenImportsInItsFirstHourAndFourInEveryHourAfter: the delays
// start at 30 s (up to 10% more), double, and never exceed the 15-minute cap.
func TestAPermanentFailureCostsSevenImportsInItsFirstHourAndFourInEveryHourAfter(t *testing.T) {
	for run := 0; run < 50; run++ { // the jitter is random: many runs
		sent := permanentFailure(t, 15*time.Minute, 6*time.Hour)
		if len(sent) == 0 || sent[0] < 30*time.Second || sent[0] > 33*time.Second {
			t.Fatalf("first retry at %v, want 30-33 s after the failure", sent)
		}
		inFirstHour := 0
		for _, at := range sent {
			if at <= time.Hour {
				inFirstHour++
			}
		}
		if inFirstHour != 7 {
			t.Errorf("%d retries in the first hour, want 7: %v", inFirstHour, sent)
		}
		for i := 1; i < len(sent); i++ {
			if gap := sent[i] - sent[i-1]; gap > 15*time.Minute {
				t.Errorf("retries %v and %v are %v apart, over the 15-minute cap", sent[i-1], sent[i], gap)
			}
		}
		// Any hour after the first holds exactly 4 retries (the alerts' rule needs at least
		// one more than 1 per failing stream).
		for from := time.Hour; from+time.Hour <= 6*time.Hour; from += time.Minute {
			n := 0
			for _, at := range sent {
				if at >= from && at < from+time.Hour {
					n++
				}
			}
			if n != 4 {
				t.Fatalf("%d retries in the hour from %v, want 4: %v", n, from, sent)
			}
		}
	}
}

func TestAShortCapIsNeverExceeded(t *testing.T) {
	sent := permanentFailure(t, 3*time.Second, time.Minute)
	if len(sent) < 18 {
		t.Errorf("%d retries in a minute with a 3 s cap, want about 20: %v", len(sent), sent)
	}
	prev := time.Duration(0)
	for _, at := range sent {
		if at-prev > 3*time.Second {
			t.Errorf("a delay of %v, over the 3 s cap: %v", at-prev, sent)
		}
		prev = at
	}
}

// TestTheDelayStartsAgainOnlyWhenATagFailsThatDidNot: another tag failing is retried after the
// first delay; a tag that heals while another still fails is not, and neither is another error
// text; the tracking ends with Forget.
func TestTheDelayStartsAgainOnlyWhenATagFailsThatDidNot(t *testing.T) {
	start := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	s := NewRetrySchedule(15*time.Minute, clk)
	one := map[string]string{"3.11": "not found"}
	two := map[string]string{"3.11": "not found", "3.12": "unauthorized: authentication required"}
	retryUntil := func(failed map[string]string, n int) time.Duration {
		var delay time.Duration
		for i := 0; i < n; i++ {
			due := s.Due("python", failed)
			delay = due.Sub(clk.Now())
			clk.SetTime(due)
			s.TurnTaken("python")
		}
		return delay
	}
	if d := retryUntil(one, 5); d < 8*time.Minute {
		t.Fatalf("the 5th delay of one failure is %v, want the doubling's 8 minutes or more", d)
	}
	if d := s.Due("python", two).Sub(clk.Now()); d < 30*time.Second || d > 33*time.Second {
		t.Errorf("another tag failing is retried after %v, want about 30 s", d)
	}
	retryUntil(two, 3)
	if d := s.Due("python", one).Sub(clk.Now()); d < 3*time.Minute {
		t.Errorf("a tag healed while another still fails, and the next retry came after %v: it must not start the delays again", d)
	}
	if d := s.Due("python", map[string]string{"3.11": "manifest unknown"}).Sub(clk.Now()); d < 3*time.Minute {
		t.Errorf("another error text for the same tag brought the next retry to %v: it must not start the delays again", d)
	}
	if d := s.Due("python", two).Sub(clk.Now()); d > 33*time.Second {
		t.Errorf("the healed tag failing again is retried after %v, want about 30 s", d)
	}
	s.Forget("python")
	if d := s.Due("python", one).Sub(clk.Now()); d > 33*time.Second {
		t.Errorf("after the stream imported, its failure is new again: retried after %v, want about 30 s", d)
	}
}

// TestAnErrorTextThatChangesAtEveryAttemptDoesNotShortenTheDelays: real import errors quote
// addresses and request ids, so a registry behind rotating addresses gives another text at each
// attempt. Over five minutes each such stream is retried 3 times (at 30 s, 1 min 30 s and
// 3 min 30 s, give or take the jitter), as one whose text stays the same: for the 53 failing
// streams of the report, 159 imports, where a schedule keyed on the text sent one every 30 s.
func TestAnErrorTextThatChangesAtEveryAttemptDoesNotShortenTheDelays(t *testing.T) {
	start := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		text func(attempt int) string
	}{
		{"the same text", func(int) string { return "dial tcp: i/o timeout" }},
		{"another text each time", func(attempt int) string {
			return fmt.Sprintf("dial tcp 23.0.0.%d:443: i/o timeout (request id %d)", attempt%250, attempt)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(start)
			s := NewRetrySchedule(15*time.Minute, clk)
			const streams = 53
			sent := 0
			attempt := make([]int, streams)
			// Every stream is looked at every 5 s (its status writes, resyncs, other events).
			for clk.Since(start) < 5*time.Minute {
				for i := 0; i < streams; i++ {
					name := fmt.Sprintf("stream-%d", i)
					if !clk.Now().Before(s.Due(name, map[string]string{"latest": tc.text(attempt[i])})) {
						sent++
						attempt[i]++
						s.TurnTaken(name)
					}
				}
				clk.Step(5 * time.Second)
			}
			if sent != 3*streams {
				t.Errorf("%d imports for %d failing streams in 5 minutes, want %d (3 each)", sent, streams, 3*streams)
			}
		})
	}
}

// TestRetryAllNowMakesEveryStreamDueAndStartsItsDelaysAgain.
func TestRetryAllNowMakesEveryStreamDueAndStartsItsDelaysAgain(t *testing.T) {
	start := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	s := NewRetrySchedule(15*time.Minute, clk)
	failed := map[string]string{"latest": "unauthorized"}
	for _, stream := range []string{"ruby", "python"} {
		for i := 0; i < 6; i++ {
			clk.SetTime(s.Due(stream, failed))
			s.TurnTaken(stream)
		}
	}
	clk.Step(time.Minute)
	if s.ForAFix("ruby") || s.ForAFix("perl") {
		t.Error("a turn on the schedule, or a stream not tracked, is taken for a fix")
	}
	if got := s.RetryAllNow(); len(got) != 2 || got[0] != "python" || got[1] != "ruby" {
		t.Fatalf("RetryAllNow = %v, want [python ruby]", got)
	}
	for _, stream := range []string{"ruby", "python"} {
		if due := s.Due(stream, failed); due.After(clk.Now()) {
			t.Errorf("%s is due in %v after RetryAllNow, want now", stream, due.Sub(clk.Now()))
		}
		if !s.ForAFix(stream) {
			t.Errorf("%s's turn after RetryAllNow is not taken for a fix", stream)
		}
		if next := s.TurnTaken(stream).Sub(clk.Now()); next > 33*time.Second {
			t.Errorf("%s's next retry after the triggered one is in %v, want about 30 s", stream, next)
		}
	}
}

// A turn taken for a stream the schedule did not track yet starts it at the first delay.
func TestATurnOfAStreamNotTrackedStartsItsDelays(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC))
	s := NewRetrySchedule(15*time.Minute, clk)
	if d := s.TurnTaken("python").Sub(clk.Now()); d < FirstRetryDelay || d > FirstRetryDelay*11/10 {
		t.Errorf("first turn of an untracked stream due in %v, want %v and up to 10%% more", d, FirstRetryDelay)
	}
}

// TestStreamsThatFailTogetherAreRetriedApart: the streams of one registry fail at the same
// instant (an install without network, an outage); their retries are spread over the 10% of
// jitter at each turn, not sent together, so a recovering registry does not get them in one
// burst, and the spread does not fold back as the delays double.
func TestStreamsThatFailTogetherAreRetriedApart(t *testing.T) {
	start := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	s := NewRetrySchedule(15*time.Minute, clk)
	failed := map[string]string{"latest": "dial tcp: i/o timeout"}
	const streams = 50
	for turn, delay := 1, FirstRetryDelay; turn <= 3; turn, delay = turn+1, 2*delay {
		earliest, latest := start.Add(time.Hour), start
		at := map[time.Time]bool{}
		for i := 0; i < streams; i++ {
			name := fmt.Sprintf("stream-%d", i)
			var due time.Time
			if turn == 1 {
				due = s.Due(name, failed)
			} else {
				due = s.TurnTaken(name)
			}
			if d := due.Sub(clk.Now()); d < delay || d > delay*11/10 {
				t.Errorf("turn %d: %s due in %v, want %v and up to 10%% more", turn, name, d, delay)
			}
			at[due] = true
			earliest, latest = minTime(earliest, due), maxTime(latest, due)
		}
		// 50 draws over the 10% of jitter: all within a third of it by chance about once in 3^48.
		if spread := latest.Sub(earliest); spread < delay/30 || len(at) < streams/2 {
			t.Errorf("turn %d: %d streams that failed together are due at %d instants within %v of each other, want spread over about %v",
				turn, streams, len(at), spread, delay/10)
		}
		clk.Step(delay) // every turn taken at the same instant again
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
