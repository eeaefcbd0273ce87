// Package imagerefs reads, without clients, how OpenShift objects point at images: a tag of an
// imagestream that follows another tag of the same stream, and the image.openshift.io/triggers
// annotation of a workload. Both the operator (is a sample usable here) and the plugin (who uses
// a sample) read them, the same way; it links none of the workload API types, so the operator's
// binary does not carry them.
package imagerefs

import (
	"encoding/json"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
)

// TriggersAnnotation holds a workload's image triggers: a JSON list of {"from": an object
// reference, "fieldPath": where its image goes, "paused"}.
const TriggersAnnotation = "image.openshift.io/triggers"

const imageStreamTagKind = "ImageStreamTag"

// Triggers are the references of a triggers annotation's value, in its order. A value the
// trigger controller rejects (it does not parse, or two triggers set the same field) triggers
// nothing: ok is false.
func Triggers(value string) (refs []corev1.ObjectReference, ok bool) {
	var triggers []struct {
		From struct {
			Kind       string `json:"kind"`
			Name       string `json:"name"`
			Namespace  string `json:"namespace"`
			APIVersion string `json:"apiVersion"`
		} `json:"from"`
		FieldPath string `json:"fieldPath"`
	}
	if err := json.Unmarshal([]byte(value), &triggers); err != nil {
		return nil, false
	}
	fields := map[string]bool{}
	for _, t := range triggers {
		if fields[t.FieldPath] {
			return nil, false
		}
		fields[t.FieldPath] = true
		refs = append(refs, corev1.ObjectReference{Kind: t.From.Kind, Name: t.From.Name, Namespace: t.From.Namespace, APIVersion: t.From.APIVersion})
	}
	return refs, true
}

// FollowedTags are the tags of is that tag follows, nearest first: a spec tag whose from is an
// ImageStreamTag of the same stream takes that tag's image, so a user of the one is a user of
// the other. A chain that loops ends before it comes back.
func FollowedTags(is *imagev1.ImageStream, tag string) []string {
	var chain []string
	var seen map[string]bool // made at the first link: most tags follow none, and are asked at every verdict
	for {
		i := slices.IndexFunc(is.Spec.Tags, func(t imagev1.TagReference) bool { return t.Name == tag })
		if i < 0 {
			return chain
		}
		next, ok := tagOfSameStream(is, is.Spec.Tags[i].From)
		if !ok {
			return chain
		}
		if seen == nil {
			seen = map[string]bool{tag: true}
		}
		if seen[next] {
			return chain
		}
		seen[next] = true
		chain = append(chain, next)
		tag = next
	}
}

// tagOfSameStream is the tag from names when it is an ImageStreamTag of is ("3.3-ubi9" or
// "ruby:3.3-ubi9", in the stream's namespace).
func tagOfSameStream(is *imagev1.ImageStream, from *corev1.ObjectReference) (string, bool) {
	if from == nil || from.Kind != imageStreamTagKind || from.Namespace != "" && from.Namespace != is.Namespace {
		return "", false
	}
	stream, tag, found := strings.Cut(from.Name, ":")
	if !found {
		return stream, true
	}
	return tag, stream == is.Name
}
