package integration

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

func startShared() (*controlplane.ControlPlane, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return controlplane.Start(ctx, controlplane.Options{})
}

func exitWith(code int) { os.Exit(code) }

// requireStandIns skips a test that needs a knob of the stand-ins for openshift-apiserver
// (test/apiserverhooks) when the real server runs (OPENSHIFT_BIN_DIR): what it tests cannot be
// played against the real server.
func requireStandIns(t *testing.T, cp *controlplane.ControlPlane, why string) {
	t.Helper()
	if cp.RealOpenShiftAPIServer() {
		t.Skipf("needs the stand-ins for openshift-apiserver (%s); the real one runs (%s is set)", why, controlplane.OpenShiftBinDirEnv)
	}
}
