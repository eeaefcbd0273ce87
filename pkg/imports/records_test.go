package imports

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A live error ConfigMap is in sync only when it is the operator's and holds exactly these
// failures, each with its message.
func TestErrorConfigMapInSync(t *testing.T) {
	failed := map[string]string{"3.3": "not found", "latest": "not found"}
	edit := func(f func(*corev1.ConfigMap)) *corev1.ConfigMap {
		live := ErrorConfigMap("openshift-cluster-samples-operator", "ruby", failed, time.Time{})
		f(live)
		return live
	}
	for name, tc := range map[string]struct {
		live *corev1.ConfigMap
		want bool
	}{
		"as written":           {edit(func(*corev1.ConfigMap) {}), true},
		"label removed":        {edit(func(c *corev1.ConfigMap) { delete(c.Labels, ErrorLabel) }), false},
		"a tag healed":         {edit(func(c *corev1.ConfigMap) { delete(c.Data, "latest") }), false},
		"a message changed":    {edit(func(c *corev1.ConfigMap) { c.Data["3.3"] = "unauthorized" }), false},
		"another tag recorded": {edit(func(c *corev1.ConfigMap) { delete(c.Data, "latest"); c.Data["3.1"] = "not found" }), false},
	} {
		if got := ErrorConfigMapInSync(tc.live, failed); got != tc.want {
			t.Errorf("%s: in sync %v, want %v", name, got, tc.want)
		}
	}
}

// The error record keeps when the stream began failing, and FailingSince reads it back; a record
// written before the annotation existed began failing when it was created.
func TestFailingSince(t *testing.T) {
	since := time.Date(2026, 11, 28, 6, 0, 0, 0, time.FixedZone("CET", 3600))
	cm := ErrorConfigMap("openshift-cluster-samples-operator", "ruby", map[string]string{"3.3": "not found"}, since)
	cm.CreationTimestamp = metav1.NewTime(since.Add(time.Hour))
	if got := FailingSince(cm); !got.Equal(since) {
		t.Errorf("FailingSince = %s, want %s", got, since)
	}
	delete(cm.Annotations, FailingSinceAnnotation)
	if got := FailingSince(cm); !got.Equal(since.Add(time.Hour)) {
		t.Errorf("FailingSince of a record without the annotation = %s, want its creation %s", got, since.Add(time.Hour))
	}
}

// The tag-to-image ConfigMap is stamped with the version and holds its own copy of the map.
func TestTagToImageConfigMap(t *testing.T) {
	tags := map[string]string{"ruby_3.3": "registry.redhat.io/ubi9/ruby-33:latest"}
	cm := TagToImageConfigMap("openshift-cluster-samples-operator", "4.22.0", tags)
	tags["ruby_3.3"] = "changed"
	if cm.Name != TagToImageName || cm.Namespace != "openshift-cluster-samples-operator" || cm.Annotations["samples.operator.openshift.io/version"] != "4.22.0" ||
		len(cm.Data) != 1 || cm.Data["ruby_3.3"] != "registry.redhat.io/ubi9/ruby-33:latest" {
		t.Errorf("tag-to-image ConfigMap %+v", cm)
	}
}

// Credentials reads the pull secret as the import controller would use it, and says what is
// wrong without quoting it.
func TestCredentials(t *testing.T) {
	secret := func(data string) *corev1.Secret {
		return &corev1.Secret{Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(data)}}
	}
	for name, tc := range map[string]struct {
		secret          *corev1.Secret
		samplesRegistry string
		ok              bool
		says            string
	}{
		"a mirror":           {nil, "mirror.example.com", true, "samplesRegistry is mirror.example.com"},
		"no secret":          {nil, "", false, "does not exist"},
		"no docker config":   {&corev1.Secret{Data: map[string][]byte{"token": []byte("x")}}, "", false, "has no .dockerconfigjson key"},
		"not JSON":           {secret("{"), "", false, `is not a docker config with an "auths" object`},
		"no auths":           {secret(`{"credsStore":"x"}`), "", false, `is not a docker config with an "auths" object`},
		"another registry":   {secret(`{"auths":{"quay.io":{"auth":"c2VjcmV0"}}}`), "", false, "holds no credentials for registry.redhat.io"},
		"registry.redhat.io": {secret(`{"auths":{"registry.redhat.io":{"auth":"c2VjcmV0"}}}`), "", true, "holds credentials for registry.redhat.io"},
	} {
		ok, message := Credentials(tc.secret, tc.samplesRegistry)
		if ok != tc.ok || !strings.Contains(message, tc.says) || strings.Contains(message, "c2VjcmV0") {
			t.Errorf("%s: %v, %q; want %v and %q", name, ok, message, tc.ok, tc.says)
		}
	}
}
