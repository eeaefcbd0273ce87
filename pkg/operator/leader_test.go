package operator

import (
	"context"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLeaseTimingFollowsTheControlPlaneTopology(t *testing.T) {
	s := time.Second
	cases := []struct {
		name     string
		given    LeaderElection
		topology configv1.TopologyMode
		want     [3]time.Duration
	}{
		{"highly available", LeaderElection{}, configv1.HighlyAvailableTopologyMode, [3]time.Duration{137 * s, 107 * s, 26 * s}},
		{"highly available arbiter", LeaderElection{}, configv1.HighlyAvailableArbiterMode, [3]time.Duration{137 * s, 107 * s, 26 * s}},
		{"single node", LeaderElection{}, configv1.SingleReplicaTopologyMode, [3]time.Duration{270 * s, 240 * s, 60 * s}},
		{"external control plane", LeaderElection{}, configv1.ExternalTopologyMode, [3]time.Duration{137 * s, 107 * s, 26 * s}},
		{"given durations win on a single node", LeaderElection{LeaseDuration: 4 * s, RetryPeriod: s}, configv1.SingleReplicaTopologyMode, [3]time.Duration{4 * s, 240 * s, s}},
	}
	for _, tc := range cases {
		got := leaseTiming(tc.given, tc.topology)
		if have := [3]time.Duration{got.LeaseDuration, got.RenewDeadline, got.RetryPeriod}; have != tc.want {
			t.Errorf("%s: lease/renew/retry = %v, want %v", tc.name, have, tc.want)
		}
	}
}

func TestControlPlaneTopologyIsReadFromTheInfrastructure(t *testing.T) {
	ctx := context.Background()
	single := &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Status: configv1.InfrastructureStatus{ControlPlaneTopology: configv1.SingleReplicaTopologyMode}}
	other := &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Status: configv1.InfrastructureStatus{ControlPlaneTopology: configv1.SingleReplicaTopologyMode}}
	unset := &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	for _, tc := range []struct {
		name string
		objs []*configv1.Infrastructure
		want configv1.TopologyMode
	}{
		{"single node", []*configv1.Infrastructure{single}, configv1.SingleReplicaTopologyMode},
		{"no infrastructure object: highly available", nil, configv1.HighlyAvailableTopologyMode},
		{"only another object: highly available", []*configv1.Infrastructure{other}, configv1.HighlyAvailableTopologyMode},
		{"topology not reported: highly available", []*configv1.Infrastructure{unset}, configv1.HighlyAvailableTopologyMode},
	} {
		client := configfake.NewSimpleClientset()
		for _, o := range tc.objs {
			if err := client.Tracker().Add(o); err != nil {
				t.Fatal(err)
			}
		}
		if got := controlPlaneTopology(ctx, client.ConfigV1().Infrastructures()); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
