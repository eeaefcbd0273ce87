// Package desired computes, without any client, what the operator should do with each sample:
// the objects that should exist for a Config, an inventory and a version, and the single write (if
// any) that brings one live object there. Controllers only feed it listers' objects and carry out
// the action it returns.
package desired

import (
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// ManagedLabel marks a sample the operator owns ("true") or one an admin skipped ("false").
	ManagedLabel = samplesv1.SamplesManagedLabel
	// VersionAnnotation carries the operator version that last wrote a sample.
	VersionAnnotation = samplesv1.SamplesVersionAnnotation
	// StreamSkippedTagsAnnotation, on an imagestream, lists the tags the operator removed from it for
	// the Config's skipped-imagestream-tags annotation, sorted and comma-separated. A tag is
	// removed once: an admin who puts a listed tag back keeps it.
	StreamSkippedTagsAnnotation = "samples.operator.openshift.io/skipped-tags"
)

// Source is the part of the inventory this package reads. pkg/inventory implements it; its
// getters return copies the caller may change.
type Source interface {
	ImageStreamNames() []string
	TemplateNames() []string
	// ImageStreamForRegistry returns the stream with its DockerImage references moved to
	// samplesRegistry ("" leaves them as the inventory has them).
	ImageStreamForRegistry(name, samplesRegistry string) (*imagev1.ImageStream, bool)
	Template(name string) (*templatev1.Template, bool)
}

// ImageStream is what the Config asks for the imagestream `name`: the object that should exist
// (nil when none should), whether the name is skipped, and whether the inventory has it at all.
// spec says only whether it is skipped; what it is made of comes from c: want lacks the skipped
// tags and names them in StreamSkippedTagsAnnotation, follows the import mode and carries the
// marks.
func ImageStream(spec *samplesv1.ConfigSpec, c Choice, inv Source, name string) (want *imagev1.ImageStream, skipped, known bool) {
	is, ok := inv.ImageStreamForRegistry(name, c.SamplesRegistry)
	// A skip applies to a retired sample too (one the inventory no longer has).
	if contains(spec.SkippedImagestreams, name) {
		return nil, true, ok
	}
	if !ok {
		return nil, false, false
	}
	is.Namespace = ""
	stamp(&is.ObjectMeta, c.Version)
	if c.SkippedTags != "" {
		skippedTags := strings.Split(c.SkippedTags, ",")
		is.Spec.Tags = slices.DeleteFunc(is.Spec.Tags, func(tag imagev1.TagReference) bool { return contains(skippedTags, tag.Name) })
		is.Annotations[StreamSkippedTagsAnnotation] = c.SkippedTags
	}
	names := make([]string, 0, len(is.Spec.Tags))
	for _, tag := range is.Spec.Tags {
		names = append(names, tag.Name)
	}
	slices.Sort(names)
	is.Annotations[ManagedTagsAnnotation] = strings.Join(names, ",")
	FollowImportMode(is, c.ImportMode)
	MarkImageStream(is, ParseMarks(c.Marks))
	return is, false, true
}

// skippedTagsOf reads a stream's StreamSkippedTagsAnnotation.
func skippedTagsOf(is *imagev1.ImageStream) []string {
	value := is.Annotations[StreamSkippedTagsAnnotation]
	if value == "" {
		return nil
	}
	return strings.Split(value, ",")
}

// Template is ImageStream for templates.
func Template(spec *samplesv1.ConfigSpec, c Choice, inv Source, name string) (want *templatev1.Template, skipped, known bool) {
	t, ok := inv.Template(name)
	if contains(spec.SkippedTemplates, name) {
		return nil, true, ok
	}
	if !ok {
		return nil, false, false
	}
	t.Namespace = ""
	// The cache's own key (ContentDigestAnnotation) is no part of what the operator wants.
	delete(t.Annotations, ContentDigestAnnotation)
	stamp(&t.ObjectMeta, c.Version)
	MarkTemplate(t, ParseMarks(c.Marks))
	return t, false, true
}

func stamp(meta *metav1.ObjectMeta, version string) {
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Labels[ManagedLabel] = "true"
	meta.Annotations[VersionAnnotation] = version
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
