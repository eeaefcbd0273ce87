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
	sharedOnce.Do(func() {
		shared, sharedErr = startShared()
	})
	if sharedErr != nil {
		t.Fatalf("starting the shared control plane: %v", sharedErr)
	}
	return shared
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
	// Each test that runs the operator gets a fresh control plane; the next one starts while the
	// current test runs (see controlplane.EnablePrewarm): as many started ahead as tests run at
	// once.
	controlplane.EnablePrewarm(atOnce)
	setUpKlog()
	code := m.Run()
	controlplane.StopPrewarmed()
	defaultMetricsPort.release()
	if shared != nil {
		shared.Stop()
	}
	removeTestInventory()
	exitWith(code)
}
