package usabilitycontrol

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
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
	want := &TrimmedNode{Name: "a", ResourceVersion: "1", Architecture: "arm64"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TrimNode = %+v, want %+v", got, want)
	}
	// The informer may trim what it trimmed already (a watch-list's objects are trimmed in its
	// temporary store, then again as they reach the cache).
	if again, _ := TrimNode(got); again != got {
		t.Errorf("TrimNode of a trimmed node = %+v, want it as it was", again)
	}
	if c := got.(*TrimmedNode).DeepCopyObject(); !reflect.DeepEqual(c, want) || c == got {
		t.Errorf("DeepCopyObject = %+v", c)
	}
	// The cache keys it by name, as it keys a Node.
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(got); err != nil || key != "a" {
		t.Errorf("cache key %q, %v; want a", key, err)
	}
}

// TestTrimNodeReadsTheArchLabelOfNodeMetadata: the Nodes informer watches metadata only, and
// a node's architecture is then its kubernetes.io/arch label; managedFields and the other
// labels are not kept.
func TestTrimNodeReadsTheArchLabelOfNodeMetadata(t *testing.T) {
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "7",
		Labels:        map[string]string{corev1.LabelArchStable: "arm64", corev1.LabelOSStable: "linux"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}}}
	got, err := TrimNode(meta)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&TrimmedNode{Name: "a", ResourceVersion: "7", Architecture: "arm64"}); !reflect.DeepEqual(got, want) {
		t.Errorf("TrimNode = %+v, want %+v", got, want)
	}
	delete(meta.Labels, corev1.LabelArchStable)
	if got, _ := TrimNode(meta); !reflect.DeepEqual(got, &TrimmedNode{Name: "a", ResourceVersion: "7"}) {
		t.Errorf("TrimNode of a node without the label = %+v, want no architecture", got)
	}
}

// TestTheSetFollowsTrimmedNodes: the handler reads the trimmed nodes the informer holds,
// tombstones included.
func TestTheSetFollowsTrimmedNodes(t *testing.T) {
	n := NewNodeArchitectures()
	changes := 0
	h := n.Handler(func() { changes++ })
	trim := func(node *corev1.Node) any {
		out, _ := TrimNode(node)
		return out
	}
	h.OnAdd(trim(node("a", "amd64")), true)
	h.OnAdd(trim(node("b", "s390x")), true)
	h.OnUpdate(trim(node("a", "amd64")), trim(node("a", "arm64")))
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "b", Obj: trim(node("b", "s390x"))})
	if got := n.List(); changes != 4 || !reflect.DeepEqual(got, []string{"arm64"}) {
		t.Errorf("%d changes, set %v; want 4, [arm64]", changes, got)
	}
}

// TestTrimmedNodesKeepLittle: 5,000 trimmed nodes in an informer's cache take at most 1.25 MB
// (the Nodes may add 5 MiB to the operator's peak RSS, issue 50); trimmed to a corev1.Node they
// took 5 MB, to an ObjectMeta and the architecture 1.8 MB.
func TestTrimmedNodesKeepLittle(t *testing.T) {
	const nodes = 5000
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	before := heap()
	for i := range nodes {
		n := node(fmt.Sprintf("worker-%05d.cluster.example.com", i), "amd64")
		n.ResourceVersion = strconv.Itoa(1_000_000 + i)
		trimmed, err := TrimNode(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Add(trimmed); err != nil {
			t.Fatal(err)
		}
	}
	perNode := float64(heap()-before) / nodes
	runtime.KeepAlive(store)
	t.Logf("%.0f bytes a node in the cache", perNode)
	if perNode > 250 {
		t.Errorf("%.0f bytes a trimmed node in the cache, want at most 250 (1.25 MB for 5,000 nodes)", perNode)
	}
}
