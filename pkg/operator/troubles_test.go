package operator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// handlers is an informer that keeps the handlers it is given, to play events to them.
type handlers []cache.ResourceEventHandler

func (h *handlers) HasSynced() bool { return true }

func (h *handlers) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	*h = append(*h, handler)
	return nil, nil
}

func quota(rv string, hard, used string) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "samples", Namespace: "openshift", ResourceVersion: rv},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"openshift.io/imagestreams": resource.MustParse(hard)}},
		Status:     corev1.ResourceQuotaStatus{Used: corev1.ResourceList{"openshift.io/imagestreams": resource.MustParse(used)}},
	}
}

// TestRefusalsAreRetriedAtOnceOnRealChangesOnly: every create in openshift moves a quota's
// status, and informers resync; neither may end every refused sample's backoff. A change of a
// quota's or a LimitRange's spec, or one created or deleted, does.
func TestRefusalsAreRetriedAtOnceOnRealChangesOnly(t *testing.T) {
	var quotas, limits handlers
	retries := 0
	if err := (retryTriggers{quotas: &quotas, limitRanges: &limits}).OnChange(func() { retries++ }); err != nil {
		t.Fatal(err)
	}
	limit := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "tags", Namespace: "openshift", ResourceVersion: "1"}}
	wider := limit.DeepCopy()
	wider.ResourceVersion = "2"
	wider.Spec.Limits = []corev1.LimitRangeItem{{Type: "openshift.io/ImageStream", Max: corev1.ResourceList{"openshift.io/image-tags": resource.MustParse("30")}}}
	for _, step := range []struct {
		name  string
		event func()
		want  int
	}{
		{"the first list", func() { quotas[0].OnAdd(quota("1", "5", "0"), true); limits[0].OnAdd(limit, true) }, 0},
		{"a resync", func() { quotas[0].OnUpdate(quota("1", "5", "0"), quota("1", "5", "0")) }, 0},
		{"a status write after a create in openshift", func() { quotas[0].OnUpdate(quota("1", "5", "0"), quota("2", "5", "1")) }, 0},
		{"the quota raised", func() { quotas[0].OnUpdate(quota("2", "5", "1"), quota("3", "50", "1")) }, 1},
		{"the quota deleted", func() { quotas[0].OnDelete(quota("3", "50", "1")) }, 1},
		{"a quota created", func() { quotas[0].OnAdd(quota("4", "5", "0"), false) }, 1},
		{"a LimitRange resync", func() { limits[0].OnUpdate(limit, limit) }, 0},
		{"the LimitRange widened", func() { limits[0].OnUpdate(limit, wider) }, 1},
	} {
		before := retries
		step.event()
		if got := retries - before; got != step.want {
			t.Errorf("%s: %d retries at once, want %d", step.name, got, step.want)
		}
	}
}
