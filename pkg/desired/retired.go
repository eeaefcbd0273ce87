package desired

import (
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
)

// A sample is retired when an upgrade's inventory no longer has it: an imagestream, a template,
// or a tag of an imagestream that stays. The operator keeps it, as upstream does (builds and
// deployments that use it keep working), but hides it from the console's catalog and says which
// version retired it.
const (
	// RetiredAnnotation names the operator version whose inventory no longer has the sample: on
	// a retired imagestream or template, and on a retired tag.
	RetiredAnnotation = "samples.operator.openshift.io/retired-in"
	// ManagedTagsAnnotation, on an imagestream, lists the tags the operator wrote (sorted,
	// comma-separated): a live tag not in the inventory is retired only if it is listed, and an
	// admin's own tag never is.
	ManagedTagsAnnotation = "samples.operator.openshift.io/managed-tags"
	// tagsAnnotation is the console's list of a sample's catalog tags; "hidden" keeps it out of
	// the catalog (openshift/library marked end-of-life tags so before removing them).
	tagsAnnotation = "tags"
	hiddenTag      = "hidden"
)

// withHidden adds "hidden" to a "tags" annotation value.
func withHidden(tags string) string {
	if isHidden(tags) {
		return tags
	}
	if strings.TrimSpace(tags) == "" {
		return hiddenTag
	}
	return tags + "," + hiddenTag
}

// withoutHidden is a "tags" annotation value without "hidden", the other entries as written.
func withoutHidden(tags string) string {
	kept := strings.Split(tags, ",")
	kept = slices.DeleteFunc(kept, func(t string) bool { return strings.TrimSpace(t) == hiddenTag })
	return strings.TrimSpace(strings.Join(kept, ","))
}

// unhide takes "hidden" out of the "tags" annotation of a sample's annotations a, and the
// annotation itself when nothing else is left in it.
func unhide(a map[string]string) {
	if tags := withoutHidden(a[tagsAnnotation]); tags == "" {
		delete(a, tagsAnnotation)
	} else {
		a[tagsAnnotation] = tags
	}
}

// isHidden reports whether a "tags" annotation value holds "hidden".
func isHidden(tags string) bool {
	list := strings.Split(tags, ",")
	for i := range list {
		list[i] = strings.TrimSpace(list[i])
	}
	return slices.Contains(list, hiddenTag)
}

// retireTag hides a tag and names the version that retired it.
func retireTag(tag *imagev1.TagReference, version string) {
	if tag.Annotations == nil {
		tag.Annotations = map[string]string{}
	}
	tag.Annotations[tagsAnnotation] = withHidden(tag.Annotations[tagsAnnotation])
	tag.Annotations[RetiredAnnotation] = version
}

// retiredTagField is the drift field of a tag's retirement.
func retiredTagField(tag string) string {
	return "spec.tags[" + tag + "].annotations[" + RetiredAnnotation + "]"
}

// managedTagsOf reads a stream's ManagedTagsAnnotation.
func managedTagsOf(is *imagev1.ImageStream) []string {
	value := is.Annotations[ManagedTagsAnnotation]
	if value == "" {
		return nil
	}
	return strings.Split(value, ",")
}

// IsRetiredTag reports whether the stream's tag was retired.
func IsRetiredTag(tag imagev1.TagReference) bool {
	_, retired := tag.Annotations[RetiredAnnotation]
	return retired
}

// RetireImageStream is the write that retires a managed imagestream the inventory of version
// no longer has: every tag hidden, the stream and its tags naming the version. None for a
// stream already retired, or not the operator's.
func RetireImageStream(live *imagev1.ImageStream, version string) ImageStreamAction {
	if live == nil || live.Labels[ManagedLabel] != "true" || live.DeletionTimestamp != nil || live.Annotations[RetiredAnnotation] != "" {
		return ImageStreamAction{}
	}
	out := live.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[RetiredAnnotation] = version
	drift := []string{"metadata.annotations[" + RetiredAnnotation + "]"}
	for i := range out.Spec.Tags {
		if !IsRetiredTag(out.Spec.Tags[i]) {
			retireTag(&out.Spec.Tags[i], version)
			drift = append(drift, retiredTagField(out.Spec.Tags[i].Name))
		}
	}
	return ImageStreamAction{Verb: Update, Object: out, Drift: drift, Retires: true}
}

// RetireTemplate is RetireImageStream for a template: its "tags" annotation gets "hidden".
func RetireTemplate(live *templatev1.Template, version string) TemplateAction {
	if live == nil || live.Labels[ManagedLabel] != "true" || live.DeletionTimestamp != nil || live.Annotations[RetiredAnnotation] != "" {
		return TemplateAction{}
	}
	out := live.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[RetiredAnnotation] = version
	out.Annotations[tagsAnnotation] = withHidden(out.Annotations[tagsAnnotation])
	return TemplateAction{Verb: Update, Object: out, Retires: true,
		Drift: []string{"metadata.annotations[" + RetiredAnnotation + "]", "metadata.annotations[" + tagsAnnotation + "]"}}
}

// Retired lists what of the live samples is retired, as "imagestream/NAME",
// "imagestreamtag/NAME:TAG" and "template/NAME", with the version that retired each.
type Retired struct {
	Kind    string // "imagestream", "imagestreamtag" or "template"
	Name    string // NAME, or NAME:TAG
	Version string
}

// RetiredOfImageStream is what of a live managed stream is retired: the stream, or its tags.
func RetiredOfImageStream(is *imagev1.ImageStream) []Retired {
	if is.Labels[ManagedLabel] != "true" {
		return nil
	}
	if v, ok := is.Annotations[RetiredAnnotation]; ok {
		return []Retired{{Kind: "imagestream", Name: is.Name, Version: v}}
	}
	var out []Retired
	for _, tag := range is.Spec.Tags {
		if v, ok := tag.Annotations[RetiredAnnotation]; ok {
			out = append(out, Retired{Kind: "imagestreamtag", Name: is.Name + ":" + tag.Name, Version: v})
		}
	}
	return out
}

// RetiredOfTemplate is RetiredOfImageStream for a template.
func RetiredOfTemplate(t *templatev1.Template) []Retired {
	if v, ok := t.Annotations[RetiredAnnotation]; ok && t.Labels[ManagedLabel] == "true" {
		return []Retired{{Kind: "template", Name: t.Name, Version: v}}
	}
	return nil
}

// RetiredOf lists, sorted by kind and name, what of the live samples is retired.
func RetiredOf(streams []*imagev1.ImageStream, templates []*templatev1.Template) []Retired {
	var out []Retired
	for _, is := range streams {
		out = append(out, RetiredOfImageStream(is)...)
	}
	for _, t := range templates {
		out = append(out, RetiredOfTemplate(t)...)
	}
	slices.SortFunc(out, func(a, b Retired) int {
		if a.Kind != b.Kind {
			return strings.Compare(a.Kind, b.Kind)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
