package usabilitycontrol

import (
	"context"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	return controllerOver(streams, store, &discoveryOf{}, clocktesting.NewFakeClock(time.Now()))
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
