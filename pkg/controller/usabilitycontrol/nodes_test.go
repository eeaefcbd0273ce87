package usabilitycontrol

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func node(name, arch string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1", Labels: map[string]string{"a": "b"}},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{Architecture: arch, KernelVersion: "6"}, Images: []corev1.ContainerImage{{Names: []string{"x"}}}}}
}

// TestTheSetChangesOnlyWhenAnArchitectureComesOrGoes: a second node of an architecture, a
// status update, a node changing nothing: no callback; the last node of an architecture gone
// (also as a tombstone), a new one, a node changing architecture: one each.
func TestTheSetChangesOnlyWhenAnArchitectureComesOrGoes(t *testing.T) {
	n := NewNodeArchitectures()
	changes := 0
	h := n.Handler(func() { changes++ })
	step := func(what string, do func(), wantChanges int, want ...string) {
		t.Helper()
		changes = 0
		do()
		if changes != wantChanges || !reflect.DeepEqual(n.List(), append([]string{}, want...)) {
			t.Errorf("%s: %d changes, set %v; want %d, %v", what, changes, n.List(), wantChanges, want)
		}
	}
	step("first node", func() { h.OnAdd(node("a", "amd64"), true) }, 1, "amd64")
	step("second node, same architecture", func() { h.OnAdd(node("b", "amd64"), true) }, 0, "amd64")
	step("a status update", func() { h.OnUpdate(node("a", "amd64"), node("a", "amd64")) }, 0, "amd64")
	step("a node of another architecture", func() { h.OnAdd(node("c", "s390x"), true) }, 1, "amd64", "s390x")
	step("a node without architecture", func() { h.OnAdd(node("d", ""), true) }, 0, "amd64", "s390x")
	step("one of two amd64 nodes gone", func() { h.OnDelete(node("a", "amd64")) }, 0, "amd64", "s390x")
	step("the last s390x node gone as a tombstone", func() {
		h.OnDelete(cache.DeletedFinalStateUnknown{Key: "c", Obj: node("c", "s390x")})
	}, 1, "amd64")
	step("the last amd64 node turns arm64", func() { h.OnUpdate(node("b", "amd64"), node("b", "arm64")) }, 1, "arm64")
	step("a node never seen deleted", func() { h.OnDelete(node("z", "ppc64le")) }, 0, "arm64")
}

// TestTrimNodeKeepsNameVersionAndArchitecture.
func TestTrimNodeKeepsNameVersionAndArchitecture(t *testing.T) {
	got, err := TrimNode(node("a", "arm64"))
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "1"},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{Architecture: "arm64"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TrimNode = %+v, want %+v", got, want)
	}
}
