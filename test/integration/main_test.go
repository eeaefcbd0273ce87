// Package integration holds the tests that run against the local control plane.
package integration

import (
	"flag"
	"strconv"
	"sync"
	"testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// sharedControlPlane is for tests that only create objects of their own and need no
// operator: they share one API server to save its start-up time. Tests that run the operator
// start a control plane of their own with controlplane.StartForTest.
var (
	sharedOnce sync.Once
	shared     *controlplane.ControlPlane
	sharedErr  error
)

func sharedControlPlane(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	sharedOnce.Do(func() {
		shared, sharedErr = startShared()
	})
	if sharedErr != nil {
		t.Fatalf("starting the shared control plane: %v", sharedErr)
	}
	return shared
}

// Most tests run the operator on a control plane of their own and spend their time waiting (for
// resyncs, retries, steady windows), so they call t.Parallel and make runs them a few at a time.
// Tests stay sequential (they run first, each alone) when they time something tightly (a
// revert within a second), flood the machine, bind a fixed port, or share the control plane of
// sharedControlPlane. Every test that waits on something the operator does runs in parallel,
// so the sequential ones are kept few and short: the parallel phase is where the cores are used.
//
// A test whose subtests run in parallel with each other (one per arch-dir, alert
// cluster or cluster profile) does not call t.Parallel itself. It then runs in the sequential
// phase, its subtests side by side, before the other tests start. As a parallel test its
// subtests queued behind every other test, and the package ended with one such test's last
// subtests running alone for a minute and a half.
func TestMain(m *testing.M) {
	// Each test that runs the operator gets a fresh control plane; the next one starts while the
	// current test runs (see controlplane.EnablePrewarm).
	// As many control planes started ahead as tests run at once.
	flag.Parse()
	ahead := 1
	if f := flag.Lookup("test.parallel"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil {
			ahead = n
		}
	}
	defaultMetricsPort.hold(metrics.DefaultBindAddress)
	controlplane.EnablePrewarm(ahead)
	setUpKlog()
	code := m.Run()
	controlplane.StopPrewarmed()
	defaultMetricsPort.release()
	if shared != nil {
		shared.Stop()
	}
	exitWith(code)
}
