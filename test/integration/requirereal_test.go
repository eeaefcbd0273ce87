package integration

import (
	"fmt"
	"os"
	"testing"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// requireReal is for a test that runs only against a real OpenShift server (the CVO,
// openshift-apiserver, openshift-controller-manager's import controllers, the test registry):
// when have is false it skips the test where OPENSHIFT_BIN_DIR is unset, and fails it where it
// is set, since a run against the real servers that skipped it would pass having tested nothing.
// why says what is missing. hack/test-report lists each skip and, with OPENSHIFT_BIN_DIR set,
// fails the run on one that begins "needs the real" (its needsReal).
func requireReal(t testing.TB, what string, have bool, why string) {
	t.Helper()
	requireRealIn(t, os.Getenv(controlplane.OpenShiftBinDirEnv), what, have, why)
}

// requireRealIn is requireReal with OPENSHIFT_BIN_DIR's value given.
func requireRealIn(t testing.TB, binDir, what string, have bool, why string) {
	t.Helper()
	if have {
		return
	}
	if binDir != "" {
		t.Fatalf("%s=%s, yet no real %s: %s", controlplane.OpenShiftBinDirEnv, binDir, what, why)
		return
	}
	t.Skipf("needs the real %s: %s", what, why)
}

// recordingTB records how requireRealIn ends a test instead of ending it.
type recordingTB struct {
	testing.TB
	fatal, skip string
}

func (r *recordingTB) Helper()                        {}
func (r *recordingTB) Fatalf(format string, a ...any) { r.fatal = fmt.Sprintf(format, a...) }
func (r *recordingTB) Skipf(format string, a ...any)  { r.skip = fmt.Sprintf(format, a...) }

// TestRequireRealFailsWhereTheRealServersAreSet: a test that misses a real server is skipped
// without OPENSHIFT_BIN_DIR, fails with it, and goes on when it has what it needs.
func TestRequireRealFailsWhereTheRealServersAreSet(t *testing.T) {
	for _, tc := range []struct {
		binDir      string
		have        bool
		fatal, skip string
	}{
		{binDir: "", have: false, skip: "needs the real cluster-version-operator: none here"},
		{binDir: "/srv/openshift", have: false, fatal: "OPENSHIFT_BIN_DIR=/srv/openshift, yet no real cluster-version-operator: none here"},
		{binDir: "/srv/openshift", have: true},
		{binDir: "", have: true},
	} {
		r := &recordingTB{}
		requireRealIn(r, tc.binDir, "cluster-version-operator", tc.have, "none here")
		if r.fatal != tc.fatal || r.skip != tc.skip {
			t.Errorf("OPENSHIFT_BIN_DIR=%q have=%v: failed with %q and skipped with %q, want %q and %q", tc.binDir, tc.have, r.fatal, r.skip, tc.fatal, tc.skip)
		}
	}
}
