// Package samplereport computes, without clients, what `oc samples status` says about each sample:
// whether the operator manages it, skips it or retired it, or it is absent; the version that
// wrote it; each tag's import, with the server's reason for a failure, the mirror it is imported
// through and the architectures its image covers against the nodes'.
package samplereport

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	"github.com/openshift/library-go/pkg/image/reference"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imagerefs"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// State of a sample.
type State string

const (
	Managed State = "managed"
	// Unmanaged: present while the Config is Unmanaged; the operator leaves it as it is.
	Unmanaged State = "unmanaged"
	Skipped   State = "skipped"
	Retired   State = "retired"
	Absent    State = "absent"
)

// TagState of one imagestream tag.
type TagState string

const (
	TagImported TagState = "imported"
	TagFailing  TagState = "failing"
	// TagPending: neither imported nor failed yet.
	TagPending TagState = "pending"
	TagSkipped TagState = "skipped"
	TagRetired TagState = "retired"
)

const (
	KindImageStream = "ImageStream"
	KindTemplate    = "Template"
)

// Sample is one imagestream or template.
type Sample struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	State     State  `json:"state"`
	Version   string `json:"version,omitempty"`
	RetiredIn string `json:"retiredIn,omitempty"`
	// Unusable is why the sample cannot work on this cluster, as the operator wrote it on a
	// template (desired.UnusableAnnotation); a stream's tags carry their own.
	Unusable string `json:"unusable,omitempty"`
	// Counts of the stream's tags by state (a retired stream's failing tags are not counted: its
	// imports are no longer tracked).
	Imported int   `json:"imported,omitempty"`
	Failing  int   `json:"failing,omitempty"`
	Pending  int   `json:"pending,omitempty"`
	Tags     []Tag `json:"tags,omitempty"`
}

// Tag is one tag of an imagestream.
type Tag struct {
	Name  string   `json:"name"`
	State TagState `json:"state"`
	// From is the reference the tag imports.
	From string `json:"from,omitempty"`
	// Image is the digest of the image imported last.
	Image string `json:"image,omitempty"`
	// Reason is the server's message for a failing import, or why a tag is skipped or retired.
	Reason string `json:"reason,omitempty"`
	// Unusable is why the tag cannot work on this cluster, as the operator wrote it on the tag.
	Unusable string `json:"unusable,omitempty"`
	// Mirror is where the import is fetched from when mirror sets cover From (the first mirror
	// tried, or the one the imported reference names); MirroredBy names the mirror sets.
	Mirror     string   `json:"mirror,omitempty"`
	MirroredBy []string `json:"mirroredBy,omitempty"`
	// Architectures the imported image covers (nil when its image could not be read);
	// MissingArchitectures are those of the cluster's nodes it lacks.
	Architectures        []string `json:"architectures,omitempty"`
	MissingArchitectures []string `json:"missingArchitectures,omitempty"`
}

// Input is what the caller could read. A nil Mirrors, Images or NodeArchitectures was not seen.
type Input struct {
	Config       *samplesv1.Config
	ImageStreams []*imagev1.ImageStream
	Templates    []*templatev1.Template
	// InventoryStreams are the inventory's streams as the Config's registry rewrites them;
	// InventoryTemplates its template names.
	InventoryStreams   []*imagev1.ImageStream
	InventoryTemplates []string
	Mirrors            *mirrorsets.Sets
	// Images are the image API's images by name (digest).
	Images            map[string]*imagev1.Image
	NodeArchitectures []string
}

// Report is the whole answer.
type Report struct {
	ManagementState operatorv1.ManagementState `json:"managementState"`
	Version         string                     `json:"version,omitempty"`
	SamplesRegistry string                     `json:"samplesRegistry,omitempty"`
	Samples         []Sample                   `json:"samples"`
	Summary         string                     `json:"summary"`
	// NotSeen says what the caller could not read.
	NotSeen []string `json:"notSeen,omitempty"`
}

// Failing reports whether any tag of a sample fails to import.
func (r Report) Failing() bool {
	return slices.ContainsFunc(r.Samples, func(s Sample) bool { return s.Failing > 0 })
}

// Build computes the report.
func Build(in Input) Report {
	cfg := in.Config
	r := Report{ManagementState: cfg.Spec.ManagementState, Version: cfg.Status.Version, SamplesRegistry: cfg.Spec.SamplesRegistry}
	skippedTags, _ := configspec.SkippedTagsOf(cfg, nil)
	var resolver *mirrorsets.Resolver
	if in.Mirrors != nil {
		resolver = mirrorsets.NewResolver(*in.Mirrors)
	}
	live := map[string]*imagev1.ImageStream{}
	for _, is := range in.ImageStreams {
		live[is.Name] = is
	}
	wanted := map[string]*imagev1.ImageStream{}
	for _, is := range in.InventoryStreams {
		wanted[is.Name] = is
	}
	for _, name := range sampleNames(wanted, live) {
		r.Samples = append(r.Samples, imageStream(cfg, name, live[name], wanted[name], skippedTags.Of(name), resolver, in))
	}
	liveTemplates := map[string]*templatev1.Template{}
	for _, t := range in.Templates {
		liveTemplates[t.Name] = t
	}
	for _, name := range templateNames(in.InventoryTemplates, liveTemplates) {
		r.Samples = append(r.Samples, template(cfg, name, liveTemplates[name]))
	}
	r.Summary = summary(r.Samples)
	return r
}

// IsSample: the operator wrote it, an admin skipped it, or it was retired.
func IsSample(meta metav1.Object) bool {
	_, managed := meta.GetLabels()[desired.ManagedLabel]
	_, retired := meta.GetAnnotations()[desired.RetiredAnnotation]
	return managed || retired
}

func sampleNames(wanted, live map[string]*imagev1.ImageStream) []string {
	var names []string
	for n := range wanted {
		names = append(names, n)
	}
	for n, is := range live {
		if wanted[n] == nil && IsSample(is) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

func templateNames(inventory []string, live map[string]*templatev1.Template) []string {
	names := slices.Clone(inventory)
	for n, t := range live {
		if !slices.Contains(inventory, n) && IsSample(t) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// stateOf is a sample's state from the Config and its live object's metadata (nil meta: absent).
func stateOf(cfg *samplesv1.Config, skipped bool, labels, annotations map[string]string, present bool) (State, string) {
	switch {
	case skipped:
		return Skipped, ""
	case !present:
		return Absent, ""
	case annotations[desired.RetiredAnnotation] != "":
		return Retired, annotations[desired.RetiredAnnotation]
	case cfg.Spec.ManagementState == operatorv1.Unmanaged || labels[desired.ManagedLabel] == "false":
		return Unmanaged, ""
	}
	return Managed, ""
}

func imageStream(cfg *samplesv1.Config, name string, live, wanted *imagev1.ImageStream, skippedTags []string, resolver *mirrorsets.Resolver, in Input) Sample {
	s := Sample{Kind: KindImageStream, Name: name}
	var labels, annotations map[string]string
	if live != nil {
		labels, annotations = live.Labels, live.Annotations
		s.Version = annotations[desired.VersionAnnotation]
	}
	s.State, s.RetiredIn = stateOf(cfg, slices.Contains(cfg.Spec.SkippedImagestreams, name), labels, annotations, live != nil)
	spec := wanted
	if live != nil {
		spec = live
	}
	if spec == nil {
		return s
	}
	var failed map[string]string
	if live != nil {
		failed = imports.FailedTagsOfSpec(live)
	}
	for _, ref := range spec.Spec.Tags {
		tag := Tag{Name: ref.Name, Unusable: ref.Annotations[desired.UnusableAnnotation]}
		if ref.From != nil {
			tag.From = ref.From.Name
			if ref.From.Kind == "ImageStreamTag" {
				tag.From = name + ":" + ref.From.Name
				if strings.Contains(ref.From.Name, ":") {
					tag.From = ref.From.Name
				}
			}
		}
		switch {
		case slices.Contains(skippedTags, ref.Name):
			tag.State, tag.Reason = TagSkipped, "skipped by the Config's "+configspec.SkippedImageStreamTagsAnnotation
		case desired.IsRetiredTag(ref):
			tag.State, tag.Reason = TagRetired, "retired in "+ref.Annotations[desired.RetiredAnnotation]
		case live == nil:
			tag.State = TagPending
		case failed[ref.Name] != "":
			tag.State, tag.Reason = TagFailing, failed[ref.Name]
		default:
			tag.State = TagPending
			if item, ok := latestItem(live, ref.Name); ok {
				tag.State, tag.Image = TagImported, item.Image
			}
		}
		if pullSpec := dockerImageOf(spec, ref); pullSpec != "" && resolver != nil {
			route := resolver.Resolve(pullSpec)
			if route.Mirrored() {
				tag.Mirror, tag.MirroredBy = route.Mirrors[0], route.By
				if item, ok := latestItem(live, ref.Name); ok {
					for _, m := range route.Mirrors {
						if repositoryOf(m) == repositoryOf(item.DockerImageReference) {
							tag.Mirror = m
						}
					}
				}
			}
		}
		if tag.Image != "" && in.Images != nil {
			if img, ok := in.Images[tag.Image]; ok {
				tag.Architectures = usability.ArchitecturesOf(img)
				for _, a := range in.NodeArchitectures {
					if !slices.Contains(tag.Architectures, a) {
						tag.MissingArchitectures = append(tag.MissingArchitectures, a)
					}
				}
			}
		}
		s.Tags = append(s.Tags, tag)
	}
	// A skipped tag is no longer in the stream's spec: name it still.
	for _, t := range skippedTags {
		if !slices.ContainsFunc(s.Tags, func(tag Tag) bool { return tag.Name == t }) {
			s.Tags = append(s.Tags, Tag{Name: t, State: TagSkipped, Reason: "skipped by the Config's " + configspec.SkippedImageStreamTagsAnnotation})
		}
	}
	slices.SortFunc(s.Tags, func(a, b Tag) int { return cmp.Compare(a.Name, b.Name) })
	if s.State == Managed || s.State == Unmanaged || s.State == Retired {
		for _, t := range s.Tags {
			switch t.State {
			case TagImported:
				s.Imported++
			case TagFailing:
				// A retired stream's imports are no longer tracked: nobody is to fix them.
				if s.State != Retired {
					s.Failing++
				}
			case TagPending:
				s.Pending++
			}
		}
	}
	return s
}

// dockerImageOf is the pull spec a tag imports, following tags of the same stream that point at
// another of its tags ("latest" -> "3.12"); "" when none.
func dockerImageOf(is *imagev1.ImageStream, ref imagev1.TagReference) string {
	if followed := imagerefs.FollowedTags(is, ref.Name); len(followed) > 0 {
		i := slices.IndexFunc(is.Spec.Tags, func(t imagev1.TagReference) bool { return t.Name == followed[len(followed)-1] })
		if i < 0 { // it follows a tag the spec lacks
			return ""
		}
		ref = is.Spec.Tags[i]
	}
	if ref.From == nil || ref.From.Kind != "DockerImage" {
		return ""
	}
	return ref.From.Name
}

// repositoryOf is a pull spec without its tag or digest.
func repositoryOf(pullSpec string) string {
	ref, err := reference.Parse(pullSpec)
	if err != nil {
		return pullSpec
	}
	return ref.AsRepository().Exact()
}

// latestItem is the newest import of a tag.
func latestItem(is *imagev1.ImageStream, tag string) (imagev1.TagEvent, bool) {
	if is == nil {
		return imagev1.TagEvent{}, false
	}
	for _, t := range is.Status.Tags {
		if t.Tag == tag && len(t.Items) > 0 && t.Items[0].Image != "" {
			return t.Items[0], true
		}
	}
	return imagev1.TagEvent{}, false
}

func template(cfg *samplesv1.Config, name string, live *templatev1.Template) Sample {
	s := Sample{Kind: KindTemplate, Name: name}
	var labels, annotations map[string]string
	if live != nil {
		labels, annotations = live.Labels, live.Annotations
		s.Version = annotations[desired.VersionAnnotation]
	}
	s.State, s.RetiredIn = stateOf(cfg, slices.Contains(cfg.Spec.SkippedTemplates, name), labels, annotations, live != nil)
	s.Unusable = annotations[desired.UnusableAnnotation]
	return s
}

// summary is the last line: "53 imagestreams: 50 imported, 2 failing, 1 retired; 42 templates".
// A managed stream counts as imported when all its tags are, failing when one fails, pending
// otherwise.
func summary(samples []Sample) string {
	var streams, templates []Sample
	for _, s := range samples {
		if s.Kind == KindImageStream {
			streams = append(streams, s)
		} else {
			templates = append(templates, s)
		}
	}
	streamState := func(s Sample) string {
		switch {
		case s.State != Managed && s.State != Unmanaged:
			return string(s.State)
		case s.Failing > 0:
			return "failing"
		case s.Pending > 0:
			return "pending"
		}
		return "imported"
	}
	line := counted(len(streams), "imagestream") + phrase(streams, streamState, []string{"imported", "failing", "pending", "unmanaged", "retired", "skipped", "absent"})
	line += "; " + counted(len(templates), "template") + phrase(templates, func(s Sample) string { return string(s.State) },
		[]string{string(Managed), string(Unmanaged), string(Retired), string(Skipped), string(Absent)})
	return line
}

func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// phrase counts samples by class, in order, leaving out empty classes; nothing when every
// sample is of the first class of templates (all managed), so that the usual line stays short.
func phrase(samples []Sample, class func(Sample) string, order []string) string {
	counts := map[string]int{}
	for _, s := range samples {
		counts[class(s)]++
	}
	if len(samples) == 0 || counts[order[0]] == len(samples) && order[0] == string(Managed) {
		return ""
	}
	var parts []string
	for _, c := range order {
		if counts[c] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[c], c))
		}
	}
	return ": " + strings.Join(parts, ", ")
}
