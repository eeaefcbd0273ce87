package desired

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Mode is what the Config asks of the samples as a whole.
type Mode int

const (
	// Frozen: write nothing (Unmanaged, or a Config whose spec is invalid).
	Frozen Mode = iota
	// Managed: create what is missing and revert drift.
	Managed
	// Removing: delete every sample the operator owns (Removed, or the Config is being deleted).
	Removing
)

// Verb is the one write an action makes.
type Verb string

const (
	None          Verb = ""
	Create        Verb = "create"
	Update        Verb = "update"
	Delete        Verb = "delete"
	MarkUnmanaged Verb = "mark-unmanaged" // an update that only sets the managed label to "false"
)

// Object is what both kinds of sample are: an API object that copies itself.
type Object[P any] interface {
	comparable
	metav1.Object
	DeepCopy() P
}

// Action is the one write that brings a live sample to what the mode asks.
type Action[P any] struct {
	Verb   Verb
	Object P // the object to create or update; the zero value for None and Delete
	// Drift names the owned fields an Update puts back ("spec.tags[latest].from", ...).
	Drift []string
	// Retires: the update only retires a sample the inventory no longer has (RetireImageStream).
	Retires bool
	// MarksOnly: the update only writes or removes the marks of what the inventory does not
	// ship (MarkUnshipped): a retired sample, a retired tag or an admin's own tag.
	MarksOnly bool
}

// ImageStreamAction and TemplateAction name the two instances.
type (
	ImageStreamAction = Action[*imagev1.ImageStream]
	TemplateAction    = Action[*templatev1.Template]
)

// ForImageStream decides the write for the imagestream `want` (nil when it should not exist as a
// managed sample), given the live object (nil when absent) and whether the name is skipped.
// Managed adopts a same-named object whatever its labels: it is made what want is, labelled
// managed=true (an admin keeps a version of their own by skipping the name in the Config). A
// skipped sample is left alone, only its label flipped to "false" so that everyone can see so.
// Removing deletes only objects labelled managed=true.
func ForImageStream(mode Mode, want *imagev1.ImageStream, skipped bool, live *imagev1.ImageStream) ImageStreamAction {
	return decide(mode, want, skipped, live, mergeImageStreamOnDrift)
}

// ForTemplate is ForImageStream for templates.
func ForTemplate(mode Mode, want *templatev1.Template, skipped bool, live *templatev1.Template) TemplateAction {
	return decide(mode, want, skipped, live, mergeTemplate)
}

func decide[P Object[P]](mode Mode, want P, skipped bool, live P, merge func(live, want P) (P, []string)) Action[P] {
	var absent P
	switch mode {
	case Managed:
		if skipped {
			if live != absent && live.GetLabels()[ManagedLabel] == "true" {
				out := live.DeepCopy()
				out.GetLabels()[ManagedLabel] = "false"
				return Action[P]{Verb: MarkUnmanaged, Object: out}
			}
			return Action[P]{}
		}
		if want == absent {
			return Action[P]{}
		}
		if live == absent {
			return Action[P]{Verb: Create, Object: want.DeepCopy()}
		}
		if merged, drift := merge(live, want); len(drift) > 0 {
			return Action[P]{Verb: Update, Object: merged, Drift: drift}
		}
	case Removing:
		if live != absent && live.GetDeletionTimestamp() == nil && live.GetLabels()[ManagedLabel] == "true" {
			return Action[P]{Verb: Delete}
		}
	}
	return Action[P]{}
}

// ImageStreamInSync reports whether a live imagestream already is what want asks for.
func ImageStreamInSync(live, want *imagev1.ImageStream) bool {
	return len(ImageStreamDrift(live, want)) == 0
}

// ImageStreamDrift names the owned fields where live differs from want.
func ImageStreamDrift(live, want *imagev1.ImageStream) []string {
	_, drift := mergeImageStreamOnDrift(live, want)
	return drift
}

// TemplateInSync reports whether a live template already is what want asks for.
func TemplateInSync(live, want *templatev1.Template) bool {
	return len(TemplateDrift(live, want)) == 0
}

// TemplateDrift names the owned fields where live differs from want.
func TemplateDrift(live, want *templatev1.Template) []string {
	_, drift := mergeTemplate(live, want)
	return drift
}

// mergeImageStream returns live with every field the operator owns set as in want, and the
// fields that differed (none: live is in sync): the labels
// and annotations of want (other keys, an admin's, are kept), the stream-level spec fields, and
// each inventory tag. Tags that are not in the inventory (added by an admin, or dropped from the
// inventory by an upgrade) are kept, as the compatible operator does. Fields the server fills in
// (a tag's generation, a default import mode) do not count as drift.
//
// A tag's importPolicy.scheduled and importPolicy.importMode are the admin's while the live
// stream is at want's version: OpenShift's documentation tells admins to schedule imports of a
// sample tag (`oc tag --scheduled`) and to set PreserveOriginal on multi-arch clusters. They take
// the inventory's values when the operator creates the tag (a new stream, a deleted tag) or moves
// the stream to a new version.
func mergeImageStream(live, want *imagev1.ImageStream) (*imagev1.ImageStream, []string) {
	return mergeImageStreamOnto(live.DeepCopy(), live, want)
}

// mergeImageStreamOnDrift is mergeImageStream that copies live only when it drifted, nil
// otherwise: every resync compares every stream, most in sync, and the copy of each was most of
// what a resync allocated. The comparison runs on a copy of live that shares all but the
// labels and annotations, the only parts of live mergeImageStreamOnto changes in place.
func mergeImageStreamOnDrift(live, want *imagev1.ImageStream) (*imagev1.ImageStream, []string) {
	scratch := &imagev1.ImageStream{TypeMeta: live.TypeMeta, ObjectMeta: live.ObjectMeta, Spec: live.Spec}
	scratch.Labels, scratch.Annotations = maps.Clone(live.Labels), maps.Clone(live.Annotations)
	if _, drift := mergeImageStreamOnto(scratch, live, want); len(drift) == 0 {
		return nil, nil
	}
	return mergeImageStream(live, want)
}

// mergeImageStreamOnto is mergeImageStream onto out, a copy of live. It changes out's labels and
// annotations and sets fields of out and out.Spec; it changes nothing else out shares with live.
func mergeImageStreamOnto(out, live, want *imagev1.ImageStream) (*imagev1.ImageStream, []string) {
	adminImportPolicy := live.Annotations[VersionAnnotation] == want.Annotations[VersionAnnotation]
	// The list of the tags the operator wrote rides along with every write but is no reason for
	// one: a stream another writer installed (upstream's operator, at the same version) is taken
	// over without a write, and gets the list with its next one.
	// So does the import mode the tags follow: it is written when a tag's mode is.
	wantMeta := want.ObjectMeta
	wantMeta.Annotations = maps.Clone(want.Annotations)
	for _, key := range []string{ManagedTagsAnnotation, ImportModeAnnotation} {
		if value, ok := want.Annotations[key]; ok {
			delete(wantMeta.Annotations, key)
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[key] = value
		}
	}
	followed := imagev1.ImportModeType(want.Annotations[ImportModeAnnotation])
	drift := mergeMeta(&out.ObjectMeta, &wantMeta)

	if out.Spec.DockerImageRepository != want.Spec.DockerImageRepository {
		out.Spec.DockerImageRepository = want.Spec.DockerImageRepository
		drift = append(drift, "spec.dockerImageRepository")
	}
	if out.Spec.LookupPolicy != want.Spec.LookupPolicy {
		out.Spec.LookupPolicy = want.Spec.LookupPolicy
		drift = append(drift, "spec.lookupPolicy")
	}

	liveTags := map[string]int{}
	for i, tag := range out.Spec.Tags {
		liveTags[tag.Name] = i
	}
	// The tags whose mode an admin set, remembered with the mode the others follow.
	var adminModes []string
	var tagDrift []string
	tags := make([]imagev1.TagReference, 0, len(want.Spec.Tags)+len(out.Spec.Tags))
	wanted := map[string]bool{}
	for _, wantTag := range want.Spec.Tags {
		wanted[wantTag.Name] = true
		// Compared as a shallow copy (only its import policy, a value, is set below) and copied
		// whole only when written: most tags are in sync.
		target := wantTag
		i, ok := liveTags[wantTag.Name]
		if !ok {
			tagDrift = append(tagDrift, "spec.tags["+wantTag.Name+"]")
			tags = append(tags, *target.DeepCopy())
			continue
		}
		if adminImportPolicy {
			target.ImportPolicy.Scheduled = out.Spec.Tags[i].ImportPolicy.Scheduled
			// A mode that follows the cluster's moves with it, unless an admin set it.
			liveMode := out.Spec.Tags[i].ImportPolicy.ImportMode
			switch {
			case followed == "" || wantTag.ImportPolicy.ImportMode != followed:
				target.ImportPolicy.ImportMode = liveMode
			case !followsCluster(live, wantTag.Name, liveMode):
				target.ImportPolicy.ImportMode = liveMode
				adminModes = append(adminModes, wantTag.Name)
			}
		}
		fields := tagDifferences(out.Spec.Tags[i], target)
		if len(fields) == 0 {
			tags = append(tags, out.Spec.Tags[i])
			continue
		}
		for _, f := range fields {
			tagDrift = append(tagDrift, "spec.tags["+wantTag.Name+"]."+f)
		}
		tags = append(tags, *target.DeepCopy())
	}
	// Tags the Config newly skips go; those it skipped before are gone already, and one an admin
	// has put back since is theirs. A tag the operator wrote that the inventory no longer has is
	// retired: kept, hidden, and named so.
	removedBefore, wroteBefore := skippedTagsOf(live), managedTagsOf(live)
	for _, tag := range out.Spec.Tags {
		switch {
		case wanted[tag.Name]:
		case slices.Contains(skippedTagsOf(want), tag.Name) && !slices.Contains(removedBefore, tag.Name):
			tagDrift = append(tagDrift, "spec.tags["+tag.Name+"]")
		case slices.Contains(wroteBefore, tag.Name) && !IsRetiredTag(tag):
			retired := *tag.DeepCopy()
			retireTag(&retired, want.Annotations[VersionAnnotation])
			tags = append(tags, retired)
			tagDrift = append(tagDrift, retiredTagField(tag.Name))
		default:
			tags = append(tags, tag)
		}
	}
	drift = append(drift, dropStaleAnnotations(&out.ObjectMeta, &want.ObjectMeta)...)
	if len(tagDrift) > 0 {
		out.Spec.Tags = tags
		drift = append(drift, tagDrift...)
	}
	// Written with the mode the others follow (the stream's next write); a stream moved to a
	// new version takes the inventory's modes, an admin's none.
	if followed != "" || !adminImportPolicy {
		setAdminImportModeTags(out, adminModes)
	}
	return out, drift
}

// AdminSettable reports whether a drift field (Action.Drift) is one OpenShift's documentation
// lets admins set on a sample: a tag's importPolicy.scheduled and importPolicy.importMode. They
// drift only when the operator moves a stream to a new version, which resets them; an admin's
// value there is no edit to revert.
func AdminSettable(field string) bool {
	return strings.HasPrefix(field, "spec.tags[") &&
		(strings.HasSuffix(field, "].importPolicy.scheduled") || strings.HasSuffix(field, "].importPolicy.importMode"))
}

// tagDifferences names the fields of a tag that the operator sets and live does not have as in
// want. Generation and an import mode the inventory leaves empty are the server's to fill.
func tagDifferences(live, want imagev1.TagReference) []string {
	var fields []string
	diff := func(differs bool, field string) {
		if differs {
			fields = append(fields, field)
		}
	}
	diff(!maps.Equal(live.Annotations, want.Annotations), "annotations")
	diff(!reflect.DeepEqual(live.From, want.From), "from")
	diff(live.Reference != want.Reference, "reference")
	diff(referencePolicyType(live) != referencePolicyType(want), "referencePolicy.type")
	diff(live.ImportPolicy.Insecure != want.ImportPolicy.Insecure, "importPolicy.insecure")
	diff(live.ImportPolicy.Scheduled != want.ImportPolicy.Scheduled, "importPolicy.scheduled")
	diff(want.ImportPolicy.ImportMode != "" && live.ImportPolicy.ImportMode != want.ImportPolicy.ImportMode, "importPolicy.importMode")
	diff(want.Generation != nil && !reflect.DeepEqual(live.Generation, want.Generation), "generation")
	return fields
}

// referencePolicyType is the tag's reference policy as the server keeps it: openshift-apiserver
// defaults an empty one to Source.
func referencePolicyType(tag imagev1.TagReference) imagev1.TagReferencePolicyType {
	if tag.ReferencePolicy.Type == "" {
		return imagev1.SourceTagReferencePolicy
	}
	return tag.ReferencePolicy.Type
}

// mergeTemplate compares the owned content by digest (templateContentOf), which is all a trimmed
// template from the cache has of it. From a trimmed live template it returns the drift and an
// object that is still trimmed (IsTrimmed), with no content put back: only the whole object may
// be written, and the samples controller reads it for that.
func mergeTemplate(live, want *templatev1.Template) (*templatev1.Template, []string) {
	out := live.DeepCopy()
	drift := mergeMeta(&out.ObjectMeta, &want.ObjectMeta)
	drift = append(drift, dropStaleAnnotations(&out.ObjectMeta, &want.ObjectMeta)...)
	whole := !IsTrimmed(live)
	have, wanted := templateContentOf(live), templateContentOf(want)
	if have.message != wanted.message {
		drift = append(drift, "message")
		if whole {
			out.Message = want.Message
		}
	}
	if have.parameters != wanted.parameters {
		drift = append(drift, "parameters")
		if whole {
			out.Parameters = append([]templatev1.Parameter(nil), want.Parameters...)
		}
	}
	if have.objectLabels != wanted.objectLabels {
		drift = append(drift, "labels") // ObjectLabels by its JSON name, a managedFields path
		if whole {
			out.ObjectLabels = maps.Clone(want.ObjectLabels)
		}
	}
	if objectsDrift := objectDifferences(have.objects, wanted.objects); len(objectsDrift) > 0 {
		drift = append(drift, objectsDrift...)
		if whole {
			out.Objects = want.DeepCopy().Objects
		}
	}
	return out, drift
}

// objectDifferences names the template objects whose digests differ.
func objectDifferences(have, want []string) []string {
	if len(have) != len(want) {
		return []string{"objects"}
	}
	var fields []string
	for i := range have {
		if have[i] != want[i] {
			fields = append(fields, fmt.Sprintf("objects[%d]", i))
		}
	}
	return fields
}

func rawOf(t *templatev1.Template, i int) []byte {
	if t.Objects[i].Raw != nil {
		return t.Objects[i].Raw
	}
	if t.Objects[i].Object != nil {
		raw, _ := json.Marshal(t.Objects[i].Object)
		return raw
	}
	return nil
}

// mergeMeta sets every label and annotation of want on out, keeps the others, and names those
// it set.
func mergeMeta(out, want *metav1.ObjectMeta) []string {
	var drift []string
	for _, k := range slices.Sorted(maps.Keys(want.Labels)) {
		if cur, ok := out.Labels[k]; !ok || cur != want.Labels[k] {
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			out.Labels[k] = want.Labels[k]
			drift = append(drift, "metadata.labels["+k+"]")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want.Annotations)) {
		if cur, ok := out.Annotations[k]; !ok || cur != want.Annotations[k] {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = want.Annotations[k]
			drift = append(drift, "metadata.annotations["+k+"]")
		}
	}
	return drift
}

// dropStaleAnnotations removes the annotations the operator sets only in some states (the tags
// the Config skips, a retirement, a cause that kept the sample from working here) when want no
// longer has them: a sample the Config skips no tag of, one a later inventory has again, one
// that works again.
func dropStaleAnnotations(out, want *metav1.ObjectMeta) []string {
	var drift []string
	for _, key := range []string{StreamSkippedTagsAnnotation, RetiredAnnotation, UnusableAnnotation} {
		if _, wanted := want.Annotations[key]; wanted {
			continue
		}
		if _, had := out.Annotations[key]; had {
			delete(out.Annotations, key)
			drift = append(drift, "metadata.annotations["+key+"]")
			// A template retired or hidden whose inventory copy has no catalog tags of its own
			// got "hidden" added to what the live one had (nothing, or an admin's tags); with
			// catalog tags, mergeMeta has already set them back.
			if _, wantTags := want.Annotations[tagsAnnotation]; key != StreamSkippedTagsAnnotation && !wantTags {
				unhide(out.Annotations)
			}
		}
	}
	return drift
}
