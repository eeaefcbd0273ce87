package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	samplesv1 "github.com/openshift/api/samples/v1"
)

// TestBootstrapManagedInstallsEverything: with no Config, the operator creates the default one
// (finalizer, architecture from GOARCH, Managed) and installs every inventory sample; the audit log
// shows one create per sample, a few Config writes, and nothing else written.
func TestBootstrapManagedInstallsEverything(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")

	cfg := e.getConfig()
	if len(cfg.Finalizers) != 1 || cfg.Finalizers[0] != samplesv1.ConfigFinalizer {
		t.Errorf("finalizers = %v, want [%s]", cfg.Finalizers, samplesv1.ConfigFinalizer)
	}
	if len(cfg.Spec.Architectures) != 1 || cfg.Spec.Architectures[0] != "x86_64" || cfg.Spec.ManagementState != "Managed" {
		t.Errorf("spec = %+v, want architectures [x86_64], Managed", cfg.Spec)
	}
	for _, ct := range []samplesv1.ConfigConditionType{samplesv1.SamplesExist, samplesv1.ConfigurationValid, samplesv1.ImportCredentialsExist} {
		if !conditionIs(cfg, ct, "True") {
			t.Errorf("condition %s is not True: %+v", ct, cfg.Status.Conditions)
		}
	}
	for _, ct := range []samplesv1.ConfigConditionType{samplesv1.RemovePending, samplesv1.ImageChangesInProgress, samplesv1.MigrationInProgress, samplesv1.ImportImageErrorsExist} {
		if !conditionIs(cfg, ct, "False") {
			t.Errorf("condition %s is not False: %+v", ct, cfg.Status.Conditions)
		}
	}

	objects := len(inv.ImageStreamNames()) + len(inv.TemplateNames())
	writes := e.operatorWrites(t)
	creates := writes["create imagestreams"] + writes["create templates"]
	if creates != objects {
		t.Errorf("sample creates = %d, want one per sample (%d); writes: %v; creates beyond the first of each sample:\n%s",
			creates, objects, writes, strings.Join(e.extraCreates(t), "\n")+"\nall:\n"+strings.Join(describe(e.operatorRequests(t, verb("create"), onSamples)), "\n"))
	}
	total := 0
	for _, n := range writes {
		total += n
	}
	if total > objects+10 {
		t.Errorf("initial sync made %d writes for %d samples (budget objects+10): %v", total, objects, writes)
	}
	t.Logf("initial sync: %d samples, %d writes: %v", objects, total, writes)
}

// waitQuiet waits until the operator has written nothing for the given time.
func (e *env) waitQuiet(t *testing.T, quiet time.Duration) {
	t.Helper()
	eventually(t, 30*time.Second, func() (bool, string) { return e.quietFor(t, quiet) })
}

// quietFor says whether the operator has no write in flight and has completed none for the
// given time. A write whose object is already stored may not be in the completed ones yet.
func (e *env) quietFor(t *testing.T, quiet time.Duration) (bool, string) {
	t.Helper()
	// In flight first: a write that completes between the two reads is then among the
	// completed ones.
	if inFlight := e.operatorWritesInFlight(t); len(inFlight) > 0 {
		return false, describe(inFlight)[0] + ": in flight"
	}
	var last time.Time
	for _, ev := range e.operatorRequests(t, writes) {
		if ev.Time.After(last) {
			last = ev.Time
		}
	}
	return time.Since(last) > quiet, fmt.Sprintf("last write %s ago", time.Since(last))
}
