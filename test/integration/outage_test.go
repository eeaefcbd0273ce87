package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/availability"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// TestOpenShiftAPIServerDownAndBackWithinAHeldRead stops the real openshift-apiserver and starts
// it again at once, as one step of a rolling restart does, for less than a held read waits
// (availability.MaxHold); meanwhile an admin deletes a sample (in etcd: no request reaches the
// stopped server). The operator's informers keep asking while the API is away, so they re-list
// as it returns, and the re-list's event brings the sample back (docs/admin-guide.md, "When
// openshift-apiserver is down", says within a second of the return: the test logs that figure,
// and make bench's outage rounds measure it). Without the held reads (the informers' client built
// with Observe instead of ObserveInformers) the informers ask again only after their reflectors'
// backoff, which after ten seconds of 503s has grown to 6 to 13 s: they re-listed 2.8 and 3.2 s
// after the return, and python came back 3.2 s after it. It runs alone.
func TestOpenShiftAPIServerDownAndBackWithinAHeldRead(t *testing.T) {
	e, _ := newSettledEnvOnRealOpenShiftAPIServer(t, defaultOptions())
	ctx := context.Background()

	down := time.Now()
	if err := e.cp.StopOpenShiftAPIServer(); err != nil {
		t.Fatal(err)
	}
	// The server has exited: what is answered from here on comes from the one started below.
	// Before, a request received as it was stopping may still be answered while it drains, even
	// after the aggregator's first 503 (on a loaded machine one was, 0.0 s after the first 503,
	// and was taken for the return: "re-listed 20.04 s after image.openshift.io answered again").
	stopped := time.Now()
	if deleted, err := e.cp.DeleteStoredOpenShiftObject(ctx, "imagestreams", "openshift", "python"); err != nil || !deleted {
		t.Fatalf("deleting python from etcd: deleted %v, %v", deleted, err)
	}
	// The reflectors must have met the outage, or there is nothing to come back from.
	eventuallyEvery(t, 10*time.Second, 200*time.Millisecond, func() (bool, string) {
		failed, _ := e.informersAnswered(t, down)
		return !failed["imagestreams"].IsZero() && !failed["templates"].IsZero(), fmt.Sprintf("the informers' first 503s: %v", failed)
	})
	// Down for as long as a replica's restart may take, a third of a held read's bound: the
	// reflectors' backoff has grown to several seconds meanwhile.
	idle(t, availability.MaxHold/3)
	if err := e.cp.StartOpenShiftAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("openshift-apiserver restarted in %.1f s", time.Since(down).Seconds())

	// Measured from the audit log: from each API's first answer after the stop that is not a 503
	// (whoever asked: the control plane's probe of its return asks every 50 ms) to the
	// informer's first answered read.
	e.waitSamplesInformersAnswered(t, stopped)
	_, answered, lastFailed := e.informersTimeline(t, stopped)
	returned := e.apisAnsweredAgain(t, stopped)
	outage := returned["image.openshift.io"].Sub(down)
	t.Logf("image.openshift.io answered 503 for %.1f s", outage.Seconds())
	if outage >= availability.MaxHold {
		t.Fatalf("the restart took %s, longer than a held read waits (%s): this test needs a shorter outage", outage, availability.MaxHold)
	}
	for resource, group := range map[string]string{"imagestreams": "image.openshift.io", "templates": "template.openshift.io"} {
		// How soon after the return is the promised figure (a second), logged here and measured
		// by make bench. It does not tell the held reads from their absence: a reflector's retry
		// may fall just after the return. Their asking again does: a held read asks every
		// PollInterval, while a reflector that has met 503s for ten seconds waits more than 5.2 s
		// between two tries (800 ms doubling, jitter up to as much again: its third wait, if it
		// still runs then, began by 4.8 s and ends after 10 s).
		late := answered[resource].Sub(returned[group])
		t.Logf("the informer of %s re-listed %.2f s after %s answered again", resource, late.Seconds(), group)
		asked := answered[resource].Sub(lastFailed[resource])
		t.Logf("the informer of %s asked %.2f s before its re-list, and met a 503", resource, asked.Seconds())
		if asked > heldReadGap {
			t.Errorf("the informer of %s re-listed %.2f s after its last 503, want within %s: its read was not held and asked again every %s",
				resource, asked.Seconds(), heldReadGap, availability.PollInterval)
		}
	}

	eventually(t, 10*time.Second, func() (bool, string) { return e.imageStreamExists("python"), "python not back" })
	created := e.operatorRequests(t, verb("create"), on("imagestreams"), named("python"), receivedAfter(down), carriedOut)
	if len(created) == 0 {
		t.Fatal("python is back, but not by the operator's create")
	}
	back, afterRelist := created[0].Received.Sub(returned["image.openshift.io"]), created[0].Received.Sub(answered["imagestreams"])
	t.Logf("python, deleted during the outage, was created again %.2f s after image.openshift.io answered again (%.2f s after the re-list of imagestreams)",
		back.Seconds(), afterRelist.Seconds())
	// The held read is timed above, at the re-lists. What is left to show is that the re-list's
	// delete event brings python back, not the next resync (ten minutes): on a machine whose
	// cores are busy the event's handling alone took 2.1 s, so the bound is that of an event
	// handled under load. The promised second from the return is the figure logged above.
	if afterRelist > eventUnderLoad {
		t.Errorf("python, deleted during the outage, was created again %.2f s after the re-list of imagestreams, want within %s; the operator's requests of it: %v",
			afterRelist.Seconds(), eventUnderLoad, describe(e.operatorRequests(t, on("imagestreams"), named("python"), receivedAfter(down))))
	}
}

// eventUnderLoad bounds the operator's answer to an informer event on a machine whose cores are
// busy: far below the shipped resync of ten minutes, which is what answers without the event.
const eventUnderLoad = 5 * time.Second

// heldReadGap bounds the time between an informer's last 503 and its re-list: above a held
// read's PollInterval on a loaded machine, below the 5.2 s a reflector waits at the least after
// ten seconds of 503s.
const heldReadGap = 5 * availability.PollInterval

// newSettledEnvOnRealOpenShiftAPIServer is an env on the real openshift-apiserver (the test
// skips without it) with the operator started with opts, the samples installed, the
// ClusterOperator AsExpected and the operator quiet: ready for the server to go down.
func newSettledEnvOnRealOpenShiftAPIServer(t *testing.T, opts operator.Options) (*env, *inventory.Inventory) {
	t.Helper()
	e := newEnv(t)
	requireReal(t, "openshift-apiserver", e.cp.RealOpenShiftAPIServer(), "the stand-ins' image and template APIs are kube-apiserver's own CRDs: they cannot go down alone (docs/testing.md, differences)")
	inv := x86Inventory(t)
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	e.waitClusterOperator(t, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionFalse, "AsExpected", "v1")
	e.waitQuiet(t, 3*time.Second)
	return e, inv
}

// informersAnswered is informersTimeline without the last 503s.
func (e *env) informersAnswered(t *testing.T, t0 time.Time) (failed, answered map[string]time.Time) {
	t.Helper()
	failed, answered, _ = e.informersTimeline(t, t0)
	return failed, answered
}

// informersTimeline reads the operator's lists and watches of imagestreams and templates after
// t0: per resource, the first answered 503, the first answered 200 after that (its re-list) and
// the last 503 before that 200. A streaming list (a WATCH that sends the objects first) is still
// open once its informer has re-listed: it is in the audit log only as ResponseStarted, which
// operatorRequests leaves out, so the log is read here whole.
func (e *env) informersTimeline(t *testing.T, t0 time.Time) (failed, answered, lastFailed map[string]time.Time) {
	t.Helper()
	data, err := os.ReadFile(e.cp.AuditLogPath)
	if err != nil {
		t.Fatal(err)
	}
	var unavailable []controlplane.AuditEvent
	failed, answered, lastFailed = map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"imagestreams"`)) && !bytes.Contains(line, []byte(`"templates"`)) {
			continue // most of the log, left unparsed
		}
		ev, ok := controlplane.ParseAuditLine(line)
		if !ok || ev.User != controlplane.OperatorUser || (ev.Verb != "list" && ev.Verb != "watch") || !onSamples(ev) || !ev.Received.After(t0) {
			continue
		}
		switch {
		case ev.Code == 503:
			unavailable = append(unavailable, ev)
			if failed[ev.Resource].IsZero() {
				failed[ev.Resource] = ev.Received
			}
		case ev.Code == 200 && !failed[ev.Resource].IsZero() && ev.Received.After(failed[ev.Resource]) && answered[ev.Resource].IsZero():
			answered[ev.Resource] = ev.Received
		}
	}
	for _, ev := range unavailable {
		if re := answered[ev.Resource]; !re.IsZero() && ev.Received.Before(re) && ev.Received.After(lastFailed[ev.Resource]) {
			lastFailed[ev.Resource] = ev.Received
		}
	}
	return failed, answered, lastFailed
}

// apisAnsweredAgain reads, per API group of the samples, the first request (anyone's, a watch
// still open included) that its server answered, a code other than 503, after the first 503
// received after t0: a request received as the server was stopping is answered still, while it
// drains, and says nothing of its return.
func (e *env) apisAnsweredAgain(t *testing.T, t0 time.Time) map[string]time.Time {
	t.Helper()
	data, err := os.ReadFile(e.cp.AuditLogPath)
	if err != nil {
		t.Fatal(err)
	}
	var events []controlplane.AuditEvent
	down := map[string]time.Time{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"image.openshift.io"`)) && !bytes.Contains(line, []byte(`"template.openshift.io"`)) {
			continue
		}
		ev, ok := controlplane.ParseAuditLine(line)
		if !ok || ev.Code == 0 || !ev.Received.After(t0) {
			continue
		}
		events = append(events, ev)
		if at, seen := down[ev.Group]; ev.Code == 503 && (!seen || ev.Received.Before(at)) {
			down[ev.Group] = ev.Received
		}
	}
	first := map[string]time.Time{}
	for _, ev := range events {
		at, seen := first[ev.Group]
		if since, wasDown := down[ev.Group]; wasDown && ev.Code != 503 && ev.Received.After(since) && (!seen || ev.Received.Before(at)) {
			first[ev.Group] = ev.Received
		}
	}
	return first
}

// TestOpenShiftAPIServerDownAndBackWhileAMirrorSetChanges: while two imagestreams fail to import,
// openshift-apiserver is away for 90 s, and an admin creates a mirror set meanwhile, which asks
// for every failing import to be retried at once and again once the server can have it
// (operator.ServerCacheLag). Each attempt the aggregator answers 503 takes the stream's turn, so
// the outage costs at most 4 imports per failing stream, counted from the API server's audit
// log until 10 s after the server is back. Sent back through the factory's backoff (5 ms,
// doubling) the 503s would cost a dozen or more per stream.
func TestOpenShiftAPIServerDownAndBackWhileAMirrorSetChanges(t *testing.T) {
	parallel(t, 2*aboutAMinute)
	e := newEnv(t)
	requireReal(t, "openshift-apiserver", e.cp.RealOpenShiftAPIServer(), "the stand-ins' image and template APIs are kube-apiserver's own CRDs: they cannot go down alone (docs/testing.md, differences)")
	inv := x86Inventory(t)
	failing := []string{"python", "ruby"}
	e.failImportsOf(inv, failing)
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	e.onlyTheseFail(t, inv, failing)
	e.waitQuiet(t, 3*time.Second)

	down := time.Now()
	if err := e.cp.StopOpenShiftAPIServer(); err != nil {
		t.Fatal(err)
	}
	idle(t, 5*time.Second)
	e.createTagMirrorSet(t, &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "during-the-outage"},
		Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: []configv1.ImageTagMirrors{
			{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"mirror.invalid:5000/rh"}}}}})
	idle(t, time.Until(down.Add(90*time.Second)))
	if err := e.cp.StartOpenShiftAPIServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	idle(t, 10*time.Second)

	// kube-apiserver's log names no import it could not hand to openshift-apiserver (it does not
	// decode the body): all of them are counted, for the two streams together.
	var answers []string
	imports := e.operatorRequests(t, verb("create"), on("imagestreamimports"), receivedAfter(down), receivedBefore(back.Add(10*time.Second)))
	for _, ev := range imports {
		answers = append(answers, fmt.Sprintf("+%.1fs %d", ev.Received.Sub(down).Seconds(), ev.Code))
	}
	t.Logf("openshift-apiserver away %.1f s; the operator's imports since it went: %v", back.Sub(down).Seconds(), answers)
	if limit := 4 * len(failing); len(imports) > limit {
		t.Errorf("%d imports for %d failing streams during the outage and 10 s after it, want at most %d", len(imports), len(failing), limit)
	}
	if len(imports) == 0 {
		t.Error("no import at all since the mirror set was created: it retried nothing")
	}
}
