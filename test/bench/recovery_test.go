package main

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

const budgetHeal = "1x imports healed after their cause goes, s (max)"

func recoveryWithin() *RecoveryResult {
	return &RecoveryResult{
		Outages:     []OutageRound{{DownSeconds: 10.2, RelistSeconds: 0.3, BackSeconds: 0.4}, {DownSeconds: 10.1, RelistSeconds: 0.2, BackSeconds: 0.9}},
		HealStreams: []string{"python", "ruby"},
		Heals:       []HealRound{{FailedSeconds: 1, HealSeconds: 2.5, ConditionSeconds: 2.4}, {HealSeconds: 14.9}},
	}
}

// The heal budget takes the worst round: within 15 s passes, one round over it or one round
// without its figure fails; a run without heal rounds has no budget. The outage rounds are
// reported against their promise, never a budget.
func TestRecoveryBudgets(t *testing.T) {
	ok := &Results{Scales: []ScaleResult{passingScale(1, 44)}, Recovery: recoveryWithin()}
	budgets := CheckBudgets(ok)
	if f := failed(budgets); len(f) != 0 {
		t.Fatalf("recovery within its budgets failed %v", f)
	}
	i := slices.IndexFunc(budgets, func(b Budget) bool { return b.Name == budgetHeal })
	if i < 0 {
		t.Fatalf("no budget %q among %v", budgetHeal, budgets)
	}
	if b := budgets[i]; b.Actual != 14.9 || b.Limit != healBudget || !strings.Contains(b.Detail, "2.50, 14.90") {
		t.Errorf("heal budget = %+v, want the worst round, 14.9 of 2.50, 14.90", b)
	}

	late := recoveryWithin()
	late.Heals[0].HealSeconds = 15.5
	late.Outages[1].BackSeconds = 4.2 // over its promise: reported only
	if got := failed(recoveryBudgets(late)); !slices.Equal(got, []string{budgetHeal}) {
		t.Errorf("a heal over 15 s: failed %v", got)
	}
	lost := recoveryWithin()
	lost.Heals[1] = HealRound{Error: "not healed"}
	got := recoveryBudgets(lost)
	if f := failed(got); !slices.Equal(f, []string{budgetHeal}) || !math.IsNaN(got[0].Actual) || !strings.Contains(got[0].Detail, "2.50, none") {
		t.Errorf("a round without a figure: %+v", got)
	}
	if got := recoveryBudgets(&RecoveryResult{Outages: late.Outages}); got != nil {
		t.Errorf("outage rounds alone: budgets %v, want none", got)
	}
	if got := recoveryBudgets(nil); got != nil {
		t.Errorf("no recovery run: budgets %v", got)
	}

	var out bytes.Buffer
	printRecovery(&out, late)
	if s := out.String(); !strings.Contains(s, "created again 0.40, 4.20 (max 4.20), within the promised 1 s in 1 of 2 rounds") {
		t.Errorf("printed %q, want each round, the max and the rounds within the promise", s)
	}
	out.Reset()
	printRecovery(&out, &RecoveryResult{OutageSkipped: "needs the real openshift-apiserver"})
	if !strings.Contains(out.String(), "not measured, the figure needs the real openshift-apiserver") {
		t.Errorf("printed %q, want why the outage figure is missing", out.String())
	}
}

// A watch that openshift-apiserver's stop cut off logs a Panic (500) after its ResponseStarted
// (200): its Code is the final 500, its FirstCode and FirstStageAt those of its beginning.
func TestAuditLogKeepsAWatchsStart(t *testing.T) {
	a := newAuditLog("", "")
	line := func(stage string, code int, at string) []byte {
		return []byte(`{"auditID":"w","stage":"` + stage + `","verb":"watch","user":{"username":"op"},"objectRef":{"resource":"imagestreams"},"responseStatus":{"code":` +
			itoa(code) + `},"requestReceivedTimestamp":"2026-01-01T00:00:00Z","stageTimestamp":"` + at + `"}`)
	}
	a.add(line("ResponseStarted", 200, "2026-01-01T00:00:09Z"))
	a.add(line("Panic", 500, "2026-01-01T00:00:30Z"))
	if len(a.reqs) != 1 {
		t.Fatalf("requests %+v, want the one watch", a.reqs)
	}
	if q := a.reqs[0]; q.Code != 500 || q.FirstCode != 200 || q.FirstStageAt.Second() != 9 {
		t.Errorf("watch %+v, want Code 500, FirstCode 200 at :09", q)
	}
}

// The return is read from the first answer after the API's first 503 (a watch by its beginning,
// however it ended), not from a request that was answered while the server drained; the re-list is the informer's first answered read
// after its own 503.
func TestOutageTimesFromTheAuditLog(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	reqs := []request{
		{Group: "image.openshift.io", Verb: "get", FirstCode: 200, Received: at(10)}, // draining
		{Group: "image.openshift.io", Verb: "get", FirstCode: 503, Received: at(20)},
		{Group: "template.openshift.io", Verb: "get", FirstCode: 200, Received: at(500)},
		{Group: "image.openshift.io", Verb: "watch", FirstCode: 500, Received: at(800)}, // not ready yet
		{Group: "image.openshift.io", Verb: "get", FirstCode: 503, Received: at(900)},
		{Group: "image.openshift.io", Verb: "watch", FirstCode: 200, Code: 500, Received: at(1000)}, // cut off at the next stop
		{Group: "image.openshift.io", Verb: "get", FirstCode: 404, Received: at(1050)},
	}
	if got := answeredAgain(reqs, "image.openshift.io", t0); !got.Equal(at(1000)) {
		t.Errorf("answered again at %v, want +1000ms", got.Sub(t0))
	}
	if got := answeredAgain(reqs, "template.openshift.io", t0); !got.IsZero() {
		t.Errorf("an API that never answered 503 came back at %v", got.Sub(t0))
	}
	events := []controlplane.AuditEvent{
		{Group: "image.openshift.io", Verb: "create", Resource: "imagestreams", Name: "ruby", Code: 201, Received: at(1100)},
		{Group: "image.openshift.io", Verb: "create", Resource: "imagestreams", Name: "python", Code: 503, Received: at(950)},
		{Group: "image.openshift.io", Verb: "create", Resource: "imagestreams", Name: "python", Code: 201, Received: at(1300)},
	}
	if got := firstCreate(events, "imagestreams", "python", t0); !got.Equal(at(1300)) {
		t.Errorf("python created at %v, want +1300ms", got.Sub(t0))
	}
	reqs = []request{
		{Verb: "watch", Resource: "imagestreams", FirstCode: 200, Received: at(5)},
		{Verb: "list", Resource: "imagestreams", FirstCode: 503, Received: at(100)},
		{Verb: "list", Resource: "templates", FirstCode: 200, Received: at(1050)},
		{Verb: "get", Resource: "imagestreams", FirstCode: 200, Received: at(1060)},
		{Verb: "watch", Resource: "imagestreams", FirstCode: 200, Received: at(1200), FirstStageAt: at(3000)},
	}
	if got := relisted(reqs, "imagestreams", t0); got == nil || !got.Received.Equal(at(1200)) || !got.FirstStageAt.Equal(at(3000)) {
		t.Errorf("re-listed %+v, want the watch of +1200ms, answered at +3000ms", got)
	}
	if got := relisted(reqs[:1], "imagestreams", t0); got != nil {
		t.Errorf("an informer that met no 503 re-listed: %+v", got)
	}
}
