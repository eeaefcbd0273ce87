package desired

import (
	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Answer is what the API server made of the operator's write of a sample, kept when the server
// changed a field the operator owns. A defaulting, a create or update strategy or a mutating
// admission webhook may normalize such a field every time it is written; compared with the
// desired object alone, the sample would then look drifted after every write, and the operator
// would update it for ever. Compared with the answer as well, an object that is exactly what the
// server made of the desired state counts as in sync.
type Answer[P any] struct {
	// Want is the desired object the write was made for; an answer says nothing about another.
	Want P
	// Got is the server's answer, as the operator compares it.
	Got P
	// Fields are the owned fields where Got differs from Want: the server's.
	Fields []string
}

// ImageStreamAnswer and TemplateAnswer name the two instances.
type (
	ImageStreamAnswer = Answer[*imagev1.ImageStream]
	TemplateAnswer    = Answer[*templatev1.Template]
)

// AnswerForImageStream returns what to remember of the server's answer got to a write of want:
// nil when the server kept every owned field as written.
func AnswerForImageStream(want, got *imagev1.ImageStream) *ImageStreamAnswer {
	fields := ImageStreamDrift(got, want)
	if len(fields) == 0 {
		return nil
	}
	kept := got.DeepCopy()
	ownedMetaOnly(&kept.ObjectMeta, &want.ObjectMeta)
	wanted := map[string]bool{}
	for _, tag := range want.Spec.Tags {
		wanted[tag.Name] = true
	}
	kept.Spec.Tags = kept.Spec.Tags[:0]
	for _, tag := range got.Spec.Tags {
		if wanted[tag.Name] {
			// A tag's generation moves with every later spec change and import, which say
			// nothing about whether the owned fields are still as the server made them.
			tag.Generation = nil
			kept.Spec.Tags = append(kept.Spec.Tags, *tag.DeepCopy())
		}
	}
	return &ImageStreamAnswer{Want: want.DeepCopy(), Got: kept, Fields: fields}
}

// AnswerForTemplate is AnswerForImageStream for templates.
func AnswerForTemplate(want, got *templatev1.Template) *TemplateAnswer {
	fields := TemplateDrift(got, want)
	if len(fields) == 0 {
		return nil
	}
	kept := got.DeepCopy()
	ownedMetaOnly(&kept.ObjectMeta, &want.ObjectMeta)
	return &TemplateAnswer{Want: want.DeepCopy(), Got: kept, Fields: fields}
}

// ownedMetaOnly keeps, of the answer's labels and annotations, those the operator sets: the
// others (an importer's timestamps, an admin's) change for reasons of their own.
func ownedMetaOnly(got, want *metav1.ObjectMeta) {
	got.Labels = onlyKeysOf(got.Labels, want.Labels)
	got.Annotations = onlyKeysOf(got.Annotations, want.Annotations)
}

func onlyKeysOf(m, keys map[string]string) map[string]string {
	out := map[string]string{}
	for k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// ImageStreamSettled reports whether live, which differs from want, is what the server made of
// the operator's write of the same want: every owned field as in the answer.
func ImageStreamSettled(live, want *imagev1.ImageStream, answer *ImageStreamAnswer) bool {
	return answer != nil && equality.Semantic.DeepEqual(answer.Want, want) && ImageStreamInSync(live, answer.Got)
}

// TemplateSettled is ImageStreamSettled for templates.
func TemplateSettled(live, want *templatev1.Template, answer *TemplateAnswer) bool {
	return answer != nil && equality.Semantic.DeepEqual(answer.Want, want) && TemplateInSync(live, answer.Got)
}
