// Package desired computes, without any client, what the operator should do with each sample:
// the objects that should exist for a Config, an inventory and a version, and the single write (if
// any) that brings one live object there. Controllers only feed it listers' objects and carry out
// the action it returns.
package desired

import (
	"fmt"
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

// Choice is what a write of one sample depends on, computed once from the Config evaluation
// (configspec.Evaluation.ChoiceOf): the Config's generation, samplesRegistry and architecture,
// the operator's version, the stream's skipped tags (comma-separated: an annotation moves no
// generation), the usability marks (Marks.String) and the cluster's import mode. ImageStream
// and Template make the sample from it alone, besides the inventory and the spec's skip lists,
// so the writer can rebuild an earlier write from the Choice it recorded (samplewriter.Intent);
// the refusal backoff's key and the status memo of verdicts are this one value too. A new
// setting that changes a sample is a field here, set in ChoiceOf, named in ChangeSince and read
// by ImageStream or Template.
type Choice struct {
	Generation      int64
	SamplesRegistry string
	Architecture    string
	Version         string
	SkippedTags     string
	Marks           string
	ImportMode      imagev1.ImportModeType
}

// ChangeSince names what changed since a write made for earlier. A change of Version has no case
// of its own: the writer's records live in the process, and a process has one version, so an
// earlier write of another version is never recorded (an upgrade's rewrite is told from the
// managedFields instead, samples.causeOf).
func (c Choice) ChangeSince(earlier Choice) string {
	describe := func(registry string) string {
		if registry == "" {
			return "the inventory's registries"
		}
		return registry
	}
	switch {
	case earlier.SamplesRegistry != c.SamplesRegistry:
		return fmt.Sprintf("spec.samplesRegistry changed: it pulled from %s and now pulls from %s", describe(earlier.SamplesRegistry), describe(c.SamplesRegistry))
	case earlier.Architecture != c.Architecture:
		return fmt.Sprintf("spec.architectures changed from %s to %s", earlier.Architecture, c.Architecture)
	case earlier.SkippedTags != c.SkippedTags:
		return fmt.Sprintf("the Config's skipped tags changed for it: it skipped [%s] and now skips [%s]", earlier.SkippedTags, c.SkippedTags)
	case earlier.ImportMode != c.ImportMode:
		return fmt.Sprintf("the cluster's import mode for imagestreams changed from %q to %q (images.config.openshift.io status)", earlier.ImportMode, c.ImportMode)
	case earlier.Marks != c.Marks:
		return "whether it can work on this cluster changed (" + UnusableAnnotation + ")"
	default:
		return fmt.Sprintf("the Config changed (generation %d, now %d)", earlier.Generation, c.Generation)
	}
}

// ImageStream is what the Config asks for the imagestream `name`: the object that should exist
// (nil when none should), whether the name is skipped, and whether the inventory has it at all.
// spec says only whether it is skipped; what it is made of comes from c: want lacks the skipped
// tags and names them in StreamSkippedTagsAnnotation, follows the import mode and carries the
// marks.
func ImageStream(spec *samplesv1.ConfigSpec, c Choice, inv Source, name string) (want *imagev1.ImageStream, skipped, known bool) {
	is, ok := inv.ImageStreamForRegistry(name, c.SamplesRegistry)
	// A skip applies to a retired sample too (one the inventory no longer has).
	if slices.Contains(spec.SkippedImagestreams, name) {
		return nil, true, ok
	}
	if !ok {
		return nil, false, false
	}
	is.Namespace = ""
	stamp(&is.ObjectMeta, c.Version)
	if c.SkippedTags != "" {
		skippedTags := strings.Split(c.SkippedTags, ",")
		is.Spec.Tags = slices.DeleteFunc(is.Spec.Tags, func(tag imagev1.TagReference) bool { return slices.Contains(skippedTags, tag.Name) })
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
	if slices.Contains(spec.SkippedTemplates, name) {
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
