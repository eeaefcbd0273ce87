package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// TestLeaderElectionFollowsTheControlPlaneTopology: the Lease the operator takes lasts 137 s on a
// highly available control plane and 270 s on a single node
// (infrastructures.config.openshift.io/cluster status.controlPlaneTopology SingleReplica), where the
// one kube-apiserver restarts during an upgrade.
func TestLeaderElectionFollowsTheControlPlaneTopology(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	ctx := context.Background()
	waitLease := func(holder string, seconds int32) {
		t.Helper()
		eventually(t, 20*time.Second, func() (bool, string) {
			lease, err := e.kube.CoordinationV1().Leases(controlplane.OperatorNamespace).Get(ctx, operator.LeaseName, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != holder || lease.Spec.LeaseDurationSeconds == nil {
				return false, fmt.Sprintf("lease %+v not held by %s", lease.Spec, holder)
			}
			return *lease.Spec.LeaseDurationSeconds == seconds, fmt.Sprintf("%s holds the lease for %ds, want %ds", holder, *lease.Spec.LeaseDurationSeconds, seconds)
		})
	}

	// No Infrastructure object, as on the test control plane: highly available.
	opts := defaultOptions()
	opts.LeaderElection.Identity = "replica-ha"
	op := e.startOperator(opts)
	waitLease("replica-ha", 137)
	op.stop(t)

	infra, err := e.config.ConfigV1().Infrastructures().Create(ctx, &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	infra.Status.ControlPlaneTopology = configv1.SingleReplicaTopologyMode
	infra.Status.InfrastructureTopology = configv1.SingleReplicaTopologyMode
	if _, err := e.config.ConfigV1().Infrastructures().UpdateStatus(ctx, infra, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts.LeaderElection.Identity = "replica-sno"
	e.startOperator(opts)
	waitLease("replica-sno", 270)
}

// TestAReplicaShuttingDownReleasesALeaseLeftInItsName: a replica's create or renewal of the Lease
// can reach the server while shutdown cancels the answer, so that the replica never learns it
// holds the lease. At shutdown it still clears a lease in its name; the next replica must not
// wait a whole lease duration for a holder that is gone.
func TestAReplicaShuttingDownReleasesALeaseLeftInItsName(t *testing.T) {
	parallel(t, 0)
	e := newEnv(t)
	ctx := context.Background()
	leases := e.kube.CoordinationV1().Leases(controlplane.OperatorNamespace)
	now := metav1.NowMicro()
	if _, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: operator.LeaseName},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("replica-gone"), LeaseDurationSeconds: ptr.To[int32](300),
			AcquireTime: &now, RenewTime: &now,
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Its next try would come after the retry period, long after this test is done.
	opts := defaultOptions()
	opts.LeaderElection = operator.LeaderElection{
		Identity: "replica-late", LeaseDuration: 200 * time.Second, RenewDeadline: 150 * time.Second, RetryPeriod: 100 * time.Second,
	}
	op := e.startOperator(opts)
	eventually(t, 20*time.Second, func() (bool, string) {
		return len(e.operatorRequests(t, on("leases"), verb("get"), byReplica("replica-late"))) > 0, "replica-late has not read the lease"
	})

	// replica-late's write lands after all, as one whose answer was lost.
	lease, err := leases.Get(ctx, operator.LeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lease.Spec.HolderIdentity = ptr.To("replica-late")
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](200)
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	op.stop(t)

	lease, err = leases.Get(ctx, operator.LeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); holder != "" {
		t.Fatalf("after replica-late stopped the lease is still held by %q for %ds", holder, ptr.Deref(lease.Spec.LeaseDurationSeconds, 0))
	}
	if got := ptr.Deref(lease.Spec.LeaseDurationSeconds, 0); got != 1 {
		t.Errorf("the released lease lasts %ds, want 1s as client-go's release writes", got)
	}
}
