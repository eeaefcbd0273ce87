package eventfilter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestNamesFilterSeesTombstones(t *testing.T) {
	filter := NamesFilter("imagestreamtag-to-image")
	mapCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "imagestreamtag-to-image"}}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}
	for _, tc := range []struct {
		name string
		obj  interface{}
		want bool
	}{
		{"the named object", mapCM, true},
		{"another object", other, false},
		{"the named object deleted during a relist", cache.DeletedFinalStateUnknown{Key: "ns/imagestreamtag-to-image", Obj: mapCM}, true},
		{"another object deleted during a relist", cache.DeletedFinalStateUnknown{Key: "ns/other", Obj: other}, false},
		{"not an object", "imagestreamtag-to-image", false},
	} {
		if got := filter(tc.obj); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
