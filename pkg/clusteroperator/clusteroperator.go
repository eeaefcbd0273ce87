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

// Trouble is what the operator met beyond what the Config status says, with when it began: the
// grace before Degraded runs from there.
type Trouble struct {
	// RefusedSince is when the API server began refusing sample writes that it still refuses
	// (the Config's SamplesExist names them); zero when none.
	RefusedSince time.Time
	// Outages are the APIs that answer the operator 503.
	Outages []Outage
	// Grace is how long a trouble lasts before Degraded; 0 means DegradedGrace. Only tests set
	// another, to see the grace run out sooner.
	Grace time.Duration
}

func (t Trouble) grace() time.Duration {
	if t.Grace > 0 {
		return t.Grace
	}
	return DegradedGrace
}

// Outage is an API that has answered the operator 503 since Since, Message its last answer.
type Outage struct {
	API     string
	Since   time.Time
	Message string
}

// NextChange is when the conditions computed for trouble will change with time alone (a grace
// running out), 0 when they will not.
func NextChange(trouble Trouble, now time.Time) time.Duration {
	var next time.Duration
	consider := func(since time.Time) {
		if since.IsZero() {
			return
		}
		if wait := since.Add(trouble.grace()).Sub(now); wait > 0 && (next == 0 || wait < next) {
			next = wait
		}
	}
	consider(trouble.RefusedSince)
	for _, o := range trouble.Outages {
		consider(o.Since)
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
func Status(current configv1.ClusterOperatorStatus, cfg *samplesv1.Config, version string, trouble Trouble, clk clock.PassiveClock) configv1.ClusterOperatorStatus {
	available, progressing, degraded := conditions(cfg, version, trouble, clk.Now())
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
// list, and docs/runbooks/SamplesDegraded.md follows it. The inputs are the samples Config's
// conditions (written by pkg/controller/configstatuscontrol from what the operator observes) and the
// Trouble that pkg/operator/troubles.go assembles from the refusal store and the availability
// tracker, which the Config does not record because each carries its own start time:
//
//   - ReasonMissingAccess: SamplesExist or ImportCredentialsExist has reason MissingAccess (the
//     operator may not manage the samples, or may not read the pull secret). At once.
//   - ReasonInvalidConfiguration: ConfigurationValid is False. At once.
//   - a Config condition's own reason: that condition is Unknown (only while the status
//     controller is not running). At once.
//   - ReasonWritesRefused: SamplesExist has reason SampleWritesRefused and Trouble.RefusedSince
//     is older than the grace (DegradedGrace).
//   - ReasonAPIUnavailable: an API in Trouble.Outages (openshift-apiserver answering 503) has
//     done so for longer than the grace.
//
// Removed, Unmanaged, a Config being deleted, an unsupported architecture and an unreachable
// registry at install are never Degraded: the admin chose them, or nothing is wrong.
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
func conditions(cfg *samplesv1.Config, version string, trouble Trouble, now time.Time) (available, progressing, degraded condition) {
	available, progressing, degraded = samplesConditions(cfg, version, trouble, now)
	if cfg == nil {
		return available, progressing, degraded
	}
	if degraded.status != configv1.ConditionTrue {
		if message := outageMessage(trouble.Outages, trouble.grace(), now); message != "" {
			degraded = condition{configv1.ConditionTrue, ReasonAPIUnavailable, message}
		}
	}
	st := &cfg.Status
	if c := configstatus.Condition(st, samplesv1.SamplesExist); c != nil && c.Reason == configstatus.ReasonMissingAccess {
		missing := condition{configv1.ConditionFalse, ReasonMissingAccess, c.Message}
		return missing, missing, condition{configv1.ConditionTrue, ReasonMissingAccess, c.Message}
	}
	if c := configstatus.Condition(st, samplesv1.ImportCredentialsExist); c != nil && c.Reason == configstatus.ReasonMissingAccess {
		degraded = condition{configv1.ConditionTrue, ReasonMissingAccess, c.Message}
	}
	return available, progressing, degraded
}

// outageMessage names the APIs unavailable for longer than the grace, "" when none.
func outageMessage(outages []Outage, grace time.Duration, now time.Time) string {
	var parts []string
	for _, o := range outages {
		if now.Sub(o.Since) < grace {
			continue
		}
		parts = append(parts, fmt.Sprintf("the %s API has answered the operator 503 since %s (%s): %s",
			o.API, o.Since.UTC().Format(time.RFC3339), now.Sub(o.Since).Round(time.Second), o.Message))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "; until it answers the operator can neither see nor repair the samples (is openshift-apiserver running?)"
}

func samplesConditions(cfg *samplesv1.Config, version string, trouble Trouble, now time.Time) (available, progressing, degraded condition) {
	same := func(avail, prog configv1.ConditionStatus, reason, message string) (condition, condition, condition) {
		return condition{avail, reason, message}, condition{prog, reason, message}, condition{configv1.ConditionFalse, reason, message}
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

	// Degraded: the admin must act.
	degraded = condition{configv1.ConditionFalse, ReasonAsExpected, ""}
	if c := configstatus.Condition(st, samplesv1.ConfigurationValid); c != nil && c.Status == corev1.ConditionFalse {
		degraded = condition{configv1.ConditionTrue, ReasonInvalidConfiguration,
			fmt.Sprintf("the samples Config is invalid at version %s: %s", version, c.Message)}
	} else if reason, messages := unknownConditions(st); reason != "" {
		degraded = condition{configv1.ConditionTrue, reason, messages}
	}

	samplesExist := configstatus.Condition(st, samplesv1.SamplesExist)
	refused := samplesExist != nil && samplesExist.Reason == configstatus.ReasonWritesRefused
	if refused && degraded.status != configv1.ConditionTrue && !trouble.RefusedSince.IsZero() && now.Sub(trouble.RefusedSince) >= trouble.grace() {
		degraded = condition{configv1.ConditionTrue, ReasonWritesRefused, fmt.Sprintf("since %s (%s): %s",
			trouble.RefusedSince.UTC().Format(time.RFC3339), now.Sub(trouble.RefusedSince).Round(time.Second), samplesExist.Message)}
	}
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
		progressing = condition{configv1.ConditionFalse, ReasonFailedImageImports,
			fmt.Sprintf("samples installed at version %s, but some image imports failed (last change %s): %s",
				st.Version, importErrors.LastUpdateTime.UTC().Format("2006-01-02T15:04:05Z"), importErrors.Message)}
	default:
		progressing = condition{configv1.ConditionFalse, ReasonAsExpected, fmt.Sprintf("samples installed at version %s", st.Version)}
	}
	return available, progressing, degraded
}

// unknownConditions returns the reason of the first Unknown Config condition and every message.
func unknownConditions(st *samplesv1.ConfigStatus) (string, string) {
	reason := ""
	var messages []string
	for _, c := range st.Conditions {
		if c.Status != corev1.ConditionUnknown {
			continue
		}
		if reason == "" {
			reason = c.Reason
			if reason == "" {
				reason = string(c.Type) + "Unknown"
			}
		}
		if c.Message != "" {
			messages = append(messages, c.Message)
		}
	}
	return reason, strings.Join(messages, "; ")
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
func Degraded(cfg *samplesv1.Config, version string, trouble Trouble, now time.Time) bool {
	_, _, degraded := conditions(cfg, version, trouble, now)
	return degraded.status == configv1.ConditionTrue
}
