package samplewriter

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFieldPath(t *testing.T) {
	for drift, want := range map[string][]string{
		"spec.dockerImageRepository":                                  {"f:spec", "f:dockerImageRepository"},
		"metadata.annotations[samples.operator.openshift.io/version]": {"f:metadata", "f:annotations", "f:samples.operator.openshift.io/version"},
		"spec.tags[3.11].from":                                        {"f:spec", "f:tags", `k:{"name":"3.11"}`, "f:from"},
		"spec.tags[latest].referencePolicy.type":                      {"f:spec", "f:tags", `k:{"name":"latest"}`, "f:referencePolicy", "f:type"},
		"spec.tags[latest]":                                           {"f:spec", "f:tags", `k:{"name":"latest"}`},
		"objects[3]":                                                  {"f:objects"},
		"message":                                                     {"f:message"},
	} {
		if got := fieldPath(drift); !slices.Equal(got, want) {
			t.Errorf("fieldPath(%q) = %q, want %q", drift, got, want)
		}
	}
}

// TestOtherOwner: a manager other than the operator's that owns a field the update puts back
// (or its atomic parent) is named; status writers, the operator itself and owners of other
// fields are not.
func TestOtherOwner(t *testing.T) {
	entry := func(manager, subresource, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	ours := entry(FieldManager, "", `{"f:spec":{"f:tags":{"k:{\"name\":\"latest\"}":{".":{},"f:from":{}}}}}`)
	edit := entry("kubectl-edit", "", `{"f:spec":{"f:tags":{"k:{\"name\":\"latest\"}":{"f:from":{"f:name":{}}}}}}`)
	scheduled := entry("oc", "", `{"f:spec":{"f:tags":{"k:{\"name\":\"latest\"}":{"f:importPolicy":{"f:scheduled":{}}}}}}`)
	status := entry("openshift-controller-manager", "status", `{"f:spec":{"f:tags":{}}}`)
	atomic := entry("kubectl-apply", "", `{"f:spec":{"f:tags":{}}}`)
	unreadable := entry("truncated", "", `{"f:spec":`)
	from := []string{"spec.tags[latest].from"}
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		drift   []string
		want    string
	}{
		{"only the operator", []metav1.ManagedFieldsEntry{ours}, from, ""},
		{"an edit of the field", []metav1.ManagedFieldsEntry{ours, edit}, from, "kubectl-edit"},
		{"another field of the tag", []metav1.ManagedFieldsEntry{ours, scheduled}, from, ""},
		{"a status writer", []metav1.ManagedFieldsEntry{ours, status}, from, ""},
		{"the tags owned whole", []metav1.ManagedFieldsEntry{ours, atomic}, from, "kubectl-apply"},
		{"no managedFields", nil, from, ""},
		{"an edit after an entry that does not parse", []metav1.ManagedFieldsEntry{ours, unreadable, edit}, from, "kubectl-edit"},
	} {
		if got := OtherOwner(tc.entries, tc.drift); got != tc.want {
			t.Errorf("%s: OtherOwner = %q, want %q", tc.name, got, tc.want)
		}
	}
}
