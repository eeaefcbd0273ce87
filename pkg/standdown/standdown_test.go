package standdown

import (
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const csv = "cluster-samples-operator.v4.20.0"

func clusterVersion(spec []configv1.ClusterVersionCapability, enabled ...configv1.ClusterVersionCapability) *configv1.ClusterVersion {
	cv := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: ClusterVersionName}}
	cv.Spec.Capabilities = &configv1.ClusterVersionCapabilitiesSpec{AdditionalEnabledCapabilities: spec}
	cv.Status.Capabilities.EnabledCapabilities = enabled
	return cv
}

func TestDecide(t *testing.T) {
	cases := []struct {
		name      string
		cv        *configv1.ClusterVersion
		standDown bool
		reason    string
		message   []string
	}{
		{"no ClusterVersion", nil, false, ReasonNoClusterVersion, []string{"there is no ClusterVersion version", csv}},
		{"no capabilities reported", clusterVersion(nil), false, ReasonCapabilityDisabled, []string{"does not enable the capability openshift-samples"}},
		{"other capabilities only", clusterVersion(nil, configv1.ClusterVersionCapabilityConsole, configv1.ClusterVersionCapabilityMarketplace), false, ReasonCapabilityDisabled, nil},
		// Asked for in spec but not yet managed: the CVO does not run the operator yet.
		{"asked for, not yet enabled", clusterVersion([]configv1.ClusterVersionCapability{Capability}), false, ReasonCapabilityDisabled, nil},
		{"enabled", clusterVersion(nil, configv1.ClusterVersionCapabilityConsole, Capability), true, ReasonManagedByCVO, []string{
			"ClusterVersion version enables the capability openshift-samples",
			"stands down and writes nothing",
			"installed by OLM as " + csv,
			"delete its Subscription and the ClusterServiceVersion " + csv,
		}},
	}
	for _, c := range cases {
		d := Decide(c.cv, csv)
		if d.StandDown != c.standDown || d.Reason != c.reason {
			t.Errorf("%s: Decide = %+v, want standDown=%v reason=%s", c.name, d, c.standDown, c.reason)
		}
		for _, m := range c.message {
			if !strings.Contains(d.Message, m) {
				t.Errorf("%s: message %q does not say %q", c.name, d.Message, m)
			}
		}
	}
}

func TestSetUpgradeable(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	down := Decide(clusterVersion(nil, Capability), csv)
	up := Decide(clusterVersion(nil), csv)
	other := metav1.Condition{Type: "Custom", Status: metav1.ConditionTrue, Reason: "Mine", LastTransitionTime: t0}
	ours := metav1.Condition{Type: UpgradeableType, Status: metav1.ConditionFalse, Reason: ReasonManagedByCVO, Message: down.Message, LastTransitionTime: t0}
	admins := metav1.Condition{Type: UpgradeableType, Status: metav1.ConditionFalse, Reason: "SomethingElse", LastTransitionTime: t0}

	cases := []struct {
		name    string
		current []metav1.Condition
		d       Decision
		changed bool
		want    *metav1.Condition // the Upgradeable condition after; nil for none
	}{
		{"stand down, none yet", nil, down, true, &metav1.Condition{Type: UpgradeableType, Status: metav1.ConditionFalse, Reason: ReasonManagedByCVO, Message: down.Message, LastTransitionTime: t1}},
		{"stand down, already said", []metav1.Condition{other, ours}, down, false, &ours},
		{"stand down over another False", []metav1.Condition{admins}, down, true, &metav1.Condition{Type: UpgradeableType, Status: metav1.ConditionFalse, Reason: ReasonManagedByCVO, Message: down.Message, LastTransitionTime: t0}},
		{"proceed, none: no write", nil, up, false, nil},
		{"proceed, another condition only: no write", []metav1.Condition{other}, up, false, nil},
		{"proceed after standing down: True again", []metav1.Condition{ours}, up, true, &metav1.Condition{Type: UpgradeableType, Status: metav1.ConditionTrue, Reason: ReasonAsExpected, Message: up.Message, LastTransitionTime: t1}},
		{"proceed, someone else's False is left", []metav1.Condition{admins}, up, false, &admins},
	}
	for _, c := range cases {
		before := make([]metav1.Condition, len(c.current))
		copy(before, c.current)
		got, changed := SetUpgradeable(c.current, c.d, t1)
		if changed != c.changed {
			t.Errorf("%s: changed = %v, want %v", c.name, changed, c.changed)
		}
		var up *metav1.Condition
		for i := range got {
			if got[i].Type == UpgradeableType {
				up = &got[i]
			}
		}
		switch {
		case c.want == nil && up != nil:
			t.Errorf("%s: Upgradeable = %+v, want none", c.name, *up)
		case c.want != nil && (up == nil || *up != *c.want):
			t.Errorf("%s: Upgradeable = %+v, want %+v", c.name, up, *c.want)
		}
		for i := range c.current {
			if c.current[i] != before[i] {
				t.Errorf("%s: the input was modified", c.name)
			}
		}
		if _, again := SetUpgradeable(got, c.d, metav1.NewTime(t1.Add(time.Minute))); again {
			t.Errorf("%s: a second call with the same decision changes something", c.name)
		}
	}
}
