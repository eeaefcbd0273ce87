// Package configstatus computes the status of the samples Config from what the operator observes,
// as a pure function. The status controller writes the result only when it differs.
package configstatus

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// Condition reasons this operator sets on the Config.
const (
	ReasonInstalled = "SamplesInstalled"
	ReasonPending   = "SamplesPending"
	// ReasonUpdating keeps SamplesExist True while samples that were installed are moved to a new
	// version or registry, or repaired: they exist all along, and the ClusterOperator stays
	// Available through an upgrade.
	ReasonUpdating             = "SamplesUpdating"
	ReasonCurrentlyRemoved     = "CurrentlyRemoved"
	ReasonCurrentlyUnmanaged   = "CurrentlyUnmanaged"
	ReasonInvalidConfiguration = "InvalidConfiguration"
	ReasonValidConfiguration   = "ValidConfiguration"
	ReasonRemoving             = "RemovingSamples"
	ReasonNotRemoving          = "NotRemoving"
	ReasonNoImportErrors       = "NoImportErrors"
	ReasonImportErrors         = "FailedImageImports"
	ReasonCredentials          = "CredentialsPresent"
	ReasonNoCredentials        = "CredentialsMissing"
	ReasonDeprecated           = "Deprecated"
	// ReasonMissingAccess is on SamplesExist when the operator may not manage the samples, and on
	// ImportCredentialsExist when it may not read the pull secret.
	ReasonMissingAccess = "MissingAccess"
	// ReasonWritesRefused is on SamplesExist while the API server refuses writes of samples for a
	// reason other than RBAC (a quota, an admission plugin or webhook, an invalid object, a 5xx
	// that lasts): True when the samples were installed before, False while they never were.
	ReasonWritesRefused = "SampleWritesRefused"
)

// refusedNamed is how many refused samples a message names; the rest are counted.
const refusedNamed = 3

// listNamed is how many samples a message names in each of its lists (unusable samples, partial
// tags, retired and held-back samples, failed imports); the rest are counted. Whatever the cluster
// has, SamplesExist stays short, and it is not rewritten when only samples past the named ones
// change: the lists are sorted, so those are the same first few.
const listNamed = 5

// statusListsAll is where an administrator finds every sample a bounded list leaves out.
const statusListsAll = "`oc samples status` lists them all"

// fewOf names the first listNamed of items in sorted order and counts the rest, saying where all
// of them are listed.
func fewOf(items []string, listedAt string) string {
	sorted := slices.Sorted(slices.Values(items))
	if len(sorted) <= listNamed {
		return strings.Join(sorted, ", ")
	}
	return fmt.Sprintf("%s and %d more (%s)", strings.Join(sorted[:listNamed], ", "), len(sorted)-listNamed, listedAt)
}

// ConditionTypes are the seven conditions every Config status carries, in this order.
var ConditionTypes = []samplesv1.ConfigConditionType{
	samplesv1.SamplesExist,
	samplesv1.ImportCredentialsExist,
	samplesv1.ConfigurationValid,
	samplesv1.ImageChangesInProgress,
	samplesv1.RemovePending,
	samplesv1.MigrationInProgress,
	samplesv1.ImportImageErrorsExist,
}

// Observed is everything the status depends on.
type Observed struct {
	Config  *samplesv1.Config
	Version string
	// Validation of the spec (ignored unless the Config asks for Managed).
	Validation configspec.Validation
	// Samples is how many imagestreams and templates the Config asks for.
	Samples int
	// Pending counts the wanted samples that are missing or not yet as they should be.
	Pending int
	// MarksPending counts those of Pending that differ from what they should be only in their
	// usability marks (desired.Marks): a verdict changed and the marks are not written yet.
	MarksPending int
	// Owned counts live samples labelled managed=true: what Removed still has to delete.
	Owned int
	// Blocked maps the imagestreams the import allow-list keeps out to their registry.
	Blocked map[string]string
	// Mirrors is what the cluster's mirror sets do for the imagestreams the Config installs (nil
	// when not known).
	Mirrors *mirrorsets.Coverage
	// HeldBack names the samples ("ImageStream/python") the operator stopped reverting for now:
	// something rewrites them faster than its revert budget allows.
	HeldBack []string
	// Refused are the samples whose last write the API server refused (refusal.Store.Reported).
	Refused []refusal.Record
	// RefusalTriggersWatched: the operator watches the ResourceQuotas and LimitRanges of
	// openshift, whose changes retry refused writes at once.
	RefusalTriggersWatched bool
	// ImportErrors names the managed imagestreams whose imports failed, sorted.
	ImportErrors []string
	// Retired are the samples upgrades retired (desired.RetiredOf); AwaitingRetirement counts the
	// managed samples the inventory no longer has that are not marked retired yet.
	Retired            []desired.Retired
	AwaitingRetirement int
	// Unusable are the samples that cannot work on this cluster, or on some of its nodes only
	// (usability.Verdict); Offered says which of them the Config keeps in the catalog.
	Unusable []usability.Verdict
	Offered  func(kind, name string) bool
	// Credentials says whether imports can authenticate to the samples registry, and why.
	CredentialsOK      bool
	CredentialsMessage string
	// MissingAccess lists what an administrator has not granted the operator (access.Grants order).
	// Without access.Samples, Samples, Pending, Owned and ImportErrors are not known; without
	// access.PullSecret, the credentials are not.
	MissingAccess []access.Grant
	// InstalledByOLM picks the commands the messages give for missing access.
	InstalledByOLM bool
	Now            metav1.Time
}

// BlockedMessage names the imagestreams the import allow-list keeps out, and their registries,
// as a sentence to append to a condition's message ("" when none).
func BlockedMessage(blocked map[string]string) string {
	if len(blocked) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(blocked))
	registries := slices.Compact(slices.Sorted(maps.Values(blocked)))
	return fmt.Sprintf("; %d imagestreams are not installed or updated because images.config.openshift.io/cluster spec.allowedRegistriesForImport does not allow their registry (%s): %s; allow it there, or skip them in spec.skippedImagestreams",
		len(names), strings.Join(registries, ", "), strings.Join(names, ", "))
}

// MirrorsMessage says, as a sentence to append to a condition's message ("" when none), that the
// samples' images are imported through the cluster's mirror sets, naming them, and which
// imagestreams no mirror set serves: they will not import unless the cluster reaches their
// registries. When the operator installed the samples because the mirrors answered and no mirror
// set serves them any more, it says what can no longer import.
func MirrorsMessage(cfg *samplesv1.Config, mirrors *mirrorsets.Coverage) string {
	if mirrors == nil {
		return ""
	}
	unmirrored := mirrors.Unmirrored()
	_, installedThroughMirrors := bootstrapstate.Of(cfg).ThroughMirrorSets()
	// Ifs, not a switch: Go's coverage has no block for a case's expression, so mutation testing
	// would leave the mutants of its condition untried.
	if mirrors.Any() {
		msg := fmt.Sprintf("; their images are imported through the cluster's mirror sets (%s)", strings.Join(mirrors.By(), ", "))
		if len(unmirrored) > 0 {
			msg += fmt.Sprintf("; no mirror set serves the images of %s, which will not import unless the cluster reaches those registries: add them to a mirror set, or skip them in spec.skippedImagestreams",
				mirrorsets.StreamsPhrase(unmirrored))
		}
		return msg
	}
	if installedThroughMirrors && len(unmirrored) > 0 {
		return fmt.Sprintf("; the samples were installed to import through the cluster's mirror sets, but no mirror set serves their images any more: %s can no longer import unless the cluster reaches those registries; restore the mirror set, or set spec.samplesRegistry to the mirror",
			mirrorsets.StreamsPhrase(unmirrored))
	}
	return ""
}

// HeldBackMessage names the samples the operator stopped reverting for now, as a sentence to
// append to a condition's message ("" when none).
func HeldBackMessage(heldBack []string) string {
	if len(heldBack) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d samples keep being changed after each revert, so the operator reverts them again only once its budget allows (see the SampleRevertBudgetExceeded events): %s",
		len(heldBack), fewOf(heldBack, "the SampleRevertBudgetExceeded events name them all"))
}

// RetiredMessage names the first few samples upgrades retired and counts the others, as a
// sentence to append to a condition's message ("" when none).
func RetiredMessage(retired []desired.Retired) string {
	if len(retired) == 0 {
		return ""
	}
	names := make([]string, len(retired))
	for i, r := range retired {
		names[i] = fmt.Sprintf("%s %s (retired in %s)", r.Kind, r.Name, r.Version)
	}
	return fmt.Sprintf("; %d samples the inventory no longer has are kept for their users, hidden from the catalog (annotation %s): %s",
		len(retired), desired.RetiredAnnotation, fewOf(names, statusListsAll))
}

// UnusableMessage counts the samples that cannot work on this cluster and the tags that lack an
// image for some node architectures, naming the first few of each (by kind and name) with their
// reasons, as a sentence to append to a condition's message ("" when none). A verdict on a sample
// past the named ones changes the message only when it changes the count.
func UnusableMessage(verdicts []usability.Verdict, offered func(kind, name string) bool) string {
	var unusable, partial []string
	for _, v := range verdicts {
		name := strings.ToLower(v.Kind) + "/" + v.Name
		if !v.Usable() {
			kept := ""
			if offered != nil && offered(v.Kind, v.Name) {
				kept = ", offered all the same"
			}
			unusable = append(unusable, fmt.Sprintf("%s (%s%s)", name, usability.Annotation(v), kept))
		}
		if v.Partial() {
			partial = append(partial, fmt.Sprintf("%s (none for %s)", name, strings.Join(v.MissingArchitectures, ", ")))
		}
	}
	var out string
	if len(unusable) > 0 {
		out += fmt.Sprintf("; %d samples cannot work on this cluster and are hidden from the catalog unless annotation %s keeps them offered (annotation %s): %s",
			len(unusable), configspec.OfferedAnnotation, desired.UnusableAnnotation, fewOf(unusable, statusListsAll))
	}
	if len(partial) > 0 {
		out += fmt.Sprintf("; %d imagestream tags have images for some of the nodes' architectures only: %s", len(partial), fewOf(partial, "`oc samples status -o wide` lists them all"))
	}
	return out
}

// RefusedMessage says which sample writes the API server refuses and why, in its own words, one
// sentence per cause ("" when none), and when the operator tries again: at once on a change of
// a ResourceQuota or LimitRange of openshift only when it watches them (triggersWatched; their
// RBAC is optional).
func RefusedMessage(refused []refusal.Record, triggersWatched bool) string {
	if len(refused) == 0 {
		return ""
	}
	var causes []string
	byCause := map[string][]refusal.Record{}
	for _, r := range refused {
		if _, ok := byCause[r.Cause]; !ok {
			causes = append(causes, r.Cause)
		}
		byCause[r.Cause] = append(byCause[r.Cause], r)
	}
	var parts []string
	for _, cause := range causes {
		records := byCause[cause]
		var names []string
		for i, r := range records {
			if i == refusedNamed {
				names = append(names, fmt.Sprintf("and %d more", len(records)-refusedNamed))
				break
			}
			names = append(names, r.Key())
		}
		first := records[0]
		parts = append(parts, fmt.Sprintf("the API server refuses to %s %d samples (%s): %s", first.Verb, len(records), strings.Join(names, ", "), first.Refusal))
	}
	if !triggersWatched {
		return strings.Join(parts, "; ") + "; the operator retries each at least once a minute, and at once when its own access changes (it cannot watch the ResourceQuotas and LimitRanges of openshift: grant it list and watch on them to have their changes retried at once)"
	}
	return strings.Join(parts, "; ") + "; the operator retries each at least once a minute, and at once when a ResourceQuota or LimitRange in openshift or its own access changes"
}

// Compute returns the Config status for what was observed, starting from the current status so
// that what has not changed (and every condition's timestamps) stays as it is.
func Compute(o Observed) samplesv1.ConfigStatus {
	cfg := o.Config
	st := *cfg.Status.DeepCopy()
	c := conditionSetter{status: &st, now: o.Now}

	// The deprecated conditions exist for compatibility with tools that wait for them.
	c.set(samplesv1.ImageChangesInProgress, corev1.ConditionFalse, ReasonDeprecated, "this condition is no longer used")
	c.set(samplesv1.MigrationInProgress, corev1.ConditionFalse, ReasonDeprecated, "this condition is no longer used")
	switch {
	case slices.Contains(o.MissingAccess, access.PullSecret):
		c.set(samplesv1.ImportCredentialsExist, corev1.ConditionFalse, ReasonMissingAccess,
			"cannot tell whether imports can authenticate: "+access.Message([]access.Grant{access.PullSecret}, o.InstalledByOLM))
	case o.CredentialsOK:
		c.set(samplesv1.ImportCredentialsExist, corev1.ConditionTrue, ReasonCredentials, o.CredentialsMessage)
	default:
		c.set(samplesv1.ImportCredentialsExist, corev1.ConditionFalse, ReasonNoCredentials, o.CredentialsMessage)
	}
	c.ensure(samplesv1.ImportImageErrorsExist, corev1.ConditionFalse, ReasonNoImportErrors, "")

	removing := cfg.DeletionTimestamp != nil || cfg.Spec.ManagementState == operatorv1.Removed
	switch {
	case slices.Contains(o.MissingAccess, access.Samples):
		// Whatever the management state, the operator can neither see nor change the samples.
		// The message names every missing grant: SamplesExist is where admins and the
		// ClusterOperator look first.
		c.set(samplesv1.SamplesExist, corev1.ConditionFalse, ReasonMissingAccess,
			"the operator cannot install or manage the samples: "+access.Message(o.MissingAccess, o.InstalledByOLM))
		// The spec can still be judged, so that an admin fixes both at once. (Ifs, not a switch,
		// for mutation testing, as in MirrorsMessage.)
		if removing || cfg.Spec.ManagementState == operatorv1.Unmanaged {
			c.ensure(samplesv1.ConfigurationValid, corev1.ConditionTrue, ReasonValidConfiguration, "")
		} else if o.Validation.Err != nil {
			c.set(samplesv1.ConfigurationValid, corev1.ConditionFalse, ReasonInvalidConfiguration, o.Validation.Err.Error())
		} else {
			c.set(samplesv1.ConfigurationValid, corev1.ConditionTrue, ReasonValidConfiguration, joinWarnings(o.Validation.Warnings))
		}
		c.ensure(samplesv1.RemovePending, corev1.ConditionFalse, ReasonNotRemoving, "")

	case removing:
		if o.Owned > 0 {
			message := "deleting the samples this operator manages"
			if refused := RefusedMessage(o.Refused, o.RefusalTriggersWatched); refused != "" {
				message += "; " + refused
			}
			c.set(samplesv1.RemovePending, corev1.ConditionTrue, ReasonRemoving, message)
			c.ensure(samplesv1.SamplesExist, corev1.ConditionTrue, ReasonInstalled, "")
			c.ensure(samplesv1.ConfigurationValid, corev1.ConditionTrue, ReasonValidConfiguration, "")
			break
		}
		st.ManagementState = operatorv1.Removed
		st.Version = o.Version
		st.Architectures = nil
		c.set(samplesv1.RemovePending, corev1.ConditionFalse, ReasonNotRemoving, "")
		if reason, message, ok := bootstrapstate.Of(cfg).Removal(); ok {
			c.set(samplesv1.SamplesExist, corev1.ConditionFalse, reason, message)
		} else {
			c.set(samplesv1.SamplesExist, corev1.ConditionFalse, ReasonCurrentlyRemoved, "managementState is Removed: the samples were deleted; set it to Managed to install them")
		}
		c.set(samplesv1.ImportImageErrorsExist, corev1.ConditionFalse, ReasonNoImportErrors, "")
		c.ensure(samplesv1.ConfigurationValid, corev1.ConditionTrue, ReasonValidConfiguration, "")

	case cfg.Spec.ManagementState == operatorv1.Unmanaged:
		st.ManagementState = operatorv1.Unmanaged
		st.Version = o.Version
		c.set(samplesv1.RemovePending, corev1.ConditionFalse, ReasonNotRemoving, "")
		c.ensure(samplesv1.SamplesExist, corev1.ConditionFalse, ReasonCurrentlyUnmanaged, "managementState is Unmanaged: the operator does not create, update or delete samples")
		c.ensure(samplesv1.ConfigurationValid, corev1.ConditionTrue, ReasonValidConfiguration, "")

	case o.Validation.Err != nil:
		// Nothing is changed while the spec is invalid; only the condition says why.
		c.set(samplesv1.ConfigurationValid, corev1.ConditionFalse, ReasonInvalidConfiguration, o.Validation.Err.Error())
		c.ensure(samplesv1.SamplesExist, corev1.ConditionFalse, ReasonPending, "")
		c.ensure(samplesv1.RemovePending, corev1.ConditionFalse, ReasonNotRemoving, "")

	default: // Managed ("" and Force mean Managed too)
		st.ManagementState = operatorv1.Managed
		c.set(samplesv1.ConfigurationValid, corev1.ConditionTrue, ReasonValidConfiguration, joinWarnings(o.Validation.Warnings))
		c.set(samplesv1.RemovePending, corev1.ConditionFalse, ReasonNotRemoving, "")
		st.Architectures = append([]string(nil), cfg.Spec.Architectures...)
		st.SamplesRegistry = cfg.Spec.SamplesRegistry
		st.SkippedImagestreams = append([]string(nil), cfg.Spec.SkippedImagestreams...)
		st.SkippedTemplates = append([]string(nil), cfg.Spec.SkippedTemplates...)
		if len(o.ImportErrors) > 0 {
			c.set(samplesv1.ImportImageErrorsExist, corev1.ConditionTrue, ReasonImportErrors, fmt.Sprintf(
				"image imports failed for imagestreams %s: each has a ConfigMap of the same name in %s whose data gives the error per tag; the imports are retried",
				fewOf(o.ImportErrors, statusListsAll), names.OperatorNamespace))
		} else {
			c.set(samplesv1.ImportImageErrorsExist, corev1.ConditionFalse, ReasonNoImportErrors, "")
		}
		refused := RefusedMessage(o.Refused, o.RefusalTriggersWatched)
		mirrors := MirrorsMessage(cfg, o.Mirrors)
		samplesExist := Condition(&st, samplesv1.SamplesExist)
		installed := samplesExist != nil && samplesExist.Status == corev1.ConditionTrue
		if Outstanding(&st, o) == 0 {
			st.Version = o.Version
			c.set(samplesv1.SamplesExist, corev1.ConditionTrue, ReasonInstalled, fmt.Sprintf("%d samples are installed at version %s%s%s%s%s%s", o.Samples, o.Version, mirrors, BlockedMessage(o.Blocked), HeldBackMessage(o.HeldBack), RetiredMessage(o.Retired), UnusableMessage(o.Unusable, o.Offered)))
		} else if refused != "" && installed {
			c.set(samplesv1.SamplesExist, corev1.ConditionTrue, ReasonWritesRefused, fmt.Sprintf("samples are installed at version %s; %s", orNone(st.Version), refused))
		} else if refused != "" {
			c.set(samplesv1.SamplesExist, corev1.ConditionFalse, ReasonWritesRefused, fmt.Sprintf("creating the samples of version %s; %s", o.Version, refused))
		} else if installed {
			c.set(samplesv1.SamplesExist, corev1.ConditionTrue, ReasonUpdating, updatingMessage(st.Version, o)+mirrors+HeldBackMessage(o.HeldBack))
		} else if why, ok := bootstrapstate.Of(cfg).SwitchedByRegistry(); ok {
			c.set(samplesv1.SamplesExist, corev1.ConditionFalse, configspec.ReasonRegistryReachable, fmt.Sprintf("%s; creating the samples of version %s", why, o.Version))
		} else if why, ok := bootstrapstate.Of(cfg).ThroughMirrorSets(); ok {
			c.set(samplesv1.SamplesExist, corev1.ConditionFalse, configspec.ReasonThroughMirrorSets, fmt.Sprintf("%s; creating the samples of version %s%s", why, o.Version, BlockedMessage(o.Blocked)))
		} else {
			c.set(samplesv1.SamplesExist, corev1.ConditionFalse, ReasonPending, fmt.Sprintf("creating and updating the samples of version %s%s%s", o.Version, mirrors, BlockedMessage(o.Blocked)))
		}
	}
	c.sort() // a status written by another version may hold the conditions in another order
	return st
}

// Outstanding is how many samples keep SamplesExist from saying the samples are installed
// (cur is the status so far). A verdict change is not progress: once the samples are installed at
// this version, a sample that differs only in its usability marks does not count, so that marking
// or unmarking them (a group switched off or on) neither moves SamplesExist to SamplesUpdating nor
// makes the ClusterOperator Progressing. Before that (an install, an upgrade) it counts, so that
// SamplesExist=True comes with the marks in place; so it does while a write is refused, which
// SamplesExist must name.
func Outstanding(cur *samplesv1.ConfigStatus, o Observed) int {
	samplesExist := Condition(cur, samplesv1.SamplesExist)
	installedHere := samplesExist != nil && samplesExist.Status == corev1.ConditionTrue && cur.Version == o.Version
	if !installedHere || len(o.Refused) > 0 {
		return o.Pending
	}
	return o.Pending - o.MarksPending
}

// updatingMessage says what is installed and what the operator is doing while SamplesExist stays
// True over pending work. It carries no count, so that each sample written does not cost a status
// write.
func updatingMessage(installed string, o Observed) string {
	if installed != "" && installed != o.Version {
		return fmt.Sprintf("samples are installed at version %s; updating them to version %s%s", installed, o.Version, BlockedMessage(o.Blocked))
	}
	return fmt.Sprintf("samples are installed at version %s; creating and updating the ones not as the Config asks%s", o.Version, BlockedMessage(o.Blocked))
}

// Changed reports whether a computed status differs from the current one.
func Changed(current, computed *samplesv1.ConfigStatus) bool {
	return !equality.Semantic.DeepEqual(normalize(current), normalize(computed))
}

func normalize(s *samplesv1.ConfigStatus) *samplesv1.ConfigStatus {
	out := s.DeepCopy()
	if len(out.Architectures) == 0 {
		out.Architectures = nil
	}
	if len(out.SkippedImagestreams) == 0 {
		out.SkippedImagestreams = nil
	}
	if len(out.SkippedTemplates) == 0 {
		out.SkippedTemplates = nil
	}
	return out
}

// Condition returns the condition of a type, or nil.
func Condition(st *samplesv1.ConfigStatus, t samplesv1.ConfigConditionType) *samplesv1.ConfigCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

type conditionSetter struct {
	status *samplesv1.ConfigStatus
	now    metav1.Time
}

// set makes a condition say exactly this; timestamps move only when something changes, and the
// transition time only when the status does.
func (c conditionSetter) set(t samplesv1.ConfigConditionType, status corev1.ConditionStatus, reason, message string) {
	cur := Condition(c.status, t)
	if cur == nil {
		c.status.Conditions = append(c.status.Conditions, samplesv1.ConfigCondition{
			Type: t, Status: status, Reason: reason, Message: message,
			LastUpdateTime: c.now, LastTransitionTime: c.now,
		})
		c.sort()
		return
	}
	if cur.Status == status && cur.Reason == reason && cur.Message == message {
		return
	}
	if cur.Status != status {
		cur.LastTransitionTime = c.now
	}
	cur.Status, cur.Reason, cur.Message, cur.LastUpdateTime = status, reason, message, c.now
}

// ensure creates a condition with this value only when it does not exist yet.
func (c conditionSetter) ensure(t samplesv1.ConfigConditionType, status corev1.ConditionStatus, reason, message string) {
	if Condition(c.status, t) == nil {
		c.set(t, status, reason, message)
	}
}

// sort keeps conditions in ConditionTypes order, so that equal sets compare equal.
func (c conditionSetter) sort() {
	var ordered []samplesv1.ConfigCondition
	for _, t := range ConditionTypes {
		if cur := Condition(c.status, t); cur != nil {
			ordered = append(ordered, *cur)
		}
	}
	for _, cond := range c.status.Conditions {
		known := false
		for _, t := range ConditionTypes {
			known = known || cond.Type == t
		}
		if !known {
			ordered = append(ordered, cond)
		}
	}
	c.status.Conditions = ordered
}

func orNone(v string) string {
	if v == "" {
		return "(none yet)"
	}
	return v
}

func joinWarnings(w []string) string {
	out := ""
	for i, s := range w {
		if i > 0 {
			out += "; "
		}
		out += s
	}
	return out
}
