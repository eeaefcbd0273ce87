package bootstrap

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bootstrapstate"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/informertest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/mirrorsetinformers"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// counted is an informer whose added handlers are counted, with the lister of its kind: one type
// stands for the informer of every kind the controller is given.
type counted[L any] struct {
	informer cache.SharedIndexInformer
	lister   L
	added    *atomic.Int32
}

func (c counted[L]) Informer() cache.SharedIndexInformer {
	return informertest.Registrations{SharedIndexInformer: c.informer, Added: c.added}
}

func (c counted[L]) Lister() L { return c.lister }

// The controller New wires looks once at start, with no event to bring it, and creates the
// Config; it follows the Config and the cluster's network, image and proxy configuration through
// a handler on each, and a mirror set added while the Config awaits its registry is judged at
// once, though the next probe is an hour away.
func TestTheRunningControllerCreatesTheConfigAndFollowsTheMirrorSets(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	samples := samplesfake.NewSimpleClientset()
	configClient := configfake.NewSimpleClientset()
	samplesInf := samplesinformers.NewSharedInformerFactory(samples, 0)
	configInf := configinformers.NewSharedInformerFactory(configClient, 0)
	var added [5]atomic.Int32
	configs, networks := samplesInf.Samples().V1().Configs(), configInf.Config().V1().Networks()
	images, proxies, tags := configInf.Config().V1().Images(), configInf.Config().V1().Proxies(), configInf.Config().V1().ImageTagMirrorSets()
	inf := Informers{
		Config:     counted[sampleslisters.ConfigLister]{configs.Informer(), configs.Lister(), &added[0]},
		Network:    counted[configlisters.NetworkLister]{networks.Informer(), networks.Lister(), &added[1]},
		Image:      counted[configlisters.ImageLister]{images.Informer(), images.Lister(), &added[2]},
		Proxy:      counted[configlisters.ProxyLister]{proxies.Informer(), proxies.Lister(), &added[3]},
		MirrorSets: mirrorsetinformers.New(counted[configlisters.ImageTagMirrorSetLister]{tags.Informer(), tags.Lister(), &added[4]}, nil, nil),
	}
	registryProbe := func(context.Context) error { return errors.New("connection refused") }
	addressProbe := func(context.Context, string) error { return nil }
	controller := New("amd64", x86(), registryProbe, target, addressProbe, time.Hour, inf, samples.SamplesV1(),
		events.NewInMemoryRecorder("test", clock.RealClock{}))
	for _, f := range []interface {
		Start(<-chan struct{})
		WaitForCacheSync(<-chan struct{}) map[reflect.Type]bool
	}{samplesInf, configInf} {
		f.Start(ctx.Done())
		f.WaitForCacheSync(ctx.Done())
	}
	go controller.Run(ctx, 1)

	waitFor(t, "the Config created Removed, awaiting the registry", func() bool {
		cfg, err := samples.SamplesV1().Configs().Get(ctx, names.ConfigName, metav1.GetOptions{})
		return err == nil && bootstrapstate.Of(cfg).AwaitingRegistry()
	})
	for i, what := range []string{"Config", "Network", "Image", "Proxy", "ImageTagMirrorSet"} {
		if n := added[i].Load(); n != 1 {
			t.Errorf("%d handlers on the %s informer, want 1", n, what)
		}
	}
	if _, err := configClient.ConfigV1().ImageTagMirrorSets().Create(ctx, rhMirror(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Config switched to Managed through the mirror set", func() bool {
		cfg, err := samples.SamplesV1().Configs().Get(ctx, names.ConfigName, metav1.GetOptions{})
		return err == nil && cfg.Spec.ManagementState == operatorv1.Managed && cfg.Annotations[bootstrapstate.ReasonAnnotation] == configspec.ReasonThroughMirrorSets
	})
}

// waitFor polls ok until it holds, and fails the test after a while.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
