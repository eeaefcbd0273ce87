package configstatuscontrol

import (
	"sync"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// fixedAccess is an operator whose access to the samples is as given, and to the pull secret
// granted.
type fixedAccess access.State

func (a fixedAccess) Verdict() access.Verdict {
	return access.Verdict{access.Samples: access.State(a), access.PullSecret: access.Granted}
}
func (fixedAccess) InstalledByOLM() bool { return false }
func (fixedAccess) OnChange(func())      {}

// laterVerdicts are verdicts on the samples that are made when the test says.
type laterVerdicts struct {
	mu        sync.Mutex
	ready     bool
	listeners []func(kind, name string)
}

func (v *laterVerdicts) Ready() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ready
}
func (*laterVerdicts) Marks(string, string) desired.Marks { return nil }
func (*laterVerdicts) All() []usability.Verdict           { return nil }
func (v *laterVerdicts) OnChange(f func(kind, name string)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.listeners = append(v.listeners, f)
}

// made makes the first verdicts, as Verdicts.set does: every sample is told.
func (v *laterVerdicts) made() {
	v.mu.Lock()
	v.ready = true
	listeners := v.listeners
	v.mu.Unlock()
	for _, f := range listeners {
		f(samplewriter.TemplateKind, "rails-postgresql-example")
	}
}

// TestNoStatusBeforeTheFirstVerdicts: samples found in place (a takeover, a restart) would be
// reported installed before the operator has judged which can work here, and then not installed
// once the judged ones are marked a moment later; so the status waits for the first verdicts,
// whose arrival brings it back. Without access to the samples the judging never starts: the
// status is written at once, to say what to grant.
func TestNoStatusBeforeTheFirstVerdicts(t *testing.T) {
	t.Run("access granted", func(t *testing.T) { statusBeforeAndAfterTheFirstVerdicts(t, access.Granted) })
	t.Run("access to the samples missing", func(t *testing.T) { statusBeforeAndAfterTheFirstVerdicts(t, access.Missing) })
}

func statusBeforeAndAfterTheFirstVerdicts(t *testing.T, samplesAccess access.State) {
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
	}
	verdicts := &laterVerdicts{}
	f := newFixtureJudgedBy(t, cfg, fixedAccess(samplesAccess), verdicts)
	f.run(t)

	statusWrites := func() int {
		n := 0
		for _, a := range f.samples.Actions() {
			if a.GetVerb() == "update" && a.GetSubresource() == "status" {
				n++
			}
		}
		return n
	}
	// The controller is at work: it listens for the verdicts once it runs.
	deadline := time.Now().Add(5 * time.Second)
	for verdicts.listenerCount() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if samplesAccess != access.Granted {
		for statusWrites() == 0 && time.Now().Before(deadline.Add(10*time.Second)) {
			time.Sleep(10 * time.Millisecond)
		}
		if statusWrites() == 0 {
			t.Fatal("without access to the samples no status was written: the missing grant is not told")
		}
		return
	}
	time.Sleep(500 * time.Millisecond)
	if n := statusWrites(); n != 0 {
		t.Fatalf("the status was written %d times before the first verdicts", n)
	}

	verdicts.made()
	for statusWrites() == 0 && time.Now().Before(deadline.Add(5*time.Second)) {
		time.Sleep(10 * time.Millisecond)
	}
	if statusWrites() == 0 {
		t.Fatal("no status written after the first verdicts")
	}
	var got *samplesv1.Config
	for _, a := range f.samples.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && u.GetSubresource() == "status" {
			got = u.GetObject().(*samplesv1.Config)
		}
	}
	if got.Status.ManagementState != operatorv1.Managed {
		t.Errorf("the status written after the first verdicts: %+v", got.Status)
	}
}

func (v *laterVerdicts) listenerCount() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.listeners)
}
