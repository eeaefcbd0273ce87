package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// TestLeaderElectionFollowsTheControlPlaneTopology: the Lease the operator takes lasts 137 s on a
// highly available control plane and 270 s on a single node
// (infrastructures.config.openshift.io/cluster status.controlPlaneTopology SingleReplica), where the
// one kube-apiserver restarts during an upgrade.
func TestLeaderElectionFollowsTheControlPlaneTopology(t *testing.T) {
	t.Parallel()
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
