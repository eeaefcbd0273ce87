package samplewriter

import (
	"sort"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Reverts per sample allowed in RevertWindow before the operator stops and reports.
const (
	RevertBudget = 3
	RevertWindow = 10 * time.Minute
)

// WriteBudget bounds how often one sample is reverted. The loop breaker of pkg/desired handles a
// server that normalizes a field the same way every time; something that rewrites an owned field
// differently on each write (a webhook stamping a time, another controller fighting over
// spec.tags) would otherwise be reverted as fast as the queue allows, forever. Safe for
// concurrent workers.
type WriteBudget struct {
	clock  clock.PassiveClock
	limit  int
	window time.Duration

	mu     sync.Mutex
	writes map[string][]time.Time
	// told holds the keys whose exhaustion was reported, until they may be written again.
	told map[string]bool
}

// NewWriteBudget allows limit writes per key in any window.
func NewWriteBudget(clk clock.PassiveClock, limit int, window time.Duration) *WriteBudget {
	return &WriteBudget{clock: clk, limit: limit, window: window, writes: map[string][]time.Time{}, told: map[string]bool{}}
}

// Check reports whether key may be written now; if not, how long until it may, and whether this
// is the first refusal since it last could (so that it is reported once).
func (b *WriteBudget) Check(key string) (wait time.Duration, first bool, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	recent := b.writes[key][:0]
	for _, at := range b.writes[key] {
		if now.Sub(at) < b.window {
			recent = append(recent, at)
		}
	}
	if len(recent) == 0 {
		delete(b.writes, key)
	} else {
		b.writes[key] = recent
	}
	if len(recent) < b.limit {
		delete(b.told, key)
		return 0, false, true
	}
	first = !b.told[key]
	b.told[key] = true
	return recent[0].Add(b.window).Sub(now), first, false
}

// Spend records a write of key.
func (b *WriteBudget) Spend(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes[key] = append(b.writes[key], b.clock.Now())
}

// Exhausted lists, sorted, the keys that may not be written now.
func (b *WriteBudget) Exhausted() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	var out []string
	for key, writes := range b.writes {
		recent := 0
		for _, at := range writes {
			if now.Sub(at) < b.window {
				recent++
			}
		}
		if recent >= b.limit {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}
