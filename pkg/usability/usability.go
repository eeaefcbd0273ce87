// Package usability decides, without clients, whether each sample can work on this cluster
// (issue 50): a template that creates a kind the cluster does not serve, or that names an
// imagestream tag of the samples namespace that is missing, skipped, retired, not imported or
// itself unusable, cannot be instantiated here; an imagestream tag whose image has no manifest
// for any architecture of the cluster's nodes cannot run here.
//
// The caller observes the cluster (discovery, nodes, the live streams, the Config, the images'
// architectures) and gives it as a Cluster; every function here is a plain function of its
// arguments, and its verdicts are sorted and worded the same for the same input, so that a
// verdict can be compared with what was written before.
//
// What the caller could not observe gives no verdict: a kind of a group whose discovery failed, a
// reference whose name comes from a parameter without a default value. A sample is never called
// unusable on a guess; but a tag whose image's or nodes' architectures are not known keeps the
// architecture verdict its mark on the live stream carries, the last one made from reads.
package usability

import (
	"cmp"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The kinds of verdict.
const (
	KindTemplate       = "Template"
	KindImageStreamTag = "ImageStreamTag"
)

// Why a sample is unusable: each is a metric label value and an Event reason.
const (
	// KindNotServed: a template creates a kind discovery does not list.
	KindNotServed = "KindNotServed"
	// ImageMissing: a template names an imagestream tag of the samples namespace that does not
	// exist (no such stream, or no such spec tag).
	ImageMissing = "ImageStreamTagMissing"
	// ImageSkipped: a template names a tag, or a tag of a stream, the Config skips.
	ImageSkipped = "ImageStreamTagSkipped"
	// ImageRetired: a template names a retired tag, or a tag of a retired stream.
	ImageRetired = "ImageStreamTagRetired"
	// ImageNotImported: a template names a tag that has no image because its import failed.
	ImageNotImported = "ImageStreamTagNotImported"
	// ImageUnusable: a template names a tag that is itself unusable (NoImageForNodes).
	ImageUnusable = "ImageStreamTagUnusable"
	// NoImageForNodes: an imagestream tag's image is for none of the nodes' architectures.
	NoImageForNodes = "NoImageForNodeArchitectures"
)

// Cluster is what the operator observed of the cluster.
type Cluster struct {
	// Served are the kinds discovery lists, by group/version; it must hold the core group ("v1")
	// too. Nil: discovery was not seen, and no template is judged by its kinds.
	Served map[schema.GroupVersion]sets.Set[string]
	// Unknown are the groups whose discovery failed (partial discovery): their kinds are neither
	// served nor not served.
	Unknown sets.Set[string]
	// NodeArchitectures are the GOARCH names of the nodes' status.nodeInfo.architecture, sorted;
	// empty when none is known, and then each tag keeps the architecture verdict it is marked with.
	NodeArchitectures []string
	// Streams are the live imagestreams of the samples namespace by name. Nil: they were not
	// seen, and no template is judged by the images it names (an empty map is a namespace
	// without streams).
	Streams map[string]*imagev1.ImageStream
	// Installing are the "stream:tag" entries the operator installs (its inventory's, less what
	// the Config skips). A reference to one of them that does not exist yet, or that has no image
	// and no failed import, is pending: the operator is creating or importing it, and says
	// nothing until it is there or has failed.
	Installing sets.Set[string]
	// InstallingStreams are the streams the operator installs: the inventory's, less the streams
	// the Config skips. A stream whose every tag the Config skips is one of them, since the
	// operator creates it without tags.
	InstallingStreams sets.Set[string]
	// SkippedStreams are the Config's spec.skippedImagestreams.
	SkippedStreams sets.Set[string]
	// SkippedTags are the "stream:tag" entries the Config's skipped-tags annotation skips.
	SkippedTags sets.Set[string]
	// ImageArchitectures maps an image digest to the architectures of the image, or of every
	// image of its manifest list ("arm64/v8" covers arm64 nodes); an image absent here has
	// unknown architectures.
	ImageArchitectures map[string][]string
}

// Reason is one cause of a verdict.
type Reason struct {
	// Code is one of the reason constants: a metric label value and an Event reason.
	Code string
	// Message is one clause for a human, naming the exact kind or tag and the cause.
	Message string
}

// Verdict is whether one sample can work on this cluster.
type Verdict struct {
	// Kind is KindTemplate or KindImageStreamTag.
	Kind string
	// Name is the template's name, or "stream:tag".
	Name string
	// Reasons are sorted by Code then Message, without duplicates; empty: usable.
	Reasons []Reason
	// MissingArchitectures, sorted, are the node architectures an ImageStreamTag that is
	// usable on others has no image for (partial).
	MissingArchitectures []string
}

// Usable reports whether the verdict has no reason.
func (v Verdict) Usable() bool { return len(v.Reasons) == 0 }

// Partial reports whether a tag is usable on some node architectures only.
func (v Verdict) Partial() bool { return len(v.MissingArchitectures) > 0 }

// Annotation is the value of desired.UnusableAnnotation on an unusable sample: the reasons' messages
// joined by "; ". It is "" for a usable one.
func Annotation(v Verdict) string {
	messages := make([]string, len(v.Reasons))
	for i, r := range v.Reasons {
		messages[i] = r.Message
	}
	return strings.Join(messages, "; ")
}

// All is one verdict for each template whose facts are given and each spec tag of every stream
// of c.Streams, keeping those with a reason or missing architectures, sorted by Kind then Name.
func All(templates []Facts, c Cluster) []Verdict {
	var out []Verdict
	for _, t := range templates {
		if v := t.Verdict(c); len(v.Reasons) > 0 {
			out = append(out, v)
		}
	}
	for _, is := range c.Streams {
		if is == nil {
			continue
		}
		for _, tag := range is.Spec.Tags {
			// Named only when kept: most tags have no verdict, and the name is an allocation.
			if v := tagVerdict(is, tag.Name, c); len(v.Reasons) > 0 || len(v.MissingArchitectures) > 0 {
				v.Name = is.Name + ":" + tag.Name
				out = append(out, v)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Verdict) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// sortReasons orders reasons by code then message and drops repeats.
func sortReasons(reasons []Reason) []Reason {
	slices.SortFunc(reasons, func(a, b Reason) int {
		return cmp.Or(cmp.Compare(a.Code, b.Code), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(reasons)
}
