// Package bootstrapstate is the one owner of what the operator records on the Config about its
// own install-time decision (the bootstrap annotations), and the one place that answers questions
// about it: is the Config still the operator's Removed, awaiting its registry; did the operator
// switch it to Managed; why were the samples Removed at install. Nothing else reads the
// annotations.
//
// "Still the operator's" is told from who set the spec, not from its shape or generation: the
// Config's managedFields name the field manager of every spec field, and a client-side apply
// leaves its applied configuration in an annotation. An admin or a GitOps tool that sets the spec
// (even to the value it had, which changes no generation) has decided, and is never overruled.
package bootstrapstate

import (
	"encoding/json"
	"fmt"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

const (
	// ReasonAnnotation and MessageAnnotation record why the operator created the Config Removed,
	// or that it switched it to Managed once the registry answered.
	ReasonAnnotation  = "samples.operator.openshift.io/bootstrap-reason"
	MessageAnnotation = "samples.operator.openshift.io/bootstrap-message"
	// AwaitingAnnotation marks a Config the operator created Removed because the registry did not
	// answer, and still probes for: the reason then names what keeps the samples out now, which
	// at a later look may be another gate (an allow-list, say) than the registry.
	AwaitingAnnotation = "samples.operator.openshift.io/bootstrap-awaiting-registry"
	// FieldManager is the operator's name in the Config's managedFields: every write of the
	// Config's spec or metadata by the operator passes it.
	FieldManager = "cluster-samples-operator"
	// lastApplied is where kubectl's and oc's client-side apply keep what they applied.
	lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
)

// DefaultConfig is the Config the operator creates when none exists, with its decision recorded.
func DefaultConfig(goarch string, d configspec.BootstrapDecision) *samplesv1.Config {
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{
			Name:       names.ConfigName,
			Finalizers: []string{samplesv1.ConfigFinalizer},
		},
		Spec: samplesv1.ConfigSpec{
			ManagementState:     d.State,
			SkippedImagestreams: []string{},
			SkippedTemplates:    []string{},
		},
	}
	cfg.Spec.Architectures, _ = configspec.ClusterArchitectures(cfg, goarch)
	if d.Reason != "" {
		cfg.Annotations = map[string]string{ReasonAnnotation: d.Reason, MessageAnnotation: d.Message}
	}
	if d.Reason == configspec.ReasonRegistryUnreachable {
		cfg.Annotations[AwaitingAnnotation] = "true"
	}
	return cfg
}

// StillRemoved is cfg, awaiting its registry, with reason and message naming what keeps the
// samples out at the latest look; changed is false when they already did (nothing to write).
func StillRemoved(cfg *samplesv1.Config, reason, message string) (out *samplesv1.Config, changed bool) {
	if cfg.Annotations[ReasonAnnotation] == reason && cfg.Annotations[MessageAnnotation] == message && cfg.Annotations[AwaitingAnnotation] == "true" {
		return cfg, false
	}
	out = cfg.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[ReasonAnnotation] = reason
	out.Annotations[MessageAnnotation] = message
	out.Annotations[AwaitingAnnotation] = "true"
	return out, true
}

// SwitchedToManaged is cfg switched to Managed because the registry answered at now (or a cluster
// proxy was set since install, through which imports go), with the reason recorded where
// SamplesExist reads it.
func SwitchedToManaged(cfg *samplesv1.Config, target string, viaProxy bool, now time.Time) *samplesv1.Config {
	out := cfg.DeepCopy()
	out.Spec.ManagementState = operatorv1.Managed
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	delete(out.Annotations, AwaitingAnnotation)
	out.Annotations[ReasonAnnotation] = configspec.ReasonRegistryReachable
	out.Annotations[MessageAnnotation] = fmt.Sprintf("the samples registry %s did not answer at install, and answered at %s: the operator switched managementState to Managed", target, now.UTC().Format(time.RFC3339))
	if viaProxy {
		out.Annotations[MessageAnnotation] = fmt.Sprintf("the samples registry %s did not answer at install; at %s a cluster proxy was set, through which imports go: the operator switched managementState to Managed", target, now.UTC().Format(time.RFC3339))
	}
	return out
}

// SwitchedToManagedThroughMirrors is cfg switched to Managed because, the registry having been
// unreachable at install, the mirrors of the cluster's mirror sets answered at now; decision is the
// install decision that says so (configspec.BootstrapDecision.AfterMirrorProbe).
func SwitchedToManagedThroughMirrors(cfg *samplesv1.Config, decision configspec.BootstrapDecision, now time.Time) *samplesv1.Config {
	out := cfg.DeepCopy()
	out.Spec.ManagementState = operatorv1.Managed
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	delete(out.Annotations, AwaitingAnnotation)
	out.Annotations[ReasonAnnotation] = configspec.ReasonThroughMirrorSets
	out.Annotations[MessageAnnotation] = fmt.Sprintf("the samples registry did not answer at install; at %s %s: the operator switched managementState to Managed", now.UTC().Format(time.RFC3339), decision.Message)
	return out
}

// State is what a Config says of the operator's install-time decision.
type State struct {
	reason, message string
	// awaiting: created Removed because the registry did not answer (before the awaiting
	// annotation, the reason alone said so).
	awaiting        bool
	managementState operatorv1.ManagementState
	deleting        bool
	// operatorsSpec: nobody but the operator has set the spec since it created the Config.
	operatorsSpec bool
}

// Of reads cfg.
func Of(cfg *samplesv1.Config) State {
	return State{
		reason:          cfg.Annotations[ReasonAnnotation],
		message:         cfg.Annotations[MessageAnnotation],
		awaiting:        cfg.Annotations[AwaitingAnnotation] == "true" || cfg.Annotations[ReasonAnnotation] == configspec.ReasonRegistryUnreachable,
		managementState: cfg.Spec.ManagementState,
		deleting:        cfg.DeletionTimestamp != nil,
		operatorsSpec:   onlyTheOperatorSetTheSpec(cfg),
	}
}

// AwaitingRegistry: the operator created the Config Removed because the registry did not answer,
// and nobody else has set its spec since; the operator keeps looking and switches it to Managed
// once the registry answers and nothing else keeps the samples out.
func (s State) AwaitingRegistry() bool {
	return s.awaiting && s.managementState == operatorv1.Removed && s.operatorsSpec && !s.deleting
}

// Removal is why the operator created the Config Removed, while it still is and nobody else has
// set its spec: an admin's Removed is the admin's, whatever the operator once decided.
func (s State) Removal() (reason, message string, ok bool) {
	if s.reason == "" || s.reason == configspec.ReasonRegistryReachable || s.managementState != operatorv1.Removed || !s.operatorsSpec {
		return "", "", false
	}
	return s.reason, s.message, true
}

// SwitchedByRegistry is the message of a Config the operator switched to Managed when the
// registry answered, while it is still Managed and nobody else has set its spec.
func (s State) SwitchedByRegistry() (string, bool) {
	if s.reason != configspec.ReasonRegistryReachable || s.managementState != operatorv1.Managed || !s.operatorsSpec {
		return "", false
	}
	return s.message, true
}

// ThroughMirrorSets is the message of a Config the operator made Managed because the mirrors of
// the cluster's mirror sets answered for the samples' images (at install, or later instead of an
// unreachable registry), while it is still Managed and nobody else has set its spec.
func (s State) ThroughMirrorSets() (string, bool) {
	if s.reason != configspec.ReasonThroughMirrorSets || s.managementState != operatorv1.Managed || !s.operatorsSpec {
		return "", false
	}
	return s.message, true
}

// Stale: the annotations no longer say anything (someone else set the spec, or the Config left
// the state they explain); the operator drops them.
func (s State) Stale() bool {
	if s.reason == "" || s.deleting {
		return false
	}
	_, _, removal := s.Removal()
	_, switched := s.SwitchedByRegistry()
	_, mirrored := s.ThroughMirrorSets()
	return !removal && !switched && !mirrored
}

// onlyTheOperatorSetTheSpec tells whether every spec field was last set by the operator: no other
// field manager owns one (an admin's `oc edit`, a server-side apply, a patch), and no client-side
// apply recorded a spec. A Config without managedFields (written through a server that keeps
// none) falls back to its generation: 1 when created, 2 after the operator's one switch.
func onlyTheOperatorSetTheSpec(cfg *samplesv1.Config) bool {
	if applied := cfg.Annotations[lastApplied]; applied != "" {
		var obj struct {
			Spec map[string]any `json:"spec"`
		}
		if json.Unmarshal([]byte(applied), &obj) != nil || len(obj.Spec) > 0 {
			return false
		}
	}
	if len(cfg.ManagedFields) == 0 {
		limit := int64(1)
		if cfg.Annotations[ReasonAnnotation] == configspec.ReasonRegistryReachable || cfg.Annotations[ReasonAnnotation] == configspec.ReasonThroughMirrorSets {
			limit = 2
		}
		return cfg.Generation <= limit
	}
	for _, entry := range cfg.ManagedFields {
		if entry.Subresource != "" || entry.Manager == FieldManager || entry.FieldsV1 == nil {
			continue
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(entry.FieldsV1.Raw, &fields) != nil {
			return false // unreadable: assume someone decided
		}
		if _, ok := fields["f:spec"]; ok {
			return false
		}
	}
	return true
}
