package samples

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	imagefake "github.com/openshift/client-go/image/clientset/versioned/fake"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	templatefake "github.com/openshift/client-go/template/clientset/versioned/fake"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// verdicts are usability verdicts a test sets.
type verdicts struct {
	mu       sync.Mutex
	ready    bool
	marks    map[string]desired.Marks // by kind/name
	onChange func(kind, name string)
	// read counts the reads of marks: each sample a sync decides on reads its marks.
	read int
}

func (v *verdicts) reads() int { v.mu.Lock(); defer v.mu.Unlock(); return v.read }

func (v *verdicts) Ready() bool { v.mu.Lock(); defer v.mu.Unlock(); return v.ready }
func (v *verdicts) Marks(kind, name string) desired.Marks {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.read++
	return v.marks[kind+"/"+name]
}
func (v *verdicts) OnChange(f func(kind, name string)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.onChange = f
}

func (v *verdicts) hooked() bool { v.mu.Lock(); defer v.mu.Unlock(); return v.onChange != nil }

// set makes the verdicts ready with marks and tells the controller of kind/name.
func (v *verdicts) set(kind, name string, marks desired.Marks) {
	v.mu.Lock()
	v.ready = true
	if v.marks == nil {
		v.marks = map[string]desired.Marks{}
	}
	v.marks[kind+"/"+name] = marks
	onChange := v.onChange
	v.mu.Unlock()
	if onChange != nil {
		onChange(kind, name)
	}
}

// grant is the access verdict on the samples grant.
type grant struct {
	state    atomic.Value // access.State
	onChange atomic.Pointer[func()]
}

func newGrant(s access.State) *grant { g := &grant{}; g.state.Store(s); return g }

func (g *grant) Verdict() access.Verdict {
	return access.Verdict{access.Samples: g.state.Load().(access.State)}
}
func (g *grant) OnChange(f func()) { g.onChange.Store(&f) }

// turn changes the verdict and tells the controller.
func (g *grant) turn(s access.State) {
	g.state.Store(s)
	if f := g.onChange.Load(); f != nil {
		(*f)()
	}
}

// retryTriggers is what tells of a change that may end a refusal.
type retryTriggers struct{ onChange atomic.Pointer[func()] }

func (r *retryTriggers) OnChange(f func()) error { r.onChange.Store(&f); return nil }

func (r *retryTriggers) fire() {
	if f := r.onChange.Load(); f != nil {
		(*f)()
	}
}

// fixture is a samples controller over fake clientsets, its caches synced.
type fixture struct {
	c         *Controller
	deps      Deps
	inv       *inventory.Inventory
	samples   *samplesfake.Clientset
	images    *imagefake.Clientset
	templates *templatefake.Clientset
	imageCfg  *configfake.Clientset
	recorder  events.InMemoryRecorder
	verdicts  *verdicts
	grant     *grant
	triggers  *retryTriggers
	// seen counts the actions of the images and templates clientsets writes has read.
	seen [2]int
	// version is the fake server's last resourceVersion.
	version    atomic.Int64
	mu         sync.Mutex
	normalized []string
	overBudget []string
}

func managedConfig() *samplesv1.Config {
	return &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName, UID: "uid-1", ResourceVersion: "1"},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
	}
}

// newFixture holds cfg (none when nil) and objects, with the first verdicts made and the grant
// found.
func newFixture(t *testing.T, cfg *samplesv1.Config, objects ...runtime.Object) *fixture {
	t.Helper()
	inv, err := configspectest.X86Only{}.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureOver(t, configspectest.X86Only{Inventory: inv}, cfg, objects...)
}

// newFixtureOver is newFixture with the inventories given; inv is their x86_64 one.
func newFixtureOver(t *testing.T, inventories configspec.Inventories, cfg *samplesv1.Config, objects ...runtime.Object) *fixture {
	t.Helper()
	inv, err := inventories.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	var sampleObjs, imageObjs, templateObjs, configObjs []runtime.Object
	if cfg != nil {
		sampleObjs = append(sampleObjs, cfg)
	}
	for _, o := range objects {
		switch o.(type) {
		case *imagev1.ImageStream:
			imageObjs = append(imageObjs, o)
		case *templatev1.Template:
			templateObjs = append(templateObjs, o)
		case *configv1.Image:
			configObjs = append(configObjs, o)
		default:
			t.Fatalf("no fake clientset for %T", o)
		}
	}
	f := &fixture{
		inv:       inv,
		samples:   samplesfake.NewSimpleClientset(sampleObjs...),
		images:    imagefake.NewSimpleClientset(imageObjs...),
		templates: templatefake.NewSimpleClientset(templateObjs...),
		imageCfg:  configfake.NewSimpleClientset(configObjs...),
		recorder:  events.NewInMemoryRecorder("test", clock.RealClock{}),
		verdicts:  &verdicts{ready: true},
		grant:     newGrant(access.Granted),
		triggers:  &retryTriggers{},
	}
	// The server gives each write a new resourceVersion; the fake tracker keeps the one sent, and
	// the cache of the operator's own writes goes by it.
	f.version.Store(100)
	stamp := func(a clienttesting.Action) (bool, runtime.Object, error) {
		if o, ok := a.(interface{ GetObject() runtime.Object }); ok {
			o.GetObject().(metav1.Object).SetResourceVersion(strconv.FormatInt(f.version.Add(1), 10))
		}
		return false, nil, nil
	}
	for _, client := range []*clienttesting.Fake{&f.images.Fake, &f.templates.Fake} {
		client.PrependReactor("create", "*", stamp)
		client.PrependReactor("update", "*", stamp)
	}
	samplesInf := samplesinformers.NewSharedInformerFactory(f.samples, 0)
	configInf := configinformers.NewSharedInformerFactory(f.imageCfg, 0)
	imageInf := imageinformers.NewSharedInformerFactory(f.images, 0)
	templateInf := templateinformers.NewSharedInformerFactory(f.templates, 0)
	templateInformer := templateInf.Template().V1().Templates()
	// As the operator's: the cache keeps digests of a template's content (desired.TrimTemplate).
	if err := templateInformer.Informer().SetTransform(func(obj interface{}) (interface{}, error) {
		if t, ok := obj.(*templatev1.Template); ok {
			desired.TrimTemplate(t)
		}
		return obj, nil
	}); err != nil {
		t.Fatal(err)
	}
	f.deps = Deps{
		Version:     "v1",
		Inventories: inventories,
		Informers: Informers{
			Config: samplesInf.Samples().V1().Configs(), ImageConfig: configInf.Config().V1().Images(),
			ImageStream: imageInf.Image().V1().ImageStreams(), Template: templateInformer,
		},
		ImageClient:    f.images.ImageV1(),
		TemplateClient: f.templates.TemplateV1(),
		Records:        samplewriter.NewBook(clock.RealClock{}, time.Hour),
		Refusals:       refusal.NewStore(clock.RealClock{}),
		RetryRefused:   f.triggers,
		Access:         f.grant,
		Activity:       &Activity{},
		Usability:      f.verdicts,
		Normalized: func(kind, name, field string) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.normalized = append(f.normalized, kind+"/"+name+" "+field)
		},
		OverBudget: func(kind, name string) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.overBudget = append(f.overBudget, kind+"/"+name)
		},
		Recorder: f.recorder,
	}
	f.c = newController(f.deps)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factories := []interface {
		Start(<-chan struct{})
		WaitForCacheSync(<-chan struct{}) map[reflect.Type]bool
	}{samplesInf, configInf, imageInf, templateInf}
	// All started before any is waited for: each wait polls at 100 ms.
	for _, inf := range factories {
		inf.Start(ctx.Done())
	}
	for _, inf := range factories {
		inf.WaitForCacheSync(ctx.Done())
	}
	return f
}

// delayed is a key the sync asked to see again, and when.
type delayed struct {
	key   string
	after time.Duration
}

// recordingQueue records what a sync adds to its queue.
type recordingQueue struct {
	workqueue.RateLimitingInterface
	mu    sync.Mutex
	added []delayed
}

func (q *recordingQueue) Add(key interface{}) { q.AddAfter(key, 0) }
func (q *recordingQueue) AddAfter(key interface{}, after time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.added = append(q.added, delayed{key.(string), after})
}

// syncContext is the sync context of one queue key, recording what the sync queues.
type syncContext struct {
	factory.SyncContext
	key   string
	queue *recordingQueue
}

func (s syncContext) QueueKey() string                       { return s.key }
func (s syncContext) Queue() workqueue.RateLimitingInterface { return s.queue }

// sync runs one sync of key, failing the test on an error, and returns what it queued.
func (f *fixture) sync(t *testing.T, key string) []delayed {
	t.Helper()
	q := &recordingQueue{}
	if err := f.c.sync(context.Background(), syncContext{factory.NewSyncContext("test", f.recorder), key, q}); err != nil {
		t.Fatalf("sync %s: %v", key, err)
	}
	return q.added
}

// writes are the requests sent for the samples since the last call, as "verb resource/name".
// Actions are never cleared, only read past: a running controller may send one meanwhile.
func (f *fixture) writes() []string {
	var out []string
	for i, fake := range []*clienttesting.Fake{&f.images.Fake, &f.templates.Fake} {
		actions := fake.Actions()
		for _, a := range actions[f.seen[i]:] {
			name := ""
			switch a := a.(type) {
			case clienttesting.CreateAction:
				name = a.GetObject().(metav1.Object).GetName()
			case clienttesting.UpdateAction:
				name = a.GetObject().(metav1.Object).GetName()
			case clienttesting.GetAction:
				name = a.GetName()
			case clienttesting.DeleteAction:
				name = a.GetName()
			default:
				continue // the informers' list and watch
			}
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource+"/"+name)
		}
		f.seen[i] = len(actions)
	}
	return out
}

// events are the reasons of the Events recorded since the last call.
func (f *fixture) events() []string {
	var out []string
	for _, e := range f.recorder.Events() {
		out = append(out, e.Reason)
	}
	f.recorder = events.NewInMemoryRecorder("test", clock.RealClock{})
	return out
}

// stream is the imagestream name as the fake server holds it, read past the recorded actions.
func (f *fixture) stream(t *testing.T, name string) *imagev1.ImageStream {
	t.Helper()
	obj, err := f.images.Tracker().Get(imagev1.SchemeGroupVersion.WithResource("imagestreams"), names.SamplesNamespace, name)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*imagev1.ImageStream).DeepCopy()
}

func (f *fixture) template(t *testing.T, name string) *templatev1.Template {
	t.Helper()
	obj, err := f.templates.Tracker().Get(templatev1.SchemeGroupVersion.WithResource("templates"), names.SamplesNamespace, name)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*templatev1.Template).DeepCopy()
}

// editStream changes the live stream as an admin would, past the recorded actions, and waits
// until the cache shows it.
func (f *fixture) editStream(t *testing.T, name string, edit func(*imagev1.ImageStream)) {
	t.Helper()
	is := f.stream(t, name)
	edit(is)
	is.ResourceVersion = strconv.FormatInt(f.version.Add(1), 10)
	if err := f.images.Tracker().Update(imagev1.SchemeGroupVersion.WithResource("imagestreams"), is, names.SamplesNamespace); err != nil {
		t.Fatal(err)
	}
	f.waitFor(t, "the caches to show the change", func() bool {
		got, err := f.deps.Informers.ImageStream.Lister().ImageStreams(names.SamplesNamespace).Get(name)
		return err == nil && atLeast(got.ResourceVersion, is.ResourceVersion)
	})
}

func (f *fixture) editTemplate(t *testing.T, name string, edit func(*templatev1.Template)) {
	t.Helper()
	tpl := f.template(t, name)
	edit(tpl)
	tpl.ResourceVersion = strconv.FormatInt(f.version.Add(1), 10)
	if err := f.templates.Tracker().Update(templatev1.SchemeGroupVersion.WithResource("templates"), tpl, names.SamplesNamespace); err != nil {
		t.Fatal(err)
	}
	f.waitFor(t, "the caches to show the change", func() bool {
		got, err := f.deps.Informers.Template.Lister().Templates(names.SamplesNamespace).Get(name)
		return err == nil && atLeast(got.ResourceVersion, tpl.ResourceVersion)
	})
}

// atLeast: resourceVersion got is edited's or later (a running controller may have reverted it).
func atLeast(got, edited string) bool {
	g, _ := strconv.Atoi(got)
	e, _ := strconv.Atoi(edited)
	return g >= e
}

// setConfig replaces the Config and waits until the cache shows it.
func (f *fixture) setConfig(t *testing.T, edit func(*samplesv1.Config)) {
	t.Helper()
	cfg, err := f.samples.SamplesV1().Configs().Get(context.Background(), names.ConfigName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edit(cfg)
	n, _ := strconv.Atoi(cfg.ResourceVersion)
	cfg.ResourceVersion = strconv.Itoa(n + 1)
	if _, err := f.samples.SamplesV1().Configs().Update(context.Background(), cfg, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitFor(t, "the caches to show the change", func() bool {
		got, err := f.deps.Informers.Config.Lister().Get(names.ConfigName)
		return err == nil && got.ResourceVersion == cfg.ResourceVersion
	})
}

// settle syncs the key and waits until the cache shows what the sync wrote.
func (f *fixture) settle(t *testing.T, key string) []string {
	t.Helper()
	f.sync(t, key)
	writes := f.writes()
	f.waitForCaches(t)
	return writes
}

// waitForCaches waits until the caches show every sample the fake server holds, as it holds it.
func (f *fixture) waitForCaches(t *testing.T) {
	t.Helper()
	f.waitFor(t, "the caches to show the change", func() bool {
		streams, _ := f.images.Tracker().List(imagev1.SchemeGroupVersion.WithResource("imagestreams"), imagev1.SchemeGroupVersion.WithKind("ImageStream"), names.SamplesNamespace)
		for _, is := range streams.(*imagev1.ImageStreamList).Items {
			got, err := f.deps.Informers.ImageStream.Lister().ImageStreams(names.SamplesNamespace).Get(is.Name)
			if err != nil || got.ResourceVersion != is.ResourceVersion {
				return false
			}
		}
		templates, _ := f.templates.Tracker().List(templatev1.SchemeGroupVersion.WithResource("templates"), templatev1.SchemeGroupVersion.WithKind("Template"), names.SamplesNamespace)
		for _, tpl := range templates.(*templatev1.TemplateList).Items {
			got, err := f.deps.Informers.Template.Lister().Templates(names.SamplesNamespace).Get(tpl.Name)
			if err != nil || got.ResourceVersion != tpl.ResourceVersion {
				return false
			}
		}
		return true
	})
	f.writes()
}

// waitFor polls done for up to 10 s; what names what it waits for, for the failure.
func (f *fixture) waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func streamKey(name string) string   { return imageStreamPrefix + name }
func templateKey(name string) string { return templatePrefix + name }

func same(got, want []string) bool { return strings.Join(got, "\n") == strings.Join(want, "\n") }

func describe(items []string) string {
	if len(items) == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%q", items)
}

// factoryContext is a sync context recording Events in f.
func factoryContext(f *fixture) factory.SyncContext {
	return factory.NewSyncContext("test", f.recorder)
}
