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

// recordingInformer keeps the handler registered on it, for the test to hand events to.
type recordingInformer struct{ handler cache.ResourceEventHandler }

func (r *recordingInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	r.handler = h
	return nil, nil
}
func (r *recordingInformer) HasSynced() bool { return true }

// Issue 56: Updates drops the updates that change nothing that counts, and passes everything else.
func TestUpdatesPassesOnlyTheUpdatesThatCount(t *testing.T) {
	inf := &recordingInformer{}
	sameData := func(old, updated *corev1.ConfigMap) bool { return old.Data["k"] != updated.Data["k"] }
	var got []string
	if _, err := Updates(inf, sameData).AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { got = append(got, "add") },
		UpdateFunc: func(_, _ interface{}) { got = append(got, "update") },
		DeleteFunc: func(interface{}) { got = append(got, "delete") },
	}); err != nil {
		t.Fatal(err)
	}
	cm := func(rv, data string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: rv, Labels: map[string]string{"rv": rv}}, Data: map[string]string{"k": data}}
	}
	for _, tc := range []struct {
		name string
		send func(cache.ResourceEventHandler)
		want []string
	}{
		{"an add", func(h cache.ResourceEventHandler) { h.OnAdd(cm("1", "x"), false) }, []string{"add"}},
		{"an update of what counts", func(h cache.ResourceEventHandler) { h.OnUpdate(cm("1", "x"), cm("2", "y")) }, []string{"update"}},
		{"an update of the rest only", func(h cache.ResourceEventHandler) { h.OnUpdate(cm("1", "x"), cm("2", "x")) }, nil},
		{"a resync: the periodic safety net", func(h cache.ResourceEventHandler) { h.OnUpdate(cm("2", "x"), cm("2", "x")) }, []string{"update"}},
		{"another type", func(h cache.ResourceEventHandler) {
			h.OnUpdate(&corev1.Secret{}, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "3"}})
		}, []string{"update"}},
		{"an update into another type", func(h cache.ResourceEventHandler) {
			h.OnUpdate(cm("2", "x"), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "3"}})
		}, []string{"update"}},
		{"a delete", func(h cache.ResourceEventHandler) { h.OnDelete(cm("2", "x")) }, []string{"delete"}},
	} {
		got = nil
		tc.send(inf.handler)
		if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("%s: handed %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Issue 56: WithoutResyncs drops the resyncs and passes every change.
func TestWithoutResyncsDropsOnlyTheResyncs(t *testing.T) {
	inf := &recordingInformer{}
	var got []string
	if _, err := WithoutResyncs(inf).AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { got = append(got, "add") },
		UpdateFunc: func(_, _ interface{}) { got = append(got, "update") },
		DeleteFunc: func(interface{}) { got = append(got, "delete") },
	}); err != nil {
		t.Fatal(err)
	}
	cm := func(version string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ruby", ResourceVersion: version}}
	}
	for _, tc := range []struct {
		name string
		send func(cache.ResourceEventHandler)
		want []string
	}{
		{"an add", func(h cache.ResourceEventHandler) { h.OnAdd(cm("1"), false) }, []string{"add"}},
		{"an update", func(h cache.ResourceEventHandler) { h.OnUpdate(cm("1"), cm("2")) }, []string{"update"}},
		{"a resync", func(h cache.ResourceEventHandler) { h.OnUpdate(cm("2"), cm("2")) }, nil},
		{"an update into something that is no object", func(h cache.ResourceEventHandler) { h.OnUpdate(cm("2"), "ruby") }, []string{"update"}},
		{"a delete", func(h cache.ResourceEventHandler) { h.OnDelete(cm("2")) }, []string{"delete"}},
		{"a delete seen on a relist", func(h cache.ResourceEventHandler) {
			h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ruby", Obj: cm("2")})
		}, []string{"delete"}},
	} {
		got = nil
		tc.send(inf.handler)
		if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("%s: handed %v, want %v", tc.name, got, tc.want)
		}
	}
}
