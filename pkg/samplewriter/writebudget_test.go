package samplewriter

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestWriteBudget(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	b := NewWriteBudget(clk, 3, 10*time.Minute)
	for i := 0; i < 3; i++ {
		if _, _, ok := b.Check("python"); !ok {
			t.Fatalf("write %d refused within the budget", i+1)
		}
		b.Spend("python")
		clk.SetTime(clk.Now().Add(time.Minute))
	}
	// Three writes at 0, 1 and 2 minutes; now it is 3 minutes.
	wait, first, ok := b.Check("python")
	if ok || !first || wait != 7*time.Minute {
		t.Errorf("fourth write: wait %s first %v ok %v; want 7m, first refusal, refused", wait, first, ok)
	}
	if _, first, ok := b.Check("python"); ok || first {
		t.Errorf("refused again: first %v ok %v; want a refusal not reported twice", first, ok)
	}
	if got := b.Exhausted(); len(got) != 1 || got[0] != "python" {
		t.Errorf("Exhausted() = %v, want [python]", got)
	}
	if _, _, ok := b.Check("ruby"); !ok {
		t.Error("another sample's budget was spent by python's writes")
	}
	// The oldest write ages out at 10 minutes: one more is allowed, and a later exhaustion is
	// reported again.
	clk.SetTime(time.Date(2026, 11, 23, 0, 10, 0, 0, time.UTC))
	if _, _, ok := b.Check("python"); !ok {
		t.Fatal("the budget did not refill as the first write aged out")
	}
	b.Spend("python")
	if _, first, ok := b.Check("python"); ok || !first {
		t.Errorf("exhausted again: first %v ok %v; want a new first refusal", first, ok)
	}
}
