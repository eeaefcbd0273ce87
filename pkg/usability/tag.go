package usability

import (
	"fmt"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imagerefs"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
)

// ForImageStreamTag is whether the stream's tag can run on the nodes: unusable when its image is
// for none of their architectures, partial when it lacks some of them. A tag that follows
// another tag of the stream ("latest" -> "3.3-ubi9") takes the verdict of the tag it follows. A
// tag without an image gives no verdict; an image of unknown architectures, or unknown node
// architectures, give the one the tag's mark carries (keptArchitectureMarks). Whether the tag is skipped, retired or not imported is not judged here (retired
// tags keep their own marking): those make the templates that name it unusable.
func ForImageStreamTag(is *imagev1.ImageStream, tag string, c Cluster) Verdict {
	v := tagVerdict(is, tag, c)
	v.Name = is.Name + ":" + tag
	return v
}

// tagVerdict is ForImageStreamTag without the name.
func tagVerdict(is *imagev1.ImageStream, tag string, c Cluster) Verdict {
	v := Verdict{Kind: KindImageStreamTag}
	if r, missing := architectureVerdict(is, tag, c); r != nil {
		v.Reasons = []Reason{*r}
	} else {
		v.MissingArchitectures = missing
	}
	return v
}

// architectureVerdict is the reason a tag cannot run on the nodes, or else the node
// architectures it lacks (partial); both nil when it covers them all or nothing is known.
func architectureVerdict(is *imagev1.ImageStream, tag string, c Cluster) (*Reason, []string) {
	image, ok := currentImage(is, tag)
	if !ok {
		return nil, nil
	}
	imageArchs := sortedUnique(c.ImageArchitectures[image])
	nodeArchs := sortedUnique(c.NodeArchitectures)
	if len(imageArchs) == 0 || len(nodeArchs) == 0 {
		return keptArchitectureMark(is, tag), nil
	}
	var missing []string
	for _, node := range nodeArchs {
		if !slices.ContainsFunc(imageArchs, func(a string) bool { return covers(a, node) }) {
			missing = append(missing, node)
		}
	}
	if len(missing) < len(nodeArchs) {
		return nil, missing
	}
	noun := "architecture"
	if len(missing) > 1 {
		noun = "architectures"
	}
	return &Reason{Code: NoImageForNodes, Message: fmt.Sprintf("%s %s %s (image for %s)",
		noImageForNodesMessage, noun, strings.Join(missing, ", "), strings.Join(imageArchs, ", "))}, nil
}

// noImageForNodesMessage begins every NoImageForNodes message, and only those.
const noImageForNodesMessage = "no image for node"

// keptArchitectureMark is the NoImageForNodes reason the tag's mark on the live stream carries,
// or nil. That mark is the verdict last made from reads of the image's and the nodes'
// architectures, and the only record of it that outlives a restart: while either is unknown
// (the image not read again yet since a start, its read failing while openshift-apiserver is
// away, the nodes not listed) it stands, else each start would unmark the tag and mark it again
// once the reads succeed (issue 56). A mark comes off only by a verdict made from fresh reads.
func keptArchitectureMark(is *imagev1.ImageStream, tag string) *Reason {
	for _, t := range is.Spec.Tags {
		if t.Name != tag {
			continue
		}
		for message := range strings.SplitSeq(t.Annotations[desired.UnusableAnnotation], "; ") {
			if strings.HasPrefix(message, noImageForNodesMessage+" ") {
				return &Reason{Code: NoImageForNodes, Message: message}
			}
		}
	}
	return nil
}

// covers reports whether an image architecture ("arm64", or with its variant "arm64/v8") runs on
// a node of the GOARCH node.
func covers(image, node string) bool {
	arch, _, _ := strings.Cut(image, "/")
	return arch == node
}

// currentImage is the image a tag points at now: the newest item of the status of the tag it
// follows at the end of its chain (itself when it follows none), else of its own status. ok is
// false when neither has an image: the tag was not imported.
func currentImage(is *imagev1.ImageStream, tag string) (string, bool) {
	if followed := imagerefs.FollowedTags(is, tag); len(followed) > 0 {
		if image, ok := statusImage(is, followed[len(followed)-1]); ok {
			return image, true
		}
	}
	return statusImage(is, tag)
}

// importFailed: the last import of the tag, or of the tag it follows at the end of its chain,
// failed, by the rule of imports.FailedTagsOfSpec: a tag rewritten since its import failed is
// waiting for its new import, not failed.
func importFailed(is *imagev1.ImageStream, tag string) bool {
	tags := []string{tag}
	if followed := imagerefs.FollowedTags(is, tag); len(followed) > 0 {
		tags = append(tags, followed[len(followed)-1])
	}
	failed := imports.FailedTagsOfSpec(is)
	return slices.ContainsFunc(tags, func(t string) bool { _, ok := failed[t]; return ok })
}

// statusImage is the newest image of a tag's status.
func statusImage(is *imagev1.ImageStream, tag string) (string, bool) {
	for _, t := range is.Status.Tags {
		if t.Tag == tag && len(t.Items) > 0 && t.Items[0].Image != "" {
			return t.Items[0].Image, true
		}
	}
	return "", false
}

// sortedUnique is a sorted copy of list without repeats or empty entries.
func sortedUnique(list []string) []string {
	out := slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}
