package samplewriter

import (
	"slices"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
)

var start = time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)

func newRecords() (*Records[*imagev1.ImageStream], *clocktesting.FakePassiveClock) {
	clk := clocktesting.NewFakePassiveClock(start)
	return NewRecords[*imagev1.ImageStream](clk, RevertWindow), clk
}

// TestLastWriteSaysWhatTheWriteWasFor: creates and updates are remembered with their intent; a
// delete leaves nothing of the operator's to recognise.
func TestLastWriteSaysWhatTheWriteWasFor(t *testing.T) {
	r, _ := newRecords()
	if _, ok := r.LastWrite("python"); ok {
		t.Fatal("a record for a sample never written")
	}
	mirror := Intent{Generation: 2, SamplesRegistry: "mirror.example:5000", Architecture: "x86_64", Version: "4.21.0"}
	r.Wrote("python", desired.Create, Intent{Generation: 1, Version: "4.21.0"})
	r.Wrote("python", desired.Update, mirror)
	if got, ok := r.LastWrite("python"); !ok || got != mirror {
		t.Errorf("LastWrite = %+v, %v; want %+v", got, ok, mirror)
	}
	r.Wrote("python", desired.Delete, mirror)
	if _, ok := r.LastWrite("python"); ok {
		t.Error("a deleted sample still has a write of the operator's to recognise")
	}
}

// TestAnswersAreReportedOnceAndForgottenOnDelete.
func TestAnswersAreReportedOnceAndForgottenOnDelete(t *testing.T) {
	r, _ := newRecords()
	v0 := r.AnswersVersion()
	answer := &desired.Answer[*imagev1.ImageStream]{Fields: []string{"spec.lookupPolicy"}}
	if got := r.Learn("python", answer); !slices.Equal(got, []string{"spec.lookupPolicy"}) {
		t.Errorf("first answer reports %v", got)
	}
	if got := r.Learn("python", answer); len(got) != 0 {
		t.Errorf("the same field reported twice: %v", got)
	}
	if r.Answer("python") != answer || r.AnswersVersion() == v0 {
		t.Error("the answer is not kept, or the version did not move")
	}
	v1 := r.AnswersVersion()
	r.Wrote("python", desired.Delete, Intent{})
	if r.Answer("python") != nil || r.AnswersVersion() == v1 {
		t.Error("a delete did not forget the answer")
	}
}

// TestRefusalIsKeptUntilAWriteIsAccepted.
func TestRefusalIsKeptUntilAWriteIsAccepted(t *testing.T) {
	r, _ := newRecords()
	r.Refused("python", refusal.Refusal{Code: 403, Message: "exceeded quota"})
	if rec, _ := r.Get("python"); rec.LastRefusal == nil || rec.LastRefusal.Code != 403 {
		t.Fatalf("refusal not kept: %+v", rec.LastRefusal)
	}
	r.Wrote("python", desired.Create, Intent{})
	if rec, _ := r.Get("python"); rec.LastRefusal != nil {
		t.Error("an accepted write left the refusal in the record")
	}
}

// TestRevertBudget: three reverts in the window, then none until the oldest ages out; the
// exhaustion is reported once each time; another sample's budget is its own.
func TestRevertBudget(t *testing.T) {
	r, clk := newRecords()
	for i := 0; i < RevertBudget; i++ {
		if _, _, ok := r.RevertAllowed("python"); !ok {
			t.Fatalf("revert %d refused within the budget", i+1)
		}
		r.Reverted("python")
		clk.SetTime(clk.Now().Add(time.Minute))
	}
	wait, first, ok := r.RevertAllowed("python")
	if ok || !first || wait != 7*time.Minute {
		t.Errorf("fourth revert: wait %s first %v ok %v; want 7m, first refusal, refused", wait, first, ok)
	}
	if _, first, ok := r.RevertAllowed("python"); ok || first {
		t.Errorf("refused again: first %v ok %v; want a refusal not reported twice", first, ok)
	}
	if got := r.HeldBack(); !slices.Equal(got, []string{"python"}) {
		t.Errorf("HeldBack() = %v, want [python]", got)
	}
	if _, _, ok := r.RevertAllowed("ruby"); !ok {
		t.Error("another sample's budget was spent by python's reverts")
	}
	clk.SetTime(start.Add(RevertWindow))
	if _, _, ok := r.RevertAllowed("python"); !ok {
		t.Fatal("the budget did not refill as the first revert aged out")
	}
	r.Reverted("python")
	if _, first, ok := r.RevertAllowed("python"); ok || !first {
		t.Errorf("exhausted again: first %v ok %v; want a new first refusal", first, ok)
	}
}

// TestBookNamesHeldBackSamplesByKind.
func TestBookNamesHeldBackSamplesByKind(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(start)
	b := NewBook(clk, 0)
	for i := 0; i < RevertBudget; i++ {
		b.Templates.Reverted("rails")
		b.ImageStreams.Reverted("python")
	}
	if got := b.HeldBack(); !slices.Equal(got, []string{"ImageStream/python", "Template/rails"}) {
		t.Errorf("HeldBack() = %v", got)
	}
}

// Get returns a copy of the record of name.
func (r *Records[P]) Get(name string) (Record[P], bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.byName[name]
	if !ok {
		return Record[P]{}, false
	}
	return *rec, true
}

// TestAnAcceptedUpdateKeepsTheServersAnswer: only a delete forgets what the server made of the
// sample; a write with no answer to forget leaves the version where it was.
func TestAnAcceptedUpdateKeepsTheServersAnswer(t *testing.T) {
	r, _ := newRecords()
	r.Wrote("ruby", desired.Delete, Intent{})
	if r.AnswersVersion() != 0 {
		t.Errorf("deleting a sample with no answer moved the answers' version to %d", r.AnswersVersion())
	}
	answer := &desired.Answer[*imagev1.ImageStream]{Fields: []string{"spec.lookupPolicy"}}
	r.Learn("python", answer)
	v := r.AnswersVersion()
	r.Wrote("python", desired.Update, Intent{})
	if r.Answer("python") != answer || r.AnswersVersion() != v {
		t.Error("an update forgot the server's answer")
	}
}

// TestAnswersVersionNeverComesBack: a verdict is remembered with the version of the answers it
// was computed with; were a version to come back with other answers kept, a stale verdict would
// pass for current. Writes that keep or forget nothing leave it, so that no verdict is computed
// again for them.
func TestAnswersVersionNeverComesBack(t *testing.T) {
	r, _ := newRecords()
	answer := &desired.Answer[*imagev1.ImageStream]{Fields: []string{"spec.lookupPolicy"}}
	seen := []uint64{r.AnswersVersion()}
	for i, step := range []func(){
		func() { r.Learn("python", answer) },
		func() { r.Learn("ruby", answer) },
		func() { r.Wrote("python", desired.Delete, Intent{}) },
		func() { r.Learn("ruby", nil) },
	} {
		step()
		v := r.AnswersVersion()
		if slices.Contains(seen, v) {
			t.Fatalf("step %d: version %d came back (seen %v)", i+1, v, seen)
		}
		seen = append(seen, v)
	}
	if r.Learn("python", nil); r.AnswersVersion() != seen[len(seen)-1] || r.Answer("ruby") != nil {
		t.Errorf("a write answered as written, with no answer to forget, moved the version to %d", r.AnswersVersion())
	}
}

// TestTheBooksAnswersVersionMovesWithEitherKind: an imagestream's answer and a template's, kept
// between two reads, still move the book's version.
func TestTheBooksAnswersVersionMovesWithEitherKind(t *testing.T) {
	b := NewBook(clocktesting.NewFakePassiveClock(start), 0)
	v := b.AnswersVersion()
	b.ImageStreams.Learn("python", &desired.Answer[*imagev1.ImageStream]{})
	b.Templates.Learn("rails", &desired.Answer[*templatev1.Template]{})
	if b.AnswersVersion() == v {
		t.Errorf("two answers kept, the version stays %d", v)
	}
}
