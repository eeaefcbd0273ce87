package samplewriter

import (
	"sort"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
)

// Reverts per sample allowed in RevertWindow before the writer stops and reports.
const (
	RevertBudget = 3
	RevertWindow = 10 * time.Minute
)

// Intent is what a write was made for (desired.Choice): whether an update reverts someone's
// change or follows the operator's own earlier write to a new Config is told from it.
type Intent = desired.Choice

// Record is what the writer remembers of one sample.
type Record[P any] struct {
	// Verb is the last write accepted, For what it was made.
	Verb desired.Verb
	For  Intent
	At   time.Time
	// Answer is what the server made of the last create or update when it differs from what was
	// written on an owned field (desired.Answer); nil otherwise.
	Answer *desired.Answer[P]
	// reported are the normalized fields already reported (each is reported once).
	reported map[string]bool
	// reverts are the times of the reverts within the window; exhaustionTold is set once the
	// budget's exhaustion was reported, until it refills.
	reverts        []time.Time
	exhaustionTold bool
	// LastRefusal is the server's last refusal of a write of this sample, nil once a write is
	// accepted.
	LastRefusal *refusal.Refusal
}

// Records are the writer's records of one kind of sample, by name. Safe for concurrent workers.
type Records[P any] struct {
	clock  clock.PassiveClock
	window time.Duration

	mu      sync.Mutex
	byName  map[string]*Record[P]
	answers uint64 // changes whenever an answer is kept or forgotten
}

// NewRecords returns empty records that read time from clk, with revertWindow the window of the
// revert budget.
func NewRecords[P any](clk clock.PassiveClock, revertWindow time.Duration) *Records[P] {
	return &Records[P]{clock: clk, window: revertWindow, byName: map[string]*Record[P]{}}
}

func (r *Records[P]) get(name string) *Record[P] {
	rec, ok := r.byName[name]
	if !ok {
		rec = &Record[P]{}
		r.byName[name] = rec
	}
	return rec
}

// LastWrite returns what the last accepted create or update of name was made for; ok is false
// when this process has not written the sample, or last deleted it.
func (r *Records[P]) LastWrite(name string) (intent Intent, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, found := r.byName[name]
	if !found || rec.Verb == desired.None || rec.Verb == desired.Delete {
		return Intent{}, false
	}
	return rec.For, true
}

// LastVerb is the verb of the last accepted write of name (desired.None when there is none).
func (r *Records[P]) LastVerb(name string) desired.Verb {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec, found := r.byName[name]; found {
		return rec.Verb
	}
	return desired.None
}

// Wrote records an accepted write of name, made for intent. A delete forgets the server's answer.
func (r *Records[P]) Wrote(name string, verb desired.Verb, intent Intent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.get(name)
	rec.Verb, rec.For, rec.At = verb, intent, r.clock.Now()
	rec.LastRefusal = nil
	if verb == desired.Delete && rec.Answer != nil {
		rec.Answer = nil
		r.answers++
	}
}

// Refused records the server's refusal of a write of name.
func (r *Records[P]) Refused(name string, why refusal.Refusal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.get(name).LastRefusal = &why
}

// Learn keeps what the server made of the last write of name (nil: it kept what was written) and
// returns the fields of answer not reported before for that name.
func (r *Records[P]) Learn(name string, answer *desired.Answer[P]) (newFields []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.get(name)
	if answer == nil {
		if rec.Answer != nil {
			rec.Answer = nil
			r.answers++
		}
		return nil
	}
	rec.Answer = answer
	r.answers++
	if rec.reported == nil {
		rec.reported = map[string]bool{}
	}
	for _, f := range answer.Fields {
		if !rec.reported[f] {
			rec.reported[f] = true
			newFields = append(newFields, f)
		}
	}
	return newFields
}

// Answer returns the server's answer kept for name, nil if none.
func (r *Records[P]) Answer(name string) *desired.Answer[P] {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec, ok := r.byName[name]; ok {
		return rec.Answer
	}
	return nil
}

// AnswersVersion changes whenever an answer is kept or forgotten, so that a verdict computed
// with the answers as they were can be told apart.
func (r *Records[P]) AnswersVersion() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.answers
}

// RevertAllowed reports whether name may be reverted now; if not, how long until it may, and
// whether this is the first refusal since it last could (so that it is reported once). The budget
// bounds a fight with something that rewrites an owned field differently on each write (a
// webhook stamping a time, another controller): it would otherwise be reverted as fast as the
// queue allows, forever.
func (r *Records[P]) RevertAllowed(name string) (wait time.Duration, first bool, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.get(name)
	recent := r.recentReverts(rec)
	if len(recent) < RevertBudget {
		rec.exhaustionTold = false
		return 0, false, true
	}
	first = !rec.exhaustionTold
	rec.exhaustionTold = true
	return recent[0].Add(r.window).Sub(r.clock.Now()), first, false
}

// Reverted records a revert of name against its budget.
func (r *Records[P]) Reverted(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.get(name)
	rec.reverts = append(r.recentReverts(rec), r.clock.Now())
}

// recentReverts drops the reverts that left the window and returns the others.
func (r *Records[P]) recentReverts(rec *Record[P]) []time.Time {
	now := r.clock.Now()
	recent := rec.reverts[:0]
	for _, at := range rec.reverts {
		if now.Sub(at) < r.window {
			recent = append(recent, at)
		}
	}
	rec.reverts = recent
	return recent
}

// HeldBack lists, sorted, the samples whose revert budget is spent.
func (r *Records[P]) HeldBack() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for name, rec := range r.byName {
		if len(r.recentReverts(rec)) >= RevertBudget {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
