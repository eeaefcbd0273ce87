package controlplane

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// fakeTest is a test StartForTest is handed: it runs the cleanups when told (end) and keeps
// what they log; everything else goes to the real test.
type fakeTest struct {
	testing.TB
	name     string
	failed   bool
	cleanups []func()
	logs     []string
	errors   []string
}

func (f *fakeTest) Name() string      { return f.name }
func (f *fakeTest) Failed() bool      { return f.failed }
func (f *fakeTest) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTest) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeTest) Errorf(format string, args ...any) {
	f.failed = true
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTest) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// A test that fails on a recycled control plane prints the control plane's history: which test
// had it before, and what the reset after that test undid. A leak of the earlier test then shows
// where it comes from.
func TestAFailedTestPrintsTheHistoryOfItsControlPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	// The prewarmer is this test's own, not the package's: the test runs beside the others.
	t.Parallel()
	// One control plane, ready before the prewarmer hands any out; its other starts (the refill
	// each take sets off) wait until the end. Had the first start to ask made the one, the refill
	// could win that race against the taker, which then waited for ever (the package's timeout).
	first := startDefault()
	if first.err != nil {
		t.Fatal(first.err)
	}
	release := make(chan struct{})
	p := &prewarmer{
		starter: func() startResult {
			<-release
			return startResult{err: errors.New("one control plane is enough here")}
		},
		recycler: recycleDefault,
	}
	p.enabled, p.atOnce, p.spares, p.arrived = true, 1, 1, make(chan struct{})
	p.ready = []startResult{first}
	defer func() {
		close(release)
		p.mu.Lock()
		p.enabled = false
		left := p.ready
		p.mu.Unlock()
		p.pending.Wait()
		for _, r := range left {
			if r.cp != nil {
				r.cp.Stop()
			}
		}
		p.stops.Wait()
	}()

	earlier := &fakeTest{TB: t, name: "TestThatLeftAMess"}
	cp := p.startForTestWith(earlier, Options{})
	kube := kubernetes.NewForConfigOrDie(cp.AdminConfig)
	if _, err := kube.CoreV1().ConfigMaps("openshift").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mess"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	earlier.end()
	if len(earlier.logs) > 0 {
		t.Errorf("a test that passed logged: %v", earlier.logs)
	}

	later := &fakeTest{TB: t, name: "TestThatFailed", failed: true}
	if got := p.startForTestWith(later, Options{}); got != cp {
		t.Fatal("the later test did not get the earlier one's control plane back: this test shows nothing")
	}
	later.end()
	logged := strings.Join(later.logs, "\n")
	for _, want := range []string{
		"history of the control plane",
		"handed to TestThatLeftAMess",
		"TestThatLeftAMess ended: passed",
		"deleted 1 configmaps in openshift (mess)",
		"handed to TestThatFailed",
		"TestThatFailed ended: failed",
	} {
		if !strings.Contains(logged, want) {
			t.Errorf("the failed test's log does not say %q:\n%s", want, logged)
		}
	}
	if i := strings.Index(logged, "--- history"); i >= 0 {
		t.Logf("what the failed test logged of its control plane's history:\n%s", logged[i:])
	}
}
