package imports

import (
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
		s.Retried("python")
	}
	return sent
}

// TestAPermanentFailureCostsAtMostEightImportsInItsFirstHourAndFourAnHourAfter: the delays
// start near 30 s, double, and stop at the 15-minute cap.
func TestAPermanentFailureCostsAtMostEightImportsInItsFirstHourAndFourAnHourAfter(t *testing.T) {
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
		if inFirstHour > 8 || inFirstHour < 6 {
			t.Errorf("%d retries in the first hour, want at most 8 (and the doubling's 6 or 7): %v", inFirstHour, sent)
		}
		for i := 1; i < len(sent); i++ {
			if gap := sent[i] - sent[i-1]; gap > 15*time.Minute {
				t.Errorf("retries %v and %v are %v apart, over the 15-minute cap", sent[i-1], sent[i], gap)
			}
		}
		// Any hour after the first holds at most 4 retries, and at least 3 (the alerts' rule
		// needs that).
		for from := time.Hour; from+time.Hour <= 6*time.Hour; from += time.Minute {
			n := 0
			for _, at := range sent {
				if at >= from && at < from+time.Hour {
					n++
				}
			}
			if n > 4 || n < 3 {
				t.Fatalf("%d retries in the hour from %v, want 3 or 4: %v", n, from, sent)
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

// TestTheDelayStartsAgainWhenTheFailureChanges: another error, or other tags, is retried after
// the first delay; a failure seen before in the episode is not; an episode ends with Forget.
func TestTheDelayStartsAgainWhenTheFailureChanges(t *testing.T) {
	start := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	s := NewRetrySchedule(15*time.Minute, clk)
	notFound := map[string]string{"3.11": "not found"}
	unauthorized := map[string]string{"3.11": "unauthorized: authentication required"}
	retryUntil := func(failed map[string]string, n int) time.Duration {
		var delay time.Duration
		for i := 0; i < n; i++ {
			due := s.Due("python", failed)
			delay = due.Sub(clk.Now())
			clk.SetTime(due)
			s.Retried("python")
		}
		return delay
	}
	if d := retryUntil(notFound, 5); d < 8*time.Minute {
		t.Fatalf("the 5th delay of one failure is %v, want the doubling's 8 minutes or more", d)
	}
	if d := s.Due("python", unauthorized).Sub(clk.Now()); d < 30*time.Second || d > 33*time.Second {
		t.Errorf("a new error is retried after %v, want about 30 s", d)
	}
	retryUntil(unauthorized, 3)
	if d := s.Due("python", notFound).Sub(clk.Now()); d < 4*time.Minute {
		t.Errorf("the error seen before came back and was retried after %v: it must not start the delays again", d)
	}
	s.Forget("python")
	if d := s.Due("python", notFound).Sub(clk.Now()); d > 33*time.Second {
		t.Errorf("after the stream imported, its old error is new again: retried after %v, want about 30 s", d)
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
			s.Retried(stream)
		}
	}
	clk.Step(time.Minute)
	if got := s.RetryAllNow(); len(got) != 2 || got[0] != "python" || got[1] != "ruby" {
		t.Fatalf("RetryAllNow = %v, want [python ruby]", got)
	}
	for _, stream := range []string{"ruby", "python"} {
		if due := s.Due(stream, failed); due.After(clk.Now()) {
			t.Errorf("%s is due in %v after RetryAllNow, want now", stream, due.Sub(clk.Now()))
		}
		if next := s.Retried(stream).Sub(clk.Now()); next > 33*time.Second {
			t.Errorf("%s's next retry after the triggered one is in %v, want about 30 s", stream, next)
		}
	}
}
