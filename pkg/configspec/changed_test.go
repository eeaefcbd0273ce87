package configspec

import (
	"testing"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 56: a Config status write changes nothing the controllers that act on every sample read;
// any change of what they read does.
func TestReadChanged(t *testing.T) {
	base := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", UID: "u1", ResourceVersion: "10", Generation: 3,
			Annotations: map[string]string{SkippedImageStreamTagsAnnotation: "ruby:2.5-ubi8"}, Finalizers: []string{"samples.operator.openshift.io/finalizer"}},
		Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
		Status: samplesv1.ConfigStatus{ManagementState: operatorv1.Managed, Version: "4.15.0", Architectures: []string{"x86_64"},
			Conditions: []samplesv1.ConfigCondition{{Type: samplesv1.SamplesExist, Status: corev1.ConditionTrue, Message: "10 samples"}}},
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name   string
		update func(*samplesv1.Config)
		want   bool
	}{
		{"a status write: conditions, version", func(c *samplesv1.Config) {
			c.Status.Conditions[0].Message = "11 samples"
			c.Status.Version = "4.16.0"
			c.Status.ManagementState = operatorv1.Removed
			c.Status.SkippedImagestreams = []string{"ruby"}
		}, false},
		{"managedFields only", func(c *samplesv1.Config) {
			c.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "cluster-samples-operator", Subresource: "status"}}
		}, false},
		{"status.architectures emptied", func(c *samplesv1.Config) { c.Status.Architectures = []string{} }, true},
		{"status.architectures, which Validate compares the spec with", func(c *samplesv1.Config) { c.Status.Architectures = []string{"arm64"} }, true},
		{"the spec", func(c *samplesv1.Config) { c.Spec.SkippedImagestreams = []string{"ruby"}; c.Generation++ }, true},
		{"the spec without a generation (a server that does not count it)", func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Removed }, true},
		{"the skipped tags annotation", func(c *samplesv1.Config) { c.Annotations[SkippedImageStreamTagsAnnotation] = "" }, true},
		{"the offered annotation", func(c *samplesv1.Config) { c.Annotations[OfferedAnnotation] = "template/rails" }, true},
		{"a label", func(c *samplesv1.Config) { c.Labels = map[string]string{"a": "b"} }, true},
		{"the finalizers", func(c *samplesv1.Config) { c.Finalizers = nil }, true},
		{"deletion", func(c *samplesv1.Config) { c.DeletionTimestamp = &now }, true},
		{"another Config of the same name", func(c *samplesv1.Config) { c.UID = "u2" }, true},
	} {
		updated := base.DeepCopy()
		updated.ResourceVersion = "11"
		tc.update(updated)
		if got := ReadChanged(base, updated); got != tc.want {
			t.Errorf("%s: ReadChanged = %v, want %v", tc.name, got, tc.want)
		}
	}
	if ReadChanged(base, base.DeepCopy()) {
		t.Errorf("a resync's object compared with itself is a change")
	}
}
