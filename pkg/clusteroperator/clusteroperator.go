// Package clusteroperator computes, without clients, the status of the ClusterOperator
// openshift-samples from the samples Config: Available, Progressing and Degraded with the reasons
// the compatible operator uses, the operator version once the samples reached it, and the related
// objects `oc adm inspect` and must-gather follow.
package clusteroperator

import (
	"fmt"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// Name is the ClusterOperator this operator reports through.
const Name = "openshift-samples"

// Reasons on the ClusterOperator conditions. TermsBasedRegistryUnreacahable keeps the compatible
// operator's spelling: alerts and dashboards match it.
const (
	ReasonDeletionInProgress      = "DeletionInProgress"
	ReasonUnsupportedArchitecture = "UnsupportHWArchitecture"
	ReasonRegistryUnreachable     = "TermsBasedRegistryUnreacahable"
	ReasonCurrentlyRemoved        = "CurrentlyRemoved"
	ReasonCurrentlyUnmanaged      = "CurrentlyUnmanaged"
	ReasonSampleUpsertsPending    = "SampleUpsertsPending"
	ReasonInvalidConfiguration    = "InvalidConfiguration"
	ReasonFailedImageImports      = "FailedImageImports"
	ReasonAsExpected              = "AsExpected"
	ReasonRemovingSamples         = "RemovingSamples"
	ReasonMovingToVersion         = "MovingToVersion"
	ReasonMissingAccess           = configstatus.ReasonMissingAccess
	ReasonWritesRefused           = configstatus.ReasonWritesRefused
	// ReasonAPIUnavailable keeps the compatible operator's reason for an API that answers 503.
	ReasonAPIUnavailable            = "APIServerServiceUnavailableError"
	operatorNamespace               = "openshift-cluster-samples-operator"
	versionName                     = "operator"
	samplesNamespace                = "openshift"
	samplesConfigGroup              = "samples.operator.openshift.io"
	samplesConfigResource           = "configs"
	imageGroup, imageStreamResource = "image.openshift.io", "imagestreams"
	templateGroup, templateResource = "template.openshift.io", "templates"
)

// RelatedObjects are what the ClusterOperator points admins and must-gather at.
var RelatedObjects = []configv1.ObjectReference{
	{Group: samplesConfigGroup, Resource: samplesConfigResource, Name: names.ConfigName},
	{Group: "", Resource: "namespaces", Name: operatorNamespace},
	{Group: templateGroup, Resource: templateResource, Namespace: samplesNamespace},
	{Group: imageGroup, Resource: imageStreamResource, Namespace: samplesNamespace},
}

// DegradedGrace is how long a refusal or an unavailable API lasts before the ClusterOperator is
// Degraded. OpenShift asks operators not to go Degraded for transient errors, nor during a normal
// upgrade, in which openshift-apiserver rolls out one replica after another: Degraded pages an
// admin, while Progressing already says at once what holds the samples back. Two minutes covers
// a rolling restart and the retries of a refused write (a minute apart at most) and is still well
// within the quarter of an hour after which OpenShift's own alerts consider an operator Degraded
// for real.
const DegradedGrace = 2 * time.Minute

// Observed is what the operator met beyond the Config's status: refused writes and unanswering
// APIs, known to this process only, and the import error records, whose failing-since outlives it.
type Observed struct {
	// RefusedSince is when the API server began refusing sample writes that it still refuses
	// (the Config's SamplesExist names them); zero when none.
	RefusedSince time.Time
	// Outages are the APIs that answer the operator 503.
	Outages []Outage
	// ImportErrors are the ConfigMaps that record failed imports (imports.ErrorLabel).
	ImportErrors []*corev1.ConfigMap
	// Grace is how long a refusal or an outage lasts before Degraded; 0 means DegradedGrace.
	// Only tests set another, to see the grace run out sooner.
	Grace time.Duration
}

// Outage is an API that has answered the operator 503 since Since, Message its last answer.
type Outage struct {
	API     string
	Since   time.Time
	Message string
}

// Kind says where an Input comes from, and so what it does besides Degraded.
type Kind string

const (
	KindAccess  Kind = "MissingAccess"      // a grant the operator lacks (a Config condition says so)
	KindConfig  Kind = "Config"             // the samples Config is invalid, or a condition of it Unknown
	KindRefusal Kind = "WritesRefused"      // the API server refuses sample writes
	KindOutage  Kind = "APIUnavailable"     // an API answers the operator 503
	KindImports Kind = "FailedImageImports" // an imagestream's imports fail (its error ConfigMap)
)

// Never is the Grace of an Input that never makes the ClusterOperator Degraded.
const Never time.Duration = -1

// Input is one thing the conditions weigh, with when it began.
type Input struct {
	Kind    Kind
	Source  string // what it concerns: a Config condition type, an API, an imagestream
	Reason  string // the Degraded reason it gives
	Message string
	Since   time.Time
	Grace   time.Duration // how long it lasts before Degraded: 0 at once, Never for never
}

func (in Input) due(now time.Time) bool {
	return in.Grace == 0 || in.Grace > 0 && !in.Since.IsZero() && now.Sub(in.Since) >= in.Grace
}

// Inputs is the one list of what the conditions weigh beyond the Config's own state, built from
// the Config's conditions and what else was observed, in the order Degraded prefers them: the
// first that is due gives its reason.
func Inputs(cfg *samplesv1.Config, version string, o Observed) []Input {
	if cfg == nil {
		return nil
	}
	grace := o.Grace
	if grace <= 0 {
		grace = DegradedGrace
	}
	st, in := &cfg.Status, []Input(nil)
	for _, t := range []samplesv1.ConfigConditionType{samplesv1.SamplesExist, samplesv1.ImportCredentialsExist} {
		if c := configstatus.Condition(st, t); c != nil && c.Reason == configstatus.ReasonMissingAccess {
			in = append(in, Input{KindAccess, string(t), ReasonMissingAccess, c.Message, c.LastTransitionTime.Time, 0})
		}
	}
	if c := configstatus.Condition(st, samplesv1.ConfigurationValid); c != nil && c.Status == corev1.ConditionFalse {
		in = append(in, Input{KindConfig, string(c.Type), ReasonInvalidConfiguration,
			fmt.Sprintf("the samples Config is invalid at version %s: %s", version, c.Message), c.LastTransitionTime.Time, 0})
	} else if first, messages := unknownConditions(st); first != nil {
		in = append(in, Input{KindConfig, string(first.Type), reasonOf(first), messages, first.LastTransitionTime.Time, 0})
	}
	if c := configstatus.Condition(st, samplesv1.SamplesExist); c != nil && c.Reason == configstatus.ReasonWritesRefused && !o.RefusedSince.IsZero() {
		in = append(in, Input{KindRefusal, string(c.Type), ReasonWritesRefused, c.Message, o.RefusedSince, grace})
	}
	for _, out := range o.Outages {
		in = append(in, Input{KindOutage, out.API, ReasonAPIUnavailable, out.Message, out.Since, grace})
	}
	for _, cm := range o.ImportErrors {
		in = append(in, Input{KindImports, cm.Name, ReasonFailedImageImports, "", imports.FailingSince(cm), Never})
	}
	return in
}

// NextChange is when the conditions computed for observed will change with time alone (a grace
// running out), 0 when they will not.
func NextChange(cfg *samplesv1.Config, version string, observed Observed, now time.Time) time.Duration {
	var next time.Duration
	for _, in := range Inputs(cfg, version, observed) {
		if in.Grace <= 0 || in.Since.IsZero() {
			continue
		}
		if wait := in.Since.Add(in.Grace).Sub(now); wait > 0 && (next == 0 || wait < next) {
			next = wait
		}
	}
	return next
}

type condition struct {
	status  configv1.ConditionStatus
	reason  string
	message string
}

// Status returns the ClusterOperator status for the Config (nil when it does not exist) and the
// operator's version, starting from the current status so that unchanged conditions keep their
// transition times.
func Status(current configv1.ClusterOperatorStatus, cfg *samplesv1.Config, version string, observed Observed, clk clock.PassiveClock) configv1.ClusterOperatorStatus {
	available, progressing, degraded := conditions(cfg, version, Inputs(cfg, version, observed), clk.Now())
	st := *current.DeepCopy()
	for _, c := range []struct {
		t configv1.ClusterStatusConditionType
		c condition
	}{{configv1.OperatorAvailable, available}, {configv1.OperatorProgressing, progressing}, {configv1.OperatorDegraded, degraded}} {
		v1helpers.SetStatusCondition(&st.Conditions, configv1.ClusterOperatorStatusCondition{
			Type: c.t, Status: c.c.status, Reason: c.c.reason, Message: c.c.message,
		}, clk)
	}
	st.RelatedObjects = append([]configv1.ObjectReference(nil), RelatedObjects...)
	// The version is reported once the samples are at it; during an upgrade the old one stays.
	st.Versions = nil
	if cfg != nil && cfg.Status.Version != "" {
		st.Versions = []configv1.OperandVersion{{Name: versionName, Version: cfg.Status.Version}}
	}
	return st
}

// NothingToReport is true before the first Config exists: a ClusterOperator without conditions is
// not a deletion in progress, and the bootstrap will soon give it something to say.
func NothingToReport(current configv1.ClusterOperatorStatus, cfg *samplesv1.Config) bool {
	return cfg == nil && len(current.Conditions) == 0
}

// Changed reports whether a computed status differs from the current one.
func Changed(current, computed configv1.ClusterOperatorStatus) bool {
	return !equality.Semantic.DeepEqual(current, computed)
}

// Degraded is True for exactly these causes, each an administrator must act on; this is the one
// list, and docs/runbooks/SamplesDegraded.md follows it. Each is an Input, and Inputs builds them
// all, in this order of preference, from the samples Config's conditions (written by
// pkg/controller/configstatuscontrol from what the operator observes) and Observed (refused
// writes and unavailable APIs, which carry their own start times, and the import error records):
//
//   - ReasonMissingAccess: SamplesExist or ImportCredentialsExist has reason MissingAccess (the
//     operator may not manage the samples, or may not read the pull secret). At once.
//   - ReasonInvalidConfiguration: ConfigurationValid is False. At once.
//   - a Config condition's own reason: that condition is Unknown (only while the status
//     controller is not running). At once.
//   - ReasonWritesRefused: SamplesExist has reason SampleWritesRefused and Observed.RefusedSince
//     is older than the grace (DegradedGrace).
//   - ReasonAPIUnavailable: an API in Observed.Outages (openshift-apiserver answering 503) has
//     done so for longer than the grace.
//
// Failed imports never are (Progressing says since when they fail). Removed, Unmanaged, a Config
// being deleted, an unsupported architecture and an unreachable registry at install are never
// Degraded but for missing access and outages: the admin chose them, or nothing is wrong.
//
// conditions are those of the samples, overridden while the operator lacks access. Missing access
// is Degraded whatever else holds: only an administrator can fix it. Without access to the samples
// it is also not Available (nothing is installed or kept, which is what Available=False asks an
// admin to act on at once) and not Progressing (nothing moves until an admin acts, and an upgrade
// must not look as if it were still rolling out). Without the pull secret alone the samples are
// still kept, so Available and Progressing stay as they are.
//
// An API that has not answered for longer than DegradedGrace is Degraded too: the samples may be
// gone and the operator cannot tell or repair it. Available stays as the Config says (the samples
// were there when last seen) and so does Progressing: nothing is in progress.
func conditions(cfg *samplesv1.Config, version string, inputs []Input, now time.Time) (available, progressing, degraded condition) {
	available, progressing, degraded, ownPath := samplesConditions(cfg, version, inputs, now)
	if cfg == nil {
		return available, progressing, degraded
	}
	for i, in := range inputs {
		if !in.due(now) || (ownPath && (in.Kind == KindConfig || in.Kind == KindRefusal)) {
			continue
		}
		degraded = condition{configv1.ConditionTrue, in.Reason, says(inputs[i:], now)}
		if in.Kind == KindAccess && in.Source == string(samplesv1.SamplesExist) {
			missing := condition{configv1.ConditionFalse, ReasonMissingAccess, in.Message}
			return missing, missing, degraded
		}
		break
	}
	return available, progressing, degraded
}

// says is what Degraded says of inputs[0]: a refusal and an outage with since when, and every
// outage past the grace at once.
func says(inputs []Input, now time.Time) string {
	since := func(in Input) string {
		return fmt.Sprintf("since %s (%s): %s", in.Since.UTC().Format(time.RFC3339), now.Sub(in.Since).Round(time.Second), in.Message)
	}
	switch first := inputs[0]; first.Kind {
	case KindRefusal:
		return since(first)
	case KindOutage:
		var parts []string
		for _, o := range inputs {
			if o.Kind == KindOutage && o.due(now) {
				parts = append(parts, fmt.Sprintf("the %s API has answered the operator 503 %s", o.Source, since(o)))
			}
		}
		return strings.Join(parts, "; ") + "; until it answers the operator can neither see nor repair the samples (is openshift-apiserver running?)"
	default:
		return first.Message
	}
}

// samplesConditions are the conditions the samples' state gives; ownPath is true when that state
// is one of those that are never Degraded for the samples (deletion, Removed, ...), whatever the
// Config's conditions say.
func samplesConditions(cfg *samplesv1.Config, version string, inputs []Input, now time.Time) (available, progressing, degraded condition, ownPath bool) {
	same := func(avail, prog configv1.ConditionStatus, reason, message string) (condition, condition, condition, bool) {
		return condition{avail, reason, message}, condition{prog, reason, message}, condition{configv1.ConditionFalse, reason, message}, true
	}
	if cfg == nil || cfg.DeletionTimestamp != nil {
		return same(configv1.ConditionTrue, configv1.ConditionTrue, ReasonDeletionInProgress,
			"the samples Config is being deleted: the operator removes the samples, then creates a new default Config")
	}
	if arch := firstArchitecture(cfg); arch != "" && !supported(arch) {
		return same(configv1.ConditionTrue, configv1.ConditionFalse, ReasonUnsupportedArchitecture,
			fmt.Sprintf("architecture %q is not supported by the samples: no samples are installed", arch))
	}
	if reason, message, ok := bootstrapstate.Of(cfg).Removal(); ok && reason == configspec.ReasonRegistryUnreachable {
		return same(configv1.ConditionTrue, configv1.ConditionFalse, ReasonRegistryUnreachable, message)
	}

	st := &cfg.Status
	switch st.ManagementState {
	case operatorv1.Removed, operatorv1.Unmanaged:
		reason := "Currently" + string(st.ManagementState)
		message := fmt.Sprintf("samples were installed at version %s; managementState is now %s", orNone(st.Version), st.ManagementState)
		if r, m, ok := bootstrapstate.Of(cfg).Removal(); ok && st.ManagementState == operatorv1.Removed {
			message = fmt.Sprintf("the samples are Removed since installation (%s): %s", r, m)
		}
		return same(configv1.ConditionTrue, configv1.ConditionFalse, reason, message)
	}

	// The samples' installation is in error: what Progressing says, whatever else is Degraded.
	degraded = condition{configv1.ConditionFalse, ReasonAsExpected, ""}
	failingSince := time.Time{}
	for i, in := range inputs {
		if (in.Kind == KindConfig || in.Kind == KindRefusal) && in.due(now) && degraded.status != configv1.ConditionTrue {
			degraded = condition{configv1.ConditionTrue, in.Reason, says(inputs[i:], now)}
		}
		if in.Kind == KindImports && (failingSince.IsZero() || in.Since.Before(failingSince)) {
			failingSince = in.Since
		}
	}
	samplesExist := configstatus.Condition(st, samplesv1.SamplesExist)
	refused := samplesExist != nil && samplesExist.Reason == configstatus.ReasonWritesRefused
	switch {
	case samplesExist == nil || samplesExist.Status != corev1.ConditionTrue:
		message := fmt.Sprintf("installing the samples of version %s", version)
		if samplesExist != nil && samplesExist.Reason != configstatus.ReasonPending && samplesExist.Message != "" {
			message = samplesExist.Message // an error or a state worth passing on as is
		}
		available = condition{configv1.ConditionFalse, ReasonSampleUpsertsPending, message}
	default:
		available = condition{configv1.ConditionTrue, ReasonAsExpected, fmt.Sprintf("samples installed at version %s", orNone(st.Version))}
	}

	importErrors := configstatus.Condition(st, samplesv1.ImportImageErrorsExist)
	switch {
	case refused:
		// At once, before any grace: what holds the samples back, in the server's words.
		progressing = condition{configv1.ConditionTrue, ReasonWritesRefused, samplesExist.Message}
	case degraded.status == configv1.ConditionTrue:
		progressing = condition{configv1.ConditionTrue, degraded.reason, fmt.Sprintf("the samples installation at version %s is in error: %s", version, degraded.reason)}
	case conditionTrue(st, samplesv1.RemovePending):
		progressing = condition{configv1.ConditionTrue, ReasonRemovingSamples, fmt.Sprintf("deleting the samples of version %s", orNone(st.Version))}
	case st.Version != "" && st.Version != version && available.status == configv1.ConditionTrue:
		// An upgrade: the samples of the previous version stay installed, and Available with
		// them, until every sample carries the new one; only then does the version move.
		progressing = condition{configv1.ConditionTrue, ReasonMovingToVersion, fmt.Sprintf("moving the samples from version %s to version %s", st.Version, version)}
	case st.Version != version || available.status != configv1.ConditionTrue:
		progressing = condition{configv1.ConditionTrue, ReasonMovingToVersion, fmt.Sprintf("installing the samples of version %s", version)}
	case samplesExist.Reason == configstatus.ReasonUpdating:
		progressing = condition{configv1.ConditionTrue, ReasonSampleUpsertsPending, samplesExist.Message}
	case importErrors != nil && importErrors.Status == corev1.ConditionTrue:
		when := "last change " + importErrors.LastUpdateTime.UTC().Format(time.RFC3339)
		if !failingSince.IsZero() {
			when += ", failing since " + failingSince.UTC().Format(time.RFC3339)
		}
		progressing = condition{configv1.ConditionFalse, ReasonFailedImageImports,
			fmt.Sprintf("samples installed at version %s, but some image imports failed (%s): %s", st.Version, when, importErrors.Message)}
	default:
		progressing = condition{configv1.ConditionFalse, ReasonAsExpected, fmt.Sprintf("samples installed at version %s", st.Version)}
	}
	return available, progressing, degraded, false
}

// unknownConditions returns the first Unknown Config condition and every Unknown one's message.
func unknownConditions(st *samplesv1.ConfigStatus) (*samplesv1.ConfigCondition, string) {
	var first *samplesv1.ConfigCondition
	var messages []string
	for i, c := range st.Conditions {
		if c.Status != corev1.ConditionUnknown {
			continue
		}
		if first == nil {
			first = &st.Conditions[i]
		}
		if c.Message != "" {
			messages = append(messages, c.Message)
		}
	}
	return first, strings.Join(messages, "; ")
}

// reasonOf an Unknown condition: its own, or its type's when it has none.
func reasonOf(c *samplesv1.ConfigCondition) string {
	if c.Reason == "" {
		return string(c.Type) + "Unknown"
	}
	return c.Reason
}

func conditionTrue(st *samplesv1.ConfigStatus, t samplesv1.ConfigConditionType) bool {
	c := configstatus.Condition(st, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

func firstArchitecture(cfg *samplesv1.Config) string {
	if len(cfg.Spec.Architectures) == 0 {
		return ""
	}
	return cfg.Spec.Architectures[0]
}

func supported(arch string) bool {
	for _, a := range configspec.SupportedArchitectures {
		if a == arch {
			return true
		}
	}
	return false
}

func orNone(v string) string {
	if v == "" {
		return "(none yet)"
	}
	return v
}

// Degraded reports whether the ClusterOperator computed for this Config is Degraded (for metrics).
func Degraded(cfg *samplesv1.Config, version string, observed Observed, now time.Time) bool {
	_, _, degraded := conditions(cfg, version, Inputs(cfg, version, observed), now)
	return degraded.status == configv1.ConditionTrue
}
