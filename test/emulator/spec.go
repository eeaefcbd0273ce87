package emulator

import (
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// specAfterImport is what an import writes besides the status. On OpenShift every import, the
// image import controller's and an ImageStreamImport a client creates alike, goes through
// openshift-apiserver's ImageStreamImport REST handler (pkg/image/apiserver/registry/
// imagestreamimport/rest.go), which updates the whole stream:
//   - a tag whose import failed with a condition it did not have already gets generation 0
//     (setFailureCondition); the update strategy gives it the stream's next generation;
//   - a tag whose import succeeded with a new image, or that was bumped past its last import,
//     is reset to the imported source (ensureSpecTag with reset): from {DockerImage, ref},
//     generation 0, its reference policy kept when set;
//   - a successful import sets the tag's import policy to the request's (importSuccessful);
//   - the stream is stamped openshift.io/image.dockerRepositoryCheck with the time whenever
//     the import changed it, or it has no such annotation.
//
// res is importedStatus's result for stream; policies maps a tag to the import policy an
// ImageStreamImport asked for (nil for the import controller, which asks with the tag's own).
// It returns the stream to write with Update, or nil when the import changes neither spec nor
// metadata. stream is not modified.
func specAfterImport(stream *imagev1.ImageStream, res computed, policies map[string]imagev1.TagImportPolicy, now metav1.Time) *imagev1.ImageStream {
	if len(res.attempts) == 0 {
		return nil
	}
	prev := map[string]*imagev1.NamedTagEventList{}
	for i := range stream.Status.Tags {
		prev[stream.Status.Tags[i].Tag] = &stream.Status.Tags[i]
	}
	out := stream.DeepCopy()
	specChanged := false
	for _, a := range res.attempts {
		i := specTagIndex(out, a.tag)
		if i < 0 {
			continue
		}
		tag := &out.Spec.Tags[i]
		if a.failed {
			if !hasSameFailure(prev[a.tag], a) {
				tag.Generation = ptrTo(int64(0))
				specChanged = true
			}
			continue
		}
		if importBroughtChange(prev[a.tag], tag, a.ref) {
			tag.From = &corev1.ObjectReference{Kind: kindDockerImage, Name: a.ref}
			tag.Generation = ptrTo(int64(0))
			if tag.ReferencePolicy.Type == "" {
				tag.ReferencePolicy.Type = imagev1.SourceTagReferencePolicy
			}
		}
		if policy, ok := policies[a.tag]; ok {
			tag.ImportPolicy = policy
		}
	}
	if !specChanged {
		specChanged = !equality.Semantic.DeepEqual(stream.Spec.Tags, out.Spec.Tags)
	}
	_, stamped := stream.Annotations[imagev1.DockerImageRepositoryCheckAnnotation]
	statusChanged := !equality.Semantic.DeepEqual(stream.Status, res.status)
	if stamped && !specChanged && !statusChanged {
		return nil
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[imagev1.DockerImageRepositoryCheckAnnotation] = now.UTC().Format(time.RFC3339)
	return out
}

// hasSameFailure says whether the tag's status already holds the failure a reports, by type,
// status, reason and message (rest.go hasTagCondition: generation and time do not count).
func hasSameFailure(entry *imagev1.NamedTagEventList, a attempt) bool {
	if entry == nil {
		return false
	}
	c := findCondition(entry.Conditions, imagev1.ImportSuccess)
	return c != nil && c.Status == corev1.ConditionFalse && c.Reason == a.reason && c.Message == a.message
}

// importBroughtChange is rest.go hasTagChanged: no earlier import, another image, or a spec
// tag bumped past the last import.
func importBroughtChange(entry *imagev1.NamedTagEventList, tag *imagev1.TagReference, ref string) bool {
	if entry == nil || len(entry.Items) == 0 || tag.Generation == nil {
		return true
	}
	last := entry.Items[0]
	return last.DockerImageReference != pullSpec(ref) || last.Image != imageID(ref) || *tag.Generation > last.Generation
}

func specTagIndex(stream *imagev1.ImageStream, name string) int {
	for i := range stream.Spec.Tags {
		if stream.Spec.Tags[i].Name == name {
			return i
		}
	}
	return -1
}

func ptrTo[T any](v T) *T { return &v }
