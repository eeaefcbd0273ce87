// Package standdown decides, without clients, whether a copy of the operator installed by OLM
// must leave the samples to the cluster-version operator (CVO), and what it then tells OLM.
//
// The CVO runs its own samples operator, from the release payload, exactly when the ClusterVersion
// enables the capability openshift-samples: the capability is what makes the CVO apply the
// operator's Deployment, RBAC and ClusterOperator. Two operators writing the same samples, Config,
// ClusterOperator and leader lease would undo each other's writes, so the OLM copy stands down.
package standdown

import (
	"fmt"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// ClusterVersionName is the ClusterVersion singleton.
	ClusterVersionName = "version"
	// Capability is the capability under which the CVO installs the samples operator.
	Capability = configv1.ClusterVersionCapabilityOpenShiftSamples

	// UpgradeableType is the OperatorCondition condition OLM acts on.
	UpgradeableType = "Upgradeable"

	ReasonManagedByCVO       = "ManagedByClusterVersionOperator"
	ReasonNoClusterVersion   = "NoClusterVersion"
	ReasonCapabilityDisabled = "CapabilityDisabled"
	ReasonAsExpected         = "AsExpected"
)

// Decision says whether to stand down, and why.
type Decision struct {
	StandDown bool
	Reason    string
	Message   string
}

// Decide looks at the ClusterVersion (nil when there is none) for a copy installed by OLM under
// the ClusterServiceVersion csv. Only status counts: spec asks for capabilities, status says which
// the CVO manages now (and an enabled capability can never be disabled again).
func Decide(cv *configv1.ClusterVersion, csv string) Decision {
	if cv == nil {
		return Decision{Reason: ReasonNoClusterVersion,
			Message: fmt.Sprintf("there is no ClusterVersion %s: no cluster-version operator installs the samples operator, so this copy (installed by OLM as %s) manages the samples", ClusterVersionName, csv)}
	}
	if cv.Status.Capabilities.EnabledCapabilities == nil || !slices.Contains(cv.Status.Capabilities.EnabledCapabilities, Capability) {
		return Decision{Reason: ReasonCapabilityDisabled,
			Message: fmt.Sprintf("ClusterVersion %s does not enable the capability %s: the cluster-version operator does not run its samples operator, so this copy (installed by OLM as %s) manages the samples", ClusterVersionName, Capability, csv)}
	}
	return Decision{StandDown: true, Reason: ReasonManagedByCVO,
		Message: fmt.Sprintf("ClusterVersion %s enables the capability %s: the cluster-version operator runs its own samples operator from the release payload, so this copy, installed by OLM as %s, stands down and writes nothing; uninstall it (delete its Subscription and the ClusterServiceVersion %s)", ClusterVersionName, Capability, csv, csv)}
}

// SetUpgradeable returns the OperatorCondition's spec.conditions for a decision, and whether they
// changed. Standing down sets Upgradeable=False: OLM shows it on the operator and holds upgrades
// of a copy that is not doing anything. Otherwise only a False this operator set is turned True
// again; an absent condition stays absent (OLM reads absent as upgradeable), so that a copy that
// never stood down never writes the OperatorCondition. ObservedGeneration stays unset: writing
// spec.conditions bumps the generation, so recording it would make every write call for another.
func SetUpgradeable(current []metav1.Condition, d Decision, now metav1.Time) ([]metav1.Condition, bool) {
	out := make([]metav1.Condition, len(current))
	for i := range current {
		current[i].DeepCopyInto(&out[i])
	}
	want := metav1.Condition{Type: UpgradeableType, LastTransitionTime: now}
	if d.StandDown {
		want.Status, want.Reason, want.Message = metav1.ConditionFalse, d.Reason, d.Message
	} else {
		existing := meta.FindStatusCondition(out, UpgradeableType)
		if existing == nil || existing.Status != metav1.ConditionFalse || existing.Reason != ReasonManagedByCVO {
			return out, false
		}
		want.Status, want.Reason, want.Message = metav1.ConditionTrue, ReasonAsExpected, d.Message
	}
	changed := meta.SetStatusCondition(&out, want)
	return out, changed
}
