package operator

import (
	"context"
	"encoding/pem"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/metadata"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/usabilitycontrol"
)

// The Nodes informer watches the Nodes' metadata and caches each node trimmed to the
// architecture its kubernetes.io/arch label names, as it is when it comes and when it changes.
func TestTheNodeInformerKeepsTrimmedNodes(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	node := func(name, arch string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelArchStable: arch, corev1.LabelOSStable: "linux"}}}
	}
	meta := metadatafake.NewSimpleMetadataClient(scheme, node("worker-0", "arm64"))
	informer := newNodeInformer(meta)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	trimmed := func(name string) *usabilitycontrol.TrimmedNode {
		obj, ok, err := informer.GetStore().GetByKey(name)
		if err != nil || !ok {
			return nil
		}
		n, _ := obj.(*usabilitycontrol.TrimmedNode)
		return n
	}
	if n := trimmed("worker-0"); n == nil || n.Architecture != "arm64" {
		t.Fatalf("cached %#v, want worker-0 trimmed to arm64", n)
	}
	if _, err := meta.Resource(nodesResource).(metadatafake.MetadataClient).CreateFake(node("worker-1", "s390x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := trimmed("worker-1"); n == nil || n.Architecture != "s390x"; n = trimmed("worker-1") {
		if time.Now().After(deadline) {
			t.Fatalf("cached %#v, want worker-1 trimmed to s390x", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The Nodes are watched over HTTP/1.1 from a server that speaks HTTP/2 (issue 56): on an
// HTTP/2 stream the client buffers up to 4 MiB the informer has not read yet.
func TestTheNodesAreWatchedOverHTTP1(t *testing.T) {
	var proto atomic.Value
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":[]}`))
	}))
	server.EnableHTTP2 = true
	server.StartTLS()
	defer server.Close()
	cfg := &rest.Config{Host: server.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})}}
	list := func(cfg *rest.Config) string {
		t.Helper()
		meta, err := metadata.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := meta.Resource(nodesResource).List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		return proto.Load().(string)
	}
	if got := list(cfg); got != "HTTP/2.0" {
		t.Fatalf("positive control: the operator's own config spoke %s, want HTTP/2.0", got)
	}
	if got := list(nodesConfig(cfg)); got != "HTTP/1.1" {
		t.Errorf("the Nodes' config spoke %s, want HTTP/1.1", got)
	}
	if cfg.NextProtos != nil {
		t.Errorf("nodesConfig changed the operator's own config: NextProtos %v", cfg.NextProtos)
	}
}

// The Nodes informer never resyncs (issue 56): a resync would hand the handler every cached
// node again, unchanged. client-go resyncs a handler at most once a second; the test waits for
// more than that.
func TestTheNodeInformerNeverResyncs(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	meta := metadatafake.NewSimpleMetadataClient(scheme, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: "worker-0", Labels: map[string]string{corev1.LabelArchStable: "amd64"}}})
	informer := newNodeInformer(meta)
	var adds, updates atomic.Int32
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { adds.Add(1) },
		UpdateFunc: func(_, _ any) { updates.Add(1) },
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	time.Sleep(1500 * time.Millisecond)
	if adds.Load() != 1 || updates.Load() != 0 {
		t.Errorf("%d adds and %d updates of one node that never changed, want 1 and 0", adds.Load(), updates.Load())
	}
}

// The operator builds only the Kubernetes clients it uses (kubeclients.go): the clientset's
// constructor runs code in every group's client package, and those pages of the binary stay
// resident. No file of the operator's may call it.
func TestTheOperatorBuildsNoKubernetesClientset(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "k8s.io/client-go/kubernetes" {
				t.Errorf("%s imports k8s.io/client-go/kubernetes: build the group's client from the operator's (kubeClients)", file)
			}
		}
	}
}
