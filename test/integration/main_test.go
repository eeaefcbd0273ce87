// Package integration holds the tests that run against the local control plane.
package integration

import (
	"flag"
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
	sharedMu.Lock()
	stopped := sharedStopped
	sharedMu.Unlock()
	if stopped {
		t.Fatal("the shared control plane serves the sequential tests only: it stops once the parallel ones run")
	}
	sharedOnce.Do(func() {
		shared, sharedErr = startShared()
	})
	if sharedErr != nil {
		t.Fatalf("starting the shared control plane: %v", sharedErr)
	}
	return shared
}

var (
	sharedMu      sync.Mutex
	sharedStopped bool
)

// stopSharedControlPlane stops the shared control plane once the parallel tests run: only
// sequential tests use it, and every sequential test has ended when a parallel one starts
// (go test holds the parallel tests until then). An idle control plane costs about 3.5 % of a
// core, about 30 CPU-s over the parallel phase of a CI run.
func stopSharedControlPlane() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedStopped {
		return
	}
	sharedStopped = true
	if shared != nil {
		shared.Stop()
	}
}

// Most tests run the operator on a control plane of their own and spend much of their time
// waiting (for resyncs, retries, steady windows), so they run in parallel, as many at once as
// -parallel says and the longest first (parallel). Tests stay sequential (they run first, each
// alone) when they time something tightly (a revert within a second), flood the machine, bind a
// fixed port, or share the control plane of sharedControlPlane; they are kept few and short,
// since the parallel phase is where the cores are used.
func TestMain(m *testing.M) {
	flag.Parse()
	atOnce := takeOverParallelism()
	defaultMetricsPort.hold(metrics.DefaultBindAddress)
	// Each test that runs the operator gets a fresh control plane; the next one starts or is
	// reset while the current tests run (see controlplane.EnablePrewarm): one kept ahead, since
	// each more costs its idle servers' CPU and a test that ends gives its own back within a
	// second.
	controlplane.EnablePrewarm(atOnce, 1)
	setUpKlog()
	code := m.Run()
	controlplane.StopPrewarmed()
	defaultMetricsPort.release()
	stopSharedControlPlane()
	removeTestInventory()
	exitWith(code)
}
