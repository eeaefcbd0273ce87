package usabilitycontrol

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	templatelisters "github.com/openshift/client-go/template/listers/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// TestNoVerdictBeforeTheNodesAreListedOrRefused: until the Nodes informer has listed the nodes,
// or its list failed, the sync makes no verdict (the samples controller keeps waiting); either
// event lets it make them.
func TestNoVerdictBeforeTheNodesAreListedOrRefused(t *testing.T) {
	for _, tc := range []struct {
		name           string
		listed, failed bool
		want           bool
	}{
		{"neither listed nor refused", false, false, false},
		{"listed", true, false, true},
		{"refused", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := syncableController(&discoveryOf{}, clocktesting.NewFakeClock(time.Now()))
			c.nodesListed = func() bool { return tc.listed }
			c.nodesRefused.Store(tc.failed)
			syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(metav1.Now().Time)))
			if err := c.sync(context.Background(), syncCtx); err != nil {
				t.Fatal(err)
			}
			if got := c.verdicts.Ready(); got != tc.want {
				t.Errorf("verdicts ready = %v, want %v", got, tc.want)
			}
		})
	}
}

// indexer is an informer's store holding objs.
func indexer(objs ...any) cache.Indexer {
	i := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		_ = i.Add(o)
	}
	return i
}

// syncableController is a Controller for the x86_64 inventory's samples under a Managed Config,
// with no imagestream yet, the nodes listed, and discovery as disc answers.
func syncableController(disc Discovery, clk *clocktesting.FakeClock) *Controller {
	return controllerOver(indexer(), &images{}, disc, clk)
}

// managedController judges the x86_64 inventory for a Managed Config, the streams of streams
// and the images of store, with the nodes listed; discovery serves nothing.
func managedController(streams cache.Indexer, store ImageGetter) *Controller {
	return controllerOver(streams, store, &discoveryOf{kinds: map[string][]string{"image.openshift.io/v1": {"Image", "ImageStream"}}}, clocktesting.NewFakeClock(time.Now()))
}

func controllerOver(streams cache.Indexer, store ImageGetter, disc Discovery, clk *clocktesting.FakeClock) *Controller {
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}}
	image := &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
	return &Controller{
		inventories: configspectest.X86Only{},
		config:      configreader.New(sampleslisters.NewConfigLister(indexer(cfg)), configlisters.NewImageLister(indexer(image)), configspectest.X86Only{}),
		streams:     imagelisters.NewImageStreamLister(streams).ImageStreams(names.SamplesNamespace),
		discovery:   disc,
		recheck:     flowcontrol.NewFakeBackOff(discoveryRecheck, maxDiscoveryRecheck, clk),
		verdicts:    NewVerdicts(),
		nodes:       NewNodeArchitectures(),
		images:      NewImageArchitectures(store),
		templates:   templatelisters.NewTemplateLister(indexer()).Templates(names.SamplesNamespace),
		nodesListed: func() bool { return true },
	}
}

// nodeInformer is a trimming Nodes informer, as the operator's, over a fake clientset holding
// nodes whose lists fail with listErr when it is not nil; lists counts the lists.
func nodeInformer(nodes []runtime.Object, listErr error, lists *atomic.Int32) cache.SharedIndexInformer {
	clientset := fake.NewClientset(nodes...)
	clientset.PrependReactor("list", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		lists.Add(1)
		return listErr != nil, nil, listErr
	})
	core := clientset.CoreV1().Nodes()
	lw := &cache.ListWatch{
		ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return core.List(ctx, o) },
		WatchFuncWithContext: core.Watch,
	}
	informer := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, clientset), &corev1.Node{}, 0, cache.Indexers{})
	_ = informer.SetTransform(TrimNode)
	return informer
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("10 s and still not %s", what)
		}
	}
}

// TestTheVerdictsWaitUntilTheHandlerHasEveryNode (issue 56, item 10): the Nodes informer's
// store has the first list before its handler has been given it all; the verdicts, and so every
// sample write, wait until the architectures of every listed node are in.
func TestTheVerdictsWaitUntilTheHandlerHasEveryNode(t *testing.T) {
	var nodes []runtime.Object
	for i := range 200 {
		arch := "amd64"
		if i == 199 {
			arch = "arm64" // the last node listed is the only arm64 one
		}
		nodes = append(nodes, node(fmt.Sprintf("node-%d", i), arch))
	}
	var lists atomic.Int32
	informer := nodeInformer(nodes, nil, &lists)
	c := managedController(indexer(), &images{})
	if err := c.watchNodes(informer); err != nil {
		t.Fatal(err)
	}
	syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(time.Now())))

	// The handler is held at its first node, as a busy process may hold it.
	c.nodes.mu.Lock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.Run(ctx.Done())
	waitFor(t, "listed into the informer's store", informer.HasSynced)
	if c.nodesListed() {
		t.Fatal("the nodes are taken as listed while the handler has not had them")
	}
	if err := c.sync(ctx, syncCtx); err != nil {
		t.Fatal(err)
	}
	if c.verdicts.Ready() {
		t.Fatal("verdicts made while the handler has not had the nodes")
	}
	c.nodes.mu.Unlock()
	waitFor(t, "listed", c.nodesListed)
	if got := c.nodes.List(); !slices.Equal(got, []string{"amd64", "arm64"}) {
		t.Fatalf("listed, the architectures %v, want amd64 and arm64", got)
	}
	if err := c.sync(ctx, syncCtx); err != nil {
		t.Fatal(err)
	}
	if !c.verdicts.Ready() {
		t.Error("no verdicts once the nodes are listed")
	}
}

// TestOnlyARefusedListOfTheNodesLetsTheVerdictsGoWithoutThem: a list refused (the operator may
// not list nodes) lets the verdicts be made without them; a list that fails otherwise is retried
// and the verdicts wait for it.
func TestOnlyARefusedListOfTheNodesLetsTheVerdictsGoWithoutThem(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		refused bool
	}{
		{"forbidden", apierrors.NewForbidden(corev1.Resource("nodes"), "", fmt.Errorf("RBAC")), true},
		{"unauthorized", apierrors.NewUnauthorized("token expired"), true},
		{"unavailable", apierrors.NewServiceUnavailable("etcd leader changed"), false},
		{"timeout", apierrors.NewTimeoutError("list", 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lists atomic.Int32
			informer := nodeInformer(nil, tc.err, &lists)
			c := managedController(indexer(), &images{})
			if err := c.watchNodes(informer); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go informer.Run(ctx.Done())
			// The handler of the first failure has run once the list is tried again.
			waitFor(t, "listed twice", func() bool { return lists.Load() >= 2 })
			if got := c.nodesRefused.Load(); got != tc.refused {
				t.Errorf("refused %v, want %v", got, tc.refused)
			}
		})
	}
}
