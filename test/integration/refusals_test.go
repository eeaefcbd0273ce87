package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/availability"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// imageStreamCount is the object-count quota resource of imagestreams.
const imageStreamCount corev1.ResourceName = "count/imagestreams.image.openshift.io"

// limitImageStreams creates a ResourceQuota in openshift that lets `room` more imagestreams be
// created than there are, and fills its status as the quota controller would (this control plane
// runs no kube-controller-manager; quota admission refuses everything while status.hard is empty).
// It returns how many imagestreams there were.
func (e *env) limitImageStreams(t *testing.T, room int) int {
	t.Helper()
	ctx := context.Background()
	existing, err := e.images.ImageV1().ImageStreams("openshift").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hard := corev1.ResourceList{imageStreamCount: *resource.NewQuantity(int64(len(existing.Items)+room), resource.DecimalSI)}
	quota, err := e.kube.CoreV1().ResourceQuotas("openshift").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "samples"},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	quota.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{
		imageStreamCount: *resource.NewQuantity(int64(len(existing.Items)), resource.DecimalSI)}}
	if _, err := e.kube.CoreV1().ResourceQuotas("openshift").UpdateStatus(ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return len(existing.Items)
}

// forbiddenOnlyByQuota is for a test whose quota refuses imagestream creates: those 403s are
// the point, and the harness's check that the operator is never forbidden (RBAC) becomes one
// that it is forbidden nothing else.
func (e *env) forbiddenOnlyByQuota(t *testing.T) {
	t.Helper()
	e.probesForbidden = true
	t.Cleanup(func() {
		for _, line := range describe(e.operatorRequests(t, answered(403), not(func(ev controlplane.AuditEvent) bool {
			return ev.Verb == "create" && ev.Resource == "imagestreams"
		}))) {
			t.Errorf("the operator was forbidden other than by the quota: %s", line)
		}
	})
}

func (e *env) coCondition(t *testing.T, ct configv1.ClusterStatusConditionType) configv1.ClusterOperatorStatusCondition {
	t.Helper()
	co, err := e.clusterOperator()
	if err != nil {
		t.Fatalf("reading the ClusterOperator: %v", err)
	}
	c := v1helpers.FindStatusCondition(co.Status.Conditions, ct)
	if c == nil {
		return configv1.ClusterOperatorStatusCondition{Type: ct}
	}
	return *c
}

// TestAQuotaRefusingSamplesIsReportedAndHealsWhenItGoes is an admin's ResourceQuota in openshift
// that leaves room for 10 of the samples' imagestreams, on the real openshift-apiserver where CI
// has it (its quota admission answers the eleventh create 403 "exceeded quota") and on
// kube-apiserver's own quota admission otherwise (the stand-ins' imagestreams are CRDs, counted by
// the same plugin).
func TestAQuotaRefusingSamplesIsReportedAndHealsWhenItGoes(t *testing.T) {
	parallel(t, 3*time.Minute)
	e := newEnv(t)
	e.forbiddenOnlyByQuota(t)
	inv := x86Inventory(t)
	const room = 10
	e.limitImageStreams(t, room)
	refusedCount := len(inv.ImageStreamNames()) - room

	start := time.Now()
	e.startOperator(defaultOptions())

	// Within a minute the Config says how many, names the first few and quotes the server.
	var cfg *samplesv1.Config
	eventually(t, time.Minute, func() (bool, string) {
		if cfg = e.configOrNil(); cfg == nil {
			return false, "no Config yet"
		}
		c := configCondition(cfg, samplesv1.SamplesExist)
		if c == nil {
			return false, "no SamplesExist yet"
		}
		want := fmt.Sprintf("refuses to create %d samples (ImageStream/", refusedCount)
		return c.Reason == configstatus.ReasonWritesRefused && strings.Contains(c.Message, want) && strings.Contains(c.Message, "exceeded quota"),
			fmt.Sprintf("SamplesExist %s/%s %q", c.Status, c.Reason, c.Message)
	})
	reported := time.Now()
	refusals := e.operatorRequests(t, verb("create"), on("imagestreams"), answered(403))
	if len(refusals) == 0 {
		t.Fatal("the Config reports refusals, but the audit log shows no refused create")
	}
	firstRefusal := refusals[0].Time
	t.Logf("first refused create %.1f s after the operator started; the Config said so %.1f s after it",
		firstRefusal.Sub(start).Seconds(), reported.Sub(firstRefusal).Seconds())
	if reported.Sub(firstRefusal) > time.Minute {
		t.Errorf("the refusal reached the Config %s after it began, more than a minute", reported.Sub(firstRefusal))
	}
	if c := configCondition(cfg, samplesv1.SamplesExist); c.Status != corev1.ConditionFalse {
		t.Errorf("SamplesExist is %s while the samples were never all installed", c.Status)
	}
	// Everything else installed: templates are not counted by the quota.
	for _, name := range inv.TemplateNames() {
		if !e.templateExists(name) {
			t.Errorf("template %s not installed while only imagestreams are refused", name)
		}
	}

	// The ClusterOperator says it at once in Progressing, and is not Degraded within the grace.
	eventually(t, 10*time.Second, func() (bool, string) {
		p := e.coCondition(t, configv1.OperatorProgressing)
		return p.Status == configv1.ConditionTrue && p.Reason == clusteroperator.ReasonWritesRefused && strings.Contains(p.Message, "exceeded quota"),
			fmt.Sprintf("Progressing %s/%s %q", p.Status, p.Reason, p.Message)
	})
	// One event for the cause, not one per sample or per retry.
	if events := e.eventsWithReason(t, "SampleWritesRefused"); len(events) != 1 || !strings.Contains(events[0], "exceeded quota") {
		t.Errorf("SampleWritesRefused events: %q", events)
	}
	// Not Degraded at any time within the grace (read every few seconds until just before it).
	notDegradedReads := 0
	for time.Until(firstRefusal.Add(clusteroperator.DegradedGrace)) > 3*time.Second {
		if d := e.coCondition(t, configv1.OperatorDegraded); d.Status != configv1.ConditionFalse {
			t.Fatalf("Degraded %s/%s %q %s after the first refusal, before the grace ran out", d.Status, d.Reason, d.Message, time.Since(firstRefusal).Round(time.Second))
		}
		notDegradedReads++
		idle(t, min(5*time.Second, time.Until(firstRefusal.Add(clusteroperator.DegradedGrace))-3*time.Second))
	}
	t.Logf("not Degraded in %d reads within the grace", notDegradedReads)

	// Past the grace, Degraded, with the server's words.
	idle(t, time.Until(firstRefusal.Add(clusteroperator.DegradedGrace)))
	eventually(t, 15*time.Second, func() (bool, string) {
		d := e.coCondition(t, configv1.OperatorDegraded)
		return d.Status == configv1.ConditionTrue && d.Reason == clusteroperator.ReasonWritesRefused && strings.Contains(d.Message, "exceeded quota"),
			fmt.Sprintf("Degraded %s/%s %q", d.Status, d.Reason, d.Message)
	})
	degradedAfter := time.Since(firstRefusal)
	t.Logf("Degraded %.1f s after the first refusal", degradedAfter.Seconds())
	if degradedAfter < clusteroperator.DegradedGrace {
		t.Errorf("Degraded %s after the first refusal, before the grace", degradedAfter)
	}
	// ... and once the grace has run out (docs/admin-guide.md), not at some later event: the
	// wait above is only patience.
	if degradedAfter > clusteroperator.DegradedGrace+statusWriteAllowance {
		t.Errorf("Degraded %.1f s after the first refusal, more than the grace (%s) and a status write", degradedAfter.Seconds(), clusteroperator.DegradedGrace)
	}

	// Refused creates: at most two per sample in the second minute, and few in all.
	refused := func(from, to time.Time) int {
		return len(e.operatorRequests(t, verb("create"), on("imagestreams"), answered(403), receivedAfter(from), receivedBefore(to)))
	}
	firstMinute := refused(firstRefusal.Add(-time.Millisecond), firstRefusal.Add(time.Minute))
	secondMinute := refused(firstRefusal.Add(time.Minute), firstRefusal.Add(2*time.Minute))
	t.Logf("refused creates: %d in the first minute, %d in the second (%d samples refused)", firstMinute, secondMinute, refusedCount)
	if secondMinute > 2*refusedCount {
		t.Errorf("%d refused creates in the second minute for %d refused samples: more than two each", secondMinute, refusedCount)
	}
	// ... and at least one each: a refused sample is retried at least once a minute.
	if secondMinute < refusedCount {
		t.Errorf("%d refused creates in the second minute for %d refused samples: some were not retried", secondMinute, refusedCount)
	}
	if firstMinute > 7*refusedCount {
		t.Errorf("%d refused creates in the first minute for %d refused samples", firstMinute, refusedCount)
	}

	// The quota goes: the operator looks again at once, and every sample is there well before
	// the next scheduled retries. By now each refused sample waits a minute between retries, at
	// its own phase: without the quota's deletion retrying them at once, the last would heal
	// close to a minute later. (With it: 7.5 s alone, 18.7 s beside two other tests; the
	// server's quota cache may refuse the first retries, which then back off from a second.)
	//
	// Mid-interval: the quota goes two seconds after a retry was refused, so the samples refused
	// then have their next scheduled retry almost a minute later. Each sample must heal well
	// before its own next scheduled retry (its last refusal plus MaxRefusalRetry), which only the
	// deletion's trigger can bring about.
	asked := time.Now()
	// The refused samples' retries come on their schedule, a minute apart by now: the turn is
	// lent meanwhile.
	idleUntil(t, refusal.MaxRefusalRetry+10*time.Second, 20*time.Millisecond, func() (bool, string) {
		n := len(e.operatorRequests(t, verb("create"), on("imagestreams"), answered(403), receivedAfter(asked)))
		return n > 0, "no refused retry yet"
	})
	idle(t, 2*time.Second)
	removed := time.Now()
	if err := e.kube.CoreV1().ResourceQuotas("openshift").Delete(context.Background(), "samples", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	healed := within(t, time.Minute, func() (bool, string) { return e.samplesInPlace(inv, "v1", nil, nil) })
	t.Logf("every sample installed %.1f s after the quota was deleted", healed.Seconds())
	if healed > 30*time.Second {
		t.Errorf("the samples healed %s after the quota was deleted: not at once, but at their scheduled retries", healed.Round(100*time.Millisecond))
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.SamplesExist)
		d := e.coCondition(t, configv1.OperatorDegraded)
		return c.Status == corev1.ConditionTrue && c.Reason == configstatus.ReasonInstalled && d.Status == configv1.ConditionFalse,
			fmt.Sprintf("SamplesExist %s/%s, Degraded %s/%s", c.Status, c.Reason, d.Status, d.Reason)
	})
	if events := e.eventsWithReason(t, "SampleWritesAccepted"); len(events) != 1 {
		t.Errorf("SampleWritesAccepted events: %q", events)
	}
	if n := len(e.operatorRequests(t, verb("create"), on("imagestreams"), answered(403), receivedAfter(removed.Add(time.Second)))); n != 0 {
		t.Errorf("%d creates refused after the quota was gone", n)
	}
	lastRefused, created := map[string]time.Time{}, map[string]time.Time{}
	for _, ev := range e.operatorRequests(t, verb("create"), on("imagestreams")) {
		switch {
		case ev.Code == 403 && ev.Received.Before(removed):
			lastRefused[ev.Name] = ev.Received
		case ev.Code == 201 && ev.Received.After(removed) && created[ev.Name].IsZero():
			created[ev.Name] = ev.Received
		}
	}
	early := 0
	for name, refused := range lastRefused {
		scheduled := refused.Add(refusal.MaxRefusalRetry)
		if scheduled.Sub(removed) < 35*time.Second {
			continue // its scheduled retry came soon after the deletion anyway: proves nothing
		}
		if at := created[name]; at.IsZero() || !at.Before(scheduled.Add(-5*time.Second)) {
			t.Errorf("ImageStream %s was created %s after the quota went, at its scheduled retry (%s after it), not at once",
				name, at.Sub(removed).Round(100*time.Millisecond), scheduled.Sub(removed).Round(100*time.Millisecond))
			continue
		}
		early++
	}
	t.Logf("%d samples healed well before their next scheduled retry", early)
	if early == 0 {
		t.Error("no sample had its next scheduled retry late enough after the deletion to tell")
	}
}

// statusWriteAllowance is how much later than a grace's end a test accepts Degraded: the status
// controller's sync and write, at that moment, beside two other tests.
const statusWriteAllowance = 2 * time.Second

// TestOpenShiftAPIServerDownAndBack stops the real openshift-apiserver under a running operator,
// as a rolling restart would, for less than the grace (longer than a held read's bound) and then
// for longer than the grace. The grace is shortened from OpenShift's two minutes to outageGrace:
// the test is about what happens on either side of it, not about its length.
func TestOpenShiftAPIServerDownAndBack(t *testing.T) {
	parallel(t, 3*time.Minute)
	// Longer than the first outage, openshift-apiserver's restart included (20 s and more on a
	// loaded machine: CI saw the first outage last 57 s).
	const outageGrace = 90 * time.Second
	opts := defaultOptions()
	opts.DegradedGrace = outageGrace
	e, inv := newSettledEnvOnRealOpenShiftAPIServer(t, opts)
	ctx := context.Background()

	// Down for longer than a held read waits (availability.MaxHold), shorter than the grace:
	// nothing an admin must act on.
	down := time.Now()
	if err := e.cp.StopOpenShiftAPIServer(); err != nil {
		t.Fatal(err)
	}
	checkUnmoved := func(phase string) {
		t.Helper()
		a, d := e.coCondition(t, configv1.OperatorAvailable), e.coCondition(t, configv1.OperatorDegraded)
		if a.Status != configv1.ConditionTrue || d.Status != configv1.ConditionFalse || d.LastTransitionTime.After(down) {
			t.Errorf("%s: Available %s/%s, Degraded %s/%s since %s", phase, a.Status, a.Reason, d.Status, d.Reason, d.LastTransitionTime)
		}
	}
	for i := 0; time.Since(down) < availability.MaxHold+5*time.Second; i++ {
		idle(t, 5*time.Second)
		checkUnmoved(fmt.Sprintf("%d s down", (i+1)*5))
	}
	if err := e.cp.StartOpenShiftAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	t.Logf("openshift-apiserver was down %.1f s", back.Sub(down).Seconds())

	// Nothing written after its return: the operator's caches come back as they were. Checked
	// once the informers have surely re-listed, and over a window after that: a cache
	// that came back wrong would be written from only then.
	relisted := e.waitSamplesInformersAnswered(t, down)
	t.Logf("the informers of imagestreams and templates were answered again %.1f s after openshift-apiserver returned", relisted.Sub(back).Seconds())
	idle(t, 5*time.Second)
	if written := e.sampleWritesSince(t, down); len(written) != 0 {
		t.Errorf("samples written after the outage: %v", written)
	}
	checkUnmoved("after the return")
	// And a delete is reverted at once.
	if err := e.images.ImageV1().ImageStreams("openshift").Delete(ctx, "python", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	took := within(t, time.Second*patience, func() (bool, string) { return e.imageStreamExists("python"), "python not back" })
	t.Logf("a deleted imagestream came back %s after the delete, %.1f s after openshift-apiserver returned", took, time.Since(back).Seconds())
	// A second, as TestDriftIsRevertedWithinASecond measures alone; this test runs beside others,
	// so it allows the package's patience on top.
	if took > time.Second*patience {
		t.Errorf("the delete was reverted %s after it, more than %d s", took, patience)
	}

	// Longer than the grace: Degraded, naming the API; cleared once it answers.
	e.waitQuiet(t, 2*time.Second)
	down = time.Now()
	if err := e.cp.StopOpenShiftAPIServer(); err != nil {
		t.Fatal(err)
	}
	idle(t, outageGrace)
	eventually(t, 30*time.Second, func() (bool, string) {
		d := e.coCondition(t, configv1.OperatorDegraded)
		return d.Status == configv1.ConditionTrue && d.Reason == clusteroperator.ReasonAPIUnavailable && strings.Contains(d.Message, "image.openshift.io/v1"),
			fmt.Sprintf("Degraded %s/%s %q", d.Status, d.Reason, d.Message)
	})
	degradedSeen := time.Now()
	// Degraded, naming image.openshift.io, once that API has answered 503 for the grace
	// (docs/admin-guide.md), measured from the first 503 its informer met; the wait above is
	// only patience.
	if failed, _ := e.informersAnswered(t, down); !failed["imagestreams"].IsZero() {
		late := degradedSeen.Sub(failed["imagestreams"]) - outageGrace
		t.Logf("Degraded %.1f s after the grace ran out from the first 503 of image.openshift.io", late.Seconds())
		if late > statusWriteAllowance {
			t.Errorf("Degraded %.1f s after the grace ran out from the first 503 of image.openshift.io, want it then", late.Seconds())
		}
	} else {
		t.Error("the audit log shows no 503 answered to the operator's informer of imagestreams")
	}
	t.Logf("Degraded %.1f s after openshift-apiserver stopped: %s", time.Since(down).Seconds(), e.coCondition(t, configv1.OperatorDegraded).Message)
	if a := e.coCondition(t, configv1.OperatorAvailable); a.Status != configv1.ConditionTrue {
		t.Errorf("Available %s/%s during the outage: the samples were there when last seen", a.Status, a.Reason)
	}
	if err := e.cp.StartOpenShiftAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	back = time.Now()
	cleared := within(t, 20*time.Second*patience, func() (bool, string) {
		d := e.coCondition(t, configv1.OperatorDegraded)
		return d.Status == configv1.ConditionFalse, fmt.Sprintf("Degraded %s/%s", d.Status, d.Reason)
	})
	t.Logf("Degraded cleared %.1f s after openshift-apiserver returned", cleared.Seconds())
	if _, err := e.images.ImageV1().ImageStreams("openshift").Get(ctx, "python", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Error("python missing after the outage")
	}
	e.waitManaged(t, inv, "v1")
}

// waitSamplesInformersAnswered waits until the operator's informers of imagestreams and of
// templates, having met a 503 after t0, have each had a LIST or WATCH answered 200 after it: their
// re-list (informersAnswered). It returns when the later was received.
func (e *env) waitSamplesInformersAnswered(t *testing.T, t0 time.Time) time.Time {
	t.Helper()
	var last time.Time
	eventuallyEvery(t, 2*time.Minute, time.Second, func() (bool, string) {
		failed, answered := e.informersAnswered(t, t0)
		is, tmpl := answered["imagestreams"], answered["templates"]
		last = is
		if tmpl.After(last) {
			last = tmpl
		}
		return !is.IsZero() && !tmpl.IsZero(), fmt.Sprintf("since %s, first 503: %v; first 200 after it: %v", t0.Format("15:04:05.000"), failed, answered)
	})
	return last
}
