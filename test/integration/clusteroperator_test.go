package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
)

func (e *env) clusterOperator() (*configv1.ClusterOperator, error) {
	return e.config.ConfigV1().ClusterOperators().Get(context.Background(), "openshift-samples", metav1.GetOptions{})
}

// waitClusterOperator waits until Available/Progressing/Degraded have these statuses and, where
// given, reasons, and the reported version is version ("" for none).
func (e *env) waitClusterOperator(t *testing.T, available, progressing, degraded configv1.ConditionStatus, reason, version string) *configv1.ClusterOperator {
	t.Helper()
	var co *configv1.ClusterOperator
	eventually(t, 20*time.Second, func() (bool, string) {
		var err error
		co, err = e.clusterOperator()
		if err != nil {
			return false, err.Error()
		}
		var got []string
		ok := true
		for _, w := range []struct {
			t configv1.ClusterStatusConditionType
			s configv1.ConditionStatus
		}{{configv1.OperatorAvailable, available}, {configv1.OperatorProgressing, progressing}, {configv1.OperatorDegraded, degraded}} {
			c := v1helpers.FindStatusCondition(co.Status.Conditions, w.t)
			if c == nil {
				return false, fmt.Sprintf("%s missing", w.t)
			}
			got = append(got, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
			ok = ok && c.Status == w.s && (reason == "" || c.Reason == reason)
		}
		gotVersion := ""
		if len(co.Status.Versions) == 1 && co.Status.Versions[0].Name == "operator" {
			gotVersion = co.Status.Versions[0].Version
		}
		return ok && gotVersion == version, fmt.Sprintf("%v versions %v", got, co.Status.Versions)
	})
	return co
}

// TestClusterOperatorFollowsTheSamples walks the ClusterOperator through the states an admin sees:
// installed, invalid configuration, import errors, Removed, Unmanaged, an upgrade, and a deleted
// ClusterOperator that comes back.
func TestClusterOperatorFollowsTheSamples(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	inv := x86Inventory(t)
	T, F := configv1.ConditionTrue, configv1.ConditionFalse
	op := e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	co := e.waitClusterOperator(t, T, F, F, "AsExpected", "v1")
	if len(co.Status.RelatedObjects) != 4 {
		t.Errorf("relatedObjects = %v", co.Status.RelatedObjects)
	}

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "https://bad" })
	co = e.waitClusterOperator(t, T, T, T, "", "v1")
	if d := v1helpers.FindStatusCondition(co.Status.Conditions, configv1.OperatorDegraded); d == nil || d.Reason != "InvalidConfiguration" || !strings.Contains(d.Message, "samplesRegistry") {
		t.Errorf("Degraded = %+v, want InvalidConfiguration naming samplesRegistry", d)
	}
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = "" })
	e.waitClusterOperator(t, T, F, F, "AsExpected", "v1")

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Removed })
	e.waitClusterOperator(t, T, F, F, "CurrentlyRemoved", "v1")
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Unmanaged })
	e.waitClusterOperator(t, T, F, F, "CurrentlyUnmanaged", "v1")
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Managed })
	e.waitManaged(t, inv, "v1")
	e.waitClusterOperator(t, T, F, F, "AsExpected", "v1")

	// Deleted: it comes back with the same status.
	if err := e.config.ConfigV1().ClusterOperators().Delete(context.Background(), "openshift-samples", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitClusterOperator(t, T, F, F, "AsExpected", "v1")

	// Upgrade: the version is reported once every sample carries it.
	op.stop(t)
	opts := defaultOptions()
	opts.Version = "v2"
	e.startOperator(opts)
	e.waitManaged(t, inv, "v2")
	e.waitClusterOperator(t, T, F, F, "AsExpected", "v2")
}

// TestClusterOperatorReportsImportErrorsAndUnreachableRegistry.
func TestClusterOperatorReportsImportErrorsAndUnreachableRegistry(t *testing.T) {
	parallel(t, 0)
	T, F := configv1.ConditionTrue, configv1.ConditionFalse
	t.Run("import errors", func(t *testing.T) {
		e := newEnv(t)
		inv := x86Inventory(t)
		python, _ := inv.ImageStream("python")
		e.importer.FailReference(python.Spec.Tags[0].From.Name, "manifest unknown")
		e.startOperator(defaultOptions())
		e.waitManaged(t, inv, "v1")
		eventually(t, 20*time.Second, func() (bool, string) {
			co, err := e.clusterOperator()
			if err != nil {
				return false, err.Error()
			}
			p := v1helpers.FindStatusCondition(co.Status.Conditions, configv1.OperatorProgressing)
			a := v1helpers.FindStatusCondition(co.Status.Conditions, configv1.OperatorAvailable)
			return p != nil && a != nil && p.Status == F && p.Reason == "FailedImageImports" && strings.Contains(p.Message, "python") && a.Status == T,
				fmt.Sprintf("Progressing %+v", p)
		})
	})
	t.Run("registry unreachable at bootstrap", func(t *testing.T) {
		e := newEnv(t)
		opts := defaultOptions()
		opts.RegistryProbe = func(context.Context) error { return fmt.Errorf("dial tcp: i/o timeout") }
		e.startOperator(opts)
		e.waitClusterOperator(t, T, F, F, "TermsBasedRegistryUnreacahable", "v1")
	})
}

// TestOnlyTheLeaderWrites: two replicas; the second writes nothing while the first leads, and
// takes over when the first stops.
func TestOnlyTheLeaderWrites(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	inv := x86Inventory(t)
	fast := func(id string) operator.Options {
		o := defaultOptions()
		o.LeaderElection = operator.LeaderElection{Identity: id, LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}
		return o
	}
	first := e.startOperator(fast("replica-a"))
	e.waitManaged(t, inv, "v1")
	second := e.startOperator(fast("replica-b"))
	// Proof that replica-b runs and contends: its lease reads in the audit log, not a sleep.
	eventually(t, 10*time.Second, func() (bool, string) {
		n := len(e.operatorRequests(t, on("leases"), byReplica("replica-b")))
		return n >= 2, fmt.Sprintf("replica-b asked for the lease %d times", n)
	})

	// replica-b must not revert anything while it does not lead: replica-a does, alone.
	if err := e.images.ImageV1().ImageStreams("openshift").Delete(context.Background(), "golang", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() (bool, string) { return e.imageStreamExists("golang"), "golang not recreated" })
	// replica-b still contends after the revert: it ran, saw the deletion, and left it alone.
	reverted := time.Now()
	eventually(t, 10*time.Second, func() (bool, string) {
		return len(e.operatorRequests(t, on("leases"), byReplica("replica-b"), receivedAfter(reverted))) > 0, "replica-b has not asked for the lease since the revert"
	})
	if w := e.operatorRequests(t, stateWrites, not(on("leases")), byReplica("replica-b")); len(w) != 0 {
		t.Fatalf("replica-b wrote while replica-a led: %v", describe(w))
	}

	first.stop(t) // releases the lease on the way out
	start := time.Now()
	if err := e.images.ImageV1().ImageStreams("openshift").Delete(context.Background(), "golang", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) { return e.imageStreamExists("golang"), "replica-b did not take over" })
	t.Logf("replica-b took over and reverted a deletion %s after replica-a stopped", time.Since(start))
	if n := len(e.operatorRequests(t, stateWrites, not(on("leases")), byReplica("replica-b"))); n == 0 {
		t.Errorf("replica-b made no write after taking over")
	}
	second.stop(t)
}
