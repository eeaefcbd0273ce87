package bootstrap

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/mirrorsetinformers"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

const (
	target = "registry.redhat.io:443"
	base   = time.Minute
)

// x86 is the x86_64 inventory, loaded once: each sync reads it, and loading it each time would
// take most of the tests' time.
var x86 = sync.OnceValue(func() configspectest.X86Only {
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		panic(err)
	}
	return configspectest.X86Only{Inventory: inv}
})

// queue records the delays a sync asks to be brought back after; the queue itself is never run.
type queue struct {
	workqueue.RateLimitingInterface
	mu    sync.Mutex
	after []time.Duration
}

func (q *queue) AddAfter(_ interface{}, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.after = append(q.after, d)
}

// taken returns the delays asked for since the last call.
func (q *queue) taken() []time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.after
	q.after = nil
	return out
}

type syncContext struct {
	q        *queue
	recorder events.Recorder
}

func (s syncContext) Queue() workqueue.RateLimitingInterface { return s.q }
func (s syncContext) QueueKey() string                       { return factory.DefaultQueueKey }
func (s syncContext) Recorder() events.Recorder              { return s.recorder }

// fixture is the controller over a fake samples clientset whose caches the test fills by hand
// (the Config it creates or writes shows in them only when the test says so), a fake clock, and
// probes that answer as the test says.
type fixture struct {
	c        *Controller
	samples  *samplesfake.Clientset
	inf      Informers
	clock    *clocktesting.FakeClock
	recorder events.InMemoryRecorder
	queue    *queue
	syncCtx  syncContext
	seen     int

	mu sync.Mutex
	// probeErr is what the registry probe answers; probed counts its calls.
	probeErr error
	probed   int
	// answering are the addresses the address probe finds answering; dialed are those it was asked.
	answering func(string) bool
	dialed    []string
}

type options struct {
	cfg *samplesv1.Config
	// mirrorSets are the cluster's; unsettled leaves their informer unread.
	mirrorSets []runtime.Object
	unsettled  bool
}

func newFixture(t *testing.T, o options) *fixture {
	t.Helper()
	f := &fixture{
		clock:     clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		recorder:  events.NewInMemoryRecorder("test", clock.RealClock{}),
		queue:     &queue{RateLimitingInterface: workqueue.NewRateLimitingQueue(workqueue.DefaultControllerRateLimiter())},
		answering: func(string) bool { return true },
	}
	t.Cleanup(f.queue.ShutDown)
	f.syncCtx = syncContext{q: f.queue, recorder: f.recorder}
	var objs []runtime.Object
	if o.cfg != nil {
		objs = append(objs, o.cfg)
	}
	f.samples = samplesfake.NewSimpleClientset(objs...)
	// The Config's and the cluster configuration's informers never run: their caches hold what
	// the test puts in them.
	samplesInf := samplesinformers.NewSharedInformerFactory(samplesfake.NewSimpleClientset(), 0)
	configInf := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(), 0)
	mirrorInf := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(o.mirrorSets...), 0)
	f.inf = Informers{
		Config: samplesInf.Samples().V1().Configs(), Network: configInf.Config().V1().Networks(),
		Image: configInf.Config().V1().Images(), Proxy: configInf.Config().V1().Proxies(),
		MirrorSets: mirrorsetinformers.New(mirrorInf.Config().V1().ImageTagMirrorSets(), nil, nil),
	}
	if !o.unsettled {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		mirrorInf.Start(ctx.Done())
		// Polled more often than WaitForCacheSync does: every test waits for it.
		for !f.inf.MirrorSets.Settled() {
			time.Sleep(time.Millisecond)
		}
	}
	if o.cfg != nil {
		f.cache(o.cfg)
	}
	f.c = newController("amd64", x86(), f.probe, target, f.probeAddress, base, f.inf, f.samples.SamplesV1())
	f.c.now = f.clock.Now
	return f
}

func (f *fixture) probe(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.probed++
	return f.probeErr
}

func (f *fixture) probeAddress(_ context.Context, address string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dialed = append(f.dialed, address)
	if f.answering(address) {
		return nil
	}
	return errors.New("dial tcp " + address + ": i/o timeout")
}

// probes returns the registry probes and the addresses dialed since the last call.
func (f *fixture) probes() (int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, dialed := f.probed, f.dialed
	f.probed, f.dialed = 0, nil
	return n, dialed
}

// cache puts objects into the caches of the informers the controller reads, as their events would.
func (f *fixture) cache(objs ...runtime.Object) {
	for _, o := range objs {
		var store cache.Store
		switch o.(type) {
		case *samplesv1.Config:
			store = f.inf.Config.Informer().GetStore()
		case *configv1.Network:
			store = f.inf.Network.Informer().GetStore()
		case *configv1.Image:
			store = f.inf.Image.Informer().GetStore()
		case *configv1.Proxy:
			store = f.inf.Proxy.Informer().GetStore()
		}
		_ = store.Update(o.DeepCopyObject())
	}
}

// sync runs one sync, and returns its error and the writes it made.
func (f *fixture) sync() ([]clienttesting.Action, error) {
	return f.syncWith(context.Background())
}

func (f *fixture) syncWith(ctx context.Context) ([]clienttesting.Action, error) {
	f.samples.ClearActions()
	err := f.c.sync(ctx, f.syncCtx)
	var writes []clienttesting.Action
	for _, a := range f.samples.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			writes = append(writes, a)
		}
	}
	return writes, err
}

// told returns the events recorded since the last call, as "Type Reason: message".
func (f *fixture) told() []string {
	var out []string
	all := f.recorder.Events()
	for _, e := range all[f.seen:] {
		out = append(out, e.Type+" "+e.Reason+": "+e.Message)
	}
	f.seen = len(all)
	return out
}

// stored is the Config as the fake server holds it, put into the cache as its event would.
func (f *fixture) stored(t *testing.T) *samplesv1.Config {
	t.Helper()
	cfg, err := f.samples.SamplesV1().Configs().Get(context.Background(), names.ConfigName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the Config: %v", err)
	}
	f.cache(cfg)
	return cfg
}

// reasons are the events' types and reasons, without their messages.
func reasons(told []string) []string {
	var out []string
	for _, e := range told {
		out = append(out, strings.SplitN(e, ":", 2)[0])
	}
	return out
}

// fail makes every call of verb on the Configs fail with err.
func (f *fixture) fail(verb string, err error) {
	f.samples.PrependReactor(verb, "configs", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, err
	})
}
