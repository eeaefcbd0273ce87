package desired

import (
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
)

// UnusableAnnotation, on a template or on an imagestream tag, says why the sample cannot work on
// this cluster (pkg/usability decides). The operator writes it, and hides the sample from the
// console's catalog, only while the cause lasts; no create, delete or revert depends on it.
const UnusableAnnotation = "samples.operator.openshift.io/unusable"

// Mark is what the operator says on one sample about whether it can work on this cluster.
type Mark struct {
	Reason string // why it cannot: UnusableAnnotation's value
	// Hide keeps it out of the catalog; false when the Config keeps it offered whatever the
	// verdict.
	Hide bool
}

// Marks are one sample's: a template's under "", an imagestream's by tag name. A sample with no
// marks can work here.
type Marks map[string]Mark

// String is the marks in one canonical line: a write's record keeps it, to tell a later update
// that follows a changed verdict from a revert.
func (m Marks) String() string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		hide := "offered"
		if m[k].Hide {
			hide = "hidden"
		}
		b.WriteString(k + "=" + hide + ":" + m[k].Reason + "\n")
	}
	return b.String()
}

// ParseMarks reads String's line back.
func ParseMarks(line string) Marks {
	var m Marks
	for _, entry := range strings.Split(line, "\n") {
		key, rest, ok := strings.Cut(entry, "=")
		if !ok {
			continue
		}
		hide, reason, _ := strings.Cut(rest, ":")
		if m == nil {
			m = Marks{}
		}
		m[key] = Mark{Reason: reason, Hide: hide == "hidden"}
	}
	return m
}

// MarkImageStream writes marks on the tags of want (ImageStream's answer) that have one.
func MarkImageStream(want *imagev1.ImageStream, marks Marks) {
	for i := range want.Spec.Tags {
		tag := &want.Spec.Tags[i]
		mark, ok := marks[tag.Name]
		if !ok {
			continue
		}
		if tag.Annotations == nil {
			tag.Annotations = map[string]string{}
		}
		tag.Annotations[UnusableAnnotation] = mark.Reason
		if mark.Hide {
			tag.Annotations[tagsAnnotation] = withHidden(tag.Annotations[tagsAnnotation])
		}
	}
}

// MarkTemplate writes a template's mark on want (Template's answer).
func MarkTemplate(want *templatev1.Template, marks Marks) {
	mark, ok := marks[""]
	if !ok {
		return
	}
	want.Annotations[UnusableAnnotation] = mark.Reason
	if mark.Hide {
		want.Annotations[tagsAnnotation] = withHidden(want.Annotations[tagsAnnotation])
	}
}

// ImageStreamMarks are the marks live's tags carry: MarkImageStream with them leaves the marked
// annotations as live has them. The status tells by them a sample that differs from what it
// should be only in its marks (a verdict changed) from one that is not installed as it should be.
func ImageStreamMarks(live *imagev1.ImageStream) Marks {
	var marks Marks
	for _, tag := range live.Spec.Tags {
		if reason, ok := tag.Annotations[UnusableAnnotation]; ok {
			if marks == nil {
				marks = Marks{}
			}
			marks[tag.Name] = Mark{Reason: reason, Hide: isHidden(tag.Annotations[tagsAnnotation])}
		}
	}
	return marks
}

// TemplateMarks is ImageStreamMarks for a template.
func TemplateMarks(live *templatev1.Template) Marks {
	reason, ok := live.Annotations[UnusableAnnotation]
	if !ok {
		return nil
	}
	return Marks{"": {Reason: reason, Hide: isHidden(live.Annotations[tagsAnnotation])}}
}

// MarkUnshipped adds to action the marks of what of live the inventory does not ship, which
// want's marks cannot carry: the tags of live that want (nil: a retired stream) has not, an
// admin's own or retired ones. A mark is written where the verdict has one and removed where
// its cause went; nothing else of them changes, so a retired sample's content is never put
// back. An action that writes nothing becomes a MarksOnly update when only marks differ.
func MarkUnshipped(action ImageStreamAction, want, live *imagev1.ImageStream, marks Marks) ImageStreamAction {
	out, ok := unshippedBase(action, live)
	if !ok {
		return action
	}
	shipped := map[string]bool{}
	if want != nil {
		for _, tag := range want.Spec.Tags {
			shipped[tag.Name] = true
		}
	}
	var drift []string
	for i := range out.Spec.Tags {
		tag := &out.Spec.Tags[i]
		if shipped[tag.Name] {
			continue
		}
		mark, marked := marks[tag.Name]
		// A retired tag, or a tag of a retired stream, is hidden by its retirement.
		retired := IsRetiredTag(*tag) || out.Annotations[RetiredAnnotation] != ""
		if setMark(&tag.Annotations, mark, marked, retired) {
			drift = append(drift, "spec.tags["+tag.Name+"].annotations["+UnusableAnnotation+"]")
		}
	}
	return withMarks(action, out, drift)
}

// MarkRetiredTemplate is MarkUnshipped for a template: a retired one (live, or retired by
// action) gets its mark, which no inventory template carries for it.
func MarkRetiredTemplate(action TemplateAction, live *templatev1.Template, marks Marks) TemplateAction {
	out, ok := unshippedBase(action, live)
	if !ok || out.Annotations[RetiredAnnotation] == "" {
		return action
	}
	mark, marked := marks[""]
	var drift []string
	if setMark(&out.Annotations, mark, marked, true) {
		drift = append(drift, "metadata.annotations["+UnusableAnnotation+"]")
	}
	return withMarks(action, out, drift)
}

// unshippedBase is the object the marks of MarkUnshipped go on: the update's, or a copy of live
// when action writes nothing. None for another write, or a sample that is not the operator's.
func unshippedBase[P Object[P]](action Action[P], live P) (P, bool) {
	var absent P
	if live == absent || live.GetLabels()[ManagedLabel] != "true" || live.GetDeletionTimestamp() != nil {
		return absent, false
	}
	switch action.Verb {
	case Update:
		return action.Object, true
	case None:
		return live.DeepCopy(), true
	}
	return absent, false
}

// withMarks is action with out, which carries the marks, and their drift.
func withMarks[P Object[P]](action Action[P], out P, drift []string) Action[P] {
	if len(drift) == 0 {
		return action
	}
	if action.Verb == None {
		return Action[P]{Verb: Update, Object: out, Drift: drift, MarksOnly: true}
	}
	action.Object, action.Drift = out, append(action.Drift, drift...)
	return action
}

// setMark writes mark in annotations (marked), or removes the mark they carry; "hidden" goes
// with a mark that hides, unless retired, which keeps the sample hidden anyway. It reports
// whether anything changed.
func setMark(annotations *map[string]string, mark Mark, marked, retired bool) bool {
	a := *annotations
	reason, had := a[UnusableAnnotation]
	switch {
	case marked && (!had || reason != mark.Reason || mark.Hide && !isHidden(a[tagsAnnotation])):
		if a == nil {
			a = map[string]string{}
			*annotations = a
		}
		a[UnusableAnnotation] = mark.Reason
		if mark.Hide {
			a[tagsAnnotation] = withHidden(a[tagsAnnotation])
		}
		return true
	case !marked && had:
		delete(a, UnusableAnnotation)
		if !retired {
			unhide(a)
		}
		return true
	}
	return false
}
