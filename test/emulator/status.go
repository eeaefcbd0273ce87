package emulator

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	kindDockerImage    = "DockerImage"
	kindImageStreamTag = "ImageStreamTag"

	// internalRegistry is the host of the integrated registry as OpenShift
	// reports it in status.dockerImageRepository.
	internalRegistry = "image-registry.openshift-image-registry.svc:5000"
)

// attempt records one emulated import, for logging.
type attempt struct {
	tag     string
	ref     string
	failed  bool
	reason  string
	message string
}

// computed is the result of importedStatus.
type computed struct {
	// status is the status the importer would write.
	status imagev1.ImageStreamStatus
	// imported maps each importable spec tag (DockerImage, not reference) to
	// the reference its current status entry was imported from.
	imported map[string]string
	// attempts lists the imports performed, in spec order.
	attempts []attempt
}

// importedStatus computes the status the emulated importer writes for stream.
// It is pure: the same inputs always give the same output and nothing is
// modified.
//
// previous maps tag names to the reference last imported for that tag (what
// an earlier call returned as computed.imported); a tag missing from it is
// judged by its status entry alone. requests maps tag names to references an
// ImageStreamImport asked to import now; a request re-imports the tag even
// when nothing changed. now stamps new tag events and condition transitions.
//
// For each spec tag:
//   - DockerImage, not reference: imported when it has no status entry, when
//     its reference differs from the one last imported, or when requested.
//     A successful import records an event with a digest derived from the
//     reference and clears the ImportSuccess condition; a failed one sets
//     ImportSuccess=False and keeps the earlier events. Tags that need no
//     import keep their status entry unchanged, so a failure stays a failure
//     until the next import even if the failure rules change.
//   - DockerImage, reference: an event pointing at the reference itself,
//     without image, as the API server records it.
//   - ImageStreamTag within the same stream: mirrors the target tag.
//   - anything else (no from, ImageStreamImage): the status entry is kept.
//
// Status entries of tags no longer in spec are dropped; the result is sorted
// by tag name.
func importedStatus(stream *imagev1.ImageStream, r rules, now metav1.Time, previous, requests map[string]string) computed {
	prev := make(map[string]*imagev1.NamedTagEventList, len(stream.Status.Tags))
	for i := range stream.Status.Tags {
		t := &stream.Status.Tags[i]
		if _, dup := prev[t.Tag]; !dup {
			prev[t.Tag] = t
		}
	}
	spec := make(map[string]*imagev1.TagReference, len(stream.Spec.Tags))
	var order []string
	for i := range stream.Spec.Tags {
		t := &stream.Spec.Tags[i]
		if _, dup := spec[t.Name]; dup || t.Name == "" {
			continue
		}
		spec[t.Name] = t
		order = append(order, t.Name)
	}

	out := computed{imported: map[string]string{}}
	results := make(map[string]*imagev1.NamedTagEventList, len(order))

	// DockerImage tags first, so that ImageStreamTag references can mirror them.
	var deferred []string
	for _, name := range order {
		t := spec[name]
		gen := tagGeneration(stream, t)
		switch {
		case t.From == nil:
			results[name] = copyEntry(prev[name])
		case t.From.Kind == kindDockerImage && t.Reference:
			entry := copyOrNew(prev[name], name)
			entry.Items, _ = addEvent(entry.Items, imagev1.TagEvent{
				Created:              now,
				DockerImageReference: t.From.Name,
				Generation:           gen,
			})
			entry.Conditions = removeCondition(entry.Conditions, imagev1.ImportSuccess)
			results[name] = entry
		case t.From.Kind == kindDockerImage:
			ref, requested := requests[name]
			if !requested {
				ref = t.From.Name
				if !needsImport(prev[name], t, ref, previous) {
					results[name] = copyEntry(prev[name])
					out.imported[name] = ref
					continue
				}
			}
			entry, a := importTag(prev[name], name, ref, gen, r, now)
			results[name] = entry
			out.imported[name] = ref
			out.attempts = append(out.attempts, a)
		case t.From.Kind == kindImageStreamTag:
			deferred = append(deferred, name)
		default:
			results[name] = copyEntry(prev[name])
		}
	}

	for _, name := range deferred {
		resolveMirror(stream, spec, prev, results, name, now)
	}

	for _, name := range order {
		if entry := results[name]; entry != nil {
			out.status.Tags = append(out.status.Tags, *entry)
		}
	}
	slices.SortStableFunc(out.status.Tags, func(a, b imagev1.NamedTagEventList) int {
		return strings.Compare(a.Tag, b.Tag)
	})
	out.status.DockerImageRepository = internalRegistry + "/" + stream.Namespace + "/" + stream.Name
	out.status.PublicDockerImageRepository = stream.Status.PublicDockerImageRepository
	return out
}

// needsImport tells whether a DockerImage tag must be imported from ref.
func needsImport(prev *imagev1.NamedTagEventList, t *imagev1.TagReference, ref string, previous map[string]string) bool {
	if prev == nil {
		return true
	}
	if last, ok := previous[t.Name]; ok {
		return last != ref
	}
	// Nothing remembered (for example after a restart): judge by the status.
	if len(prev.Items) > 0 && prev.Items[0].DockerImageReference == pullSpec(ref) && prev.Items[0].Image == imageID(ref) {
		return false
	}
	if c := findCondition(prev.Conditions, imagev1.ImportSuccess); c != nil && c.Status == corev1.ConditionFalse {
		// A failed import is current unless the spec tag was bumped past it.
		return t.Generation != nil && *t.Generation > c.Generation
	}
	return true
}

// importTag imports ref into the tag's status entry.
func importTag(prev *imagev1.NamedTagEventList, tag, ref string, gen int64, r rules, now metav1.Time) (*imagev1.NamedTagEventList, attempt) {
	entry := copyOrNew(prev, tag)
	o := r.judge(ref)
	if o.fail {
		reason := o.reason
		if reason == "" {
			reason = DefaultFailureReason
		}
		cond := imagev1.TagEventCondition{
			Type:               imagev1.ImportSuccess,
			Status:             corev1.ConditionFalse,
			LastTransitionTime: now,
			Reason:             reason,
			Message:            o.message,
			Generation:         gen,
		}
		if old := findCondition(entry.Conditions, imagev1.ImportSuccess); old != nil &&
			old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			cond.LastTransitionTime = old.LastTransitionTime
			cond.Generation = max(cond.Generation, old.Generation)
		}
		entry.Conditions = setCondition(entry.Conditions, cond)
		return entry, attempt{tag: tag, ref: ref, failed: true, reason: reason, message: o.message}
	}
	var added bool
	entry.Items, added = addEvent(entry.Items, imagev1.TagEvent{
		Created:              now,
		DockerImageReference: pullSpec(ref),
		Image:                imageID(ref),
		Generation:           gen,
	})
	if !added && gen > entry.Items[0].Generation {
		// Re-importing the same image records the newer generation only.
		entry.Items[0].Generation = gen
	}
	entry.Conditions = removeCondition(entry.Conditions, imagev1.ImportSuccess)
	return entry, attempt{tag: tag, ref: ref}
}

// resolveMirror fills results[name] for an ImageStreamTag reference. Chains
// of references are followed to the first tag that is not one; a chain that
// loops, leaves the stream or names a missing tag is unresolvable, and the tag
// then keeps its previous status entry. results must already hold the entries
// of all tags that are not ImageStreamTag references.
func resolveMirror(stream *imagev1.ImageStream, spec map[string]*imagev1.TagReference, prev map[string]*imagev1.NamedTagEventList,
	results map[string]*imagev1.NamedTagEventList, name string, now metav1.Time) {
	t := spec[name]
	var src *imagev1.NamedTagEventList
	resolved := false
	seen := map[string]bool{name: true}
	for cur := t; ; {
		target, ok := sameStreamTag(stream, cur.From)
		if !ok || spec[target] == nil || seen[target] {
			break
		}
		seen[target] = true
		cur = spec[target]
		if cur.From != nil && cur.From.Kind == kindImageStreamTag {
			continue
		}
		src, resolved = results[target], true
		break
	}
	// openshift-apiserver copies a tracked tag's newest event to the tags that follow it, never
	// its conditions: a failed import shows on the tag that was imported and nowhere else.
	if !resolved || src == nil || len(src.Items) == 0 {
		results[name] = copyEntry(prev[name])
		return
	}
	entry := copyOrNew(prev[name], name)
	latest := src.Items[0]
	entry.Items, _ = addEvent(entry.Items, imagev1.TagEvent{
		Created:              now,
		DockerImageReference: latest.DockerImageReference,
		Image:                latest.Image,
		Generation:           tagGeneration(stream, t),
	})
	results[name] = entry
}

// sameStreamTag returns the tag an ImageStreamTag reference points to when it
// names a tag of stream itself ("tag" or "<stream>:tag").
func sameStreamTag(stream *imagev1.ImageStream, from *corev1.ObjectReference) (string, bool) {
	if from.Namespace != "" && from.Namespace != stream.Namespace {
		return "", false
	}
	name, tag, found := strings.Cut(from.Name, ":")
	if !found {
		return from.Name, from.Name != ""
	}
	if name != "" && name != stream.Name {
		return "", false
	}
	return tag, tag != ""
}

// tagGeneration is the generation recorded for events of spec tag t.
func tagGeneration(stream *imagev1.ImageStream, t *imagev1.TagReference) int64 {
	if t.Generation != nil && *t.Generation > 0 {
		return *t.Generation
	}
	return stream.Generation
}

// addEvent puts ev at the head of the history unless the current head already
// records the same image. It reports whether ev was added.
func addEvent(items []imagev1.TagEvent, ev imagev1.TagEvent) ([]imagev1.TagEvent, bool) {
	if len(items) > 0 && items[0].DockerImageReference == ev.DockerImageReference && items[0].Image == ev.Image {
		return items, false
	}
	return append([]imagev1.TagEvent{ev}, items...), true
}

func findCondition(conds []imagev1.TagEventCondition, t imagev1.TagEventConditionType) *imagev1.TagEventCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func setCondition(conds []imagev1.TagEventCondition, c imagev1.TagEventCondition) []imagev1.TagEventCondition {
	if old := findCondition(conds, c.Type); old != nil {
		*old = c
		return conds
	}
	return append(conds, c)
}

func removeCondition(conds []imagev1.TagEventCondition, t imagev1.TagEventConditionType) []imagev1.TagEventCondition {
	out := slices.DeleteFunc(conds, func(c imagev1.TagEventCondition) bool { return c.Type == t })
	if len(out) == 0 {
		return nil
	}
	return out
}

// copyEntry deep-copies a status entry; nil stays nil.
func copyEntry(e *imagev1.NamedTagEventList) *imagev1.NamedTagEventList {
	if e == nil {
		return nil
	}
	return e.DeepCopy()
}

func copyOrNew(e *imagev1.NamedTagEventList, tag string) *imagev1.NamedTagEventList {
	if e == nil {
		return &imagev1.NamedTagEventList{Tag: tag}
	}
	return e.DeepCopy()
}

// imageID is the emulated image name for ref: the sha256 of the reference.
func imageID(ref string) string {
	sum := sha256.Sum256([]byte(ref))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// pullSpec is the digest pull spec the emulated importer records for ref:
// the repository of ref (tag and digest removed) at imageID(ref).
func pullSpec(ref string) string {
	return repository(ref) + "@" + imageID(ref)
}

// repository strips a digest ("@...") and a tag (":..." after the last "/")
// from a container image reference.
func repository(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i >= 0 && i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// defaultTag is the tag a reference names, "latest" when it names none.
func defaultTag(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i >= 0 && i > strings.LastIndex(ref, "/") {
		return ref[i+1:]
	}
	return "latest"
}
