package configstatuscontrol

import (
	"context"
	"reflect"
	"slices"
	"strings"
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
	imageinformersv1 "github.com/openshift/client-go/image/informers/externalversions/image/v1"
	operatorfake "github.com/openshift/client-go/operator/clientset/versioned/fake"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	templatefake "github.com/openshift/client-go/template/clientset/versioned/fake"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions"
	templateinformersv1 "github.com/openshift/client-go/template/informers/externalversions/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	coreinformersv1 "k8s.io/client-go/informers/core/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configstatus"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/informertest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/mirrorsetinformers"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// grants is an access verdict on both grants.
type grants struct{ samples, pull access.State }

func (g grants) Verdict() access.Verdict {
	return access.Verdict{access.Samples: g.samples, access.PullSecret: g.pull}
}
func (grants) InstalledByOLM() bool { return false }
func (grants) OnChange(func())      {}

var allGranted = grants{access.Granted, access.Granted}

// fixture is a status controller over fake clientsets holding the objects given, its caches
// synced, synced by hand.
type fixture struct {
	c         *Controller
	samples   *samplesfake.Clientset
	templates *templatefake.Clientset
	kube      *kubefake.Clientset
	informers Informers
	access    Access
	recorder  events.InMemoryRecorder
	refusals  *refusal.Store
	records   *samplewriter.Book
	syncCtx   factory.SyncContext
}

func newFixture(t *testing.T, cfg *samplesv1.Config, g grants, objects ...runtime.Object) *fixture {
	t.Helper()
	return newFixtureJudgedBy(t, cfg, g, markedAs{}, objects...)
}

// newFixtureJudgedBy is newFixture with the access and usability verdicts given.
func newFixtureJudgedBy(t *testing.T, cfg *samplesv1.Config, acc Access, verdicts Usability, objects ...runtime.Object) *fixture {
	t.Helper()
	var sampleObjs, imageObjs, templateObjs, kubeObjs, configObjs []runtime.Object
	if cfg != nil {
		sampleObjs = append(sampleObjs, cfg)
	}
	for _, o := range objects {
		switch o.(type) {
		case *corev1.Secret, *corev1.ConfigMap:
			kubeObjs = append(kubeObjs, o)
		case *configv1.ImageTagMirrorSet, *configv1.Image:
			configObjs = append(configObjs, o)
		case *templatev1.Template:
			templateObjs = append(templateObjs, o)
		case *imagev1.ImageStream:
			imageObjs = append(imageObjs, o)
		default:
			t.Fatalf("no fake clientset for %T", o)
		}
	}
	f := &fixture{
		samples:   samplesfake.NewSimpleClientset(sampleObjs...),
		templates: templatefake.NewSimpleClientset(templateObjs...),
		kube:      kubefake.NewSimpleClientset(kubeObjs...),
		access:    acc,
		recorder:  events.NewInMemoryRecorder("test", clock.RealClock{}),
		refusals:  refusal.NewStore(clock.RealClock{}),
		records:   samplewriter.NewBook(clock.RealClock{}, time.Minute),
	}
	samplesInf := samplesinformers.NewSharedInformerFactory(f.samples, 0)
	configInf := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(configObjs...), 0)
	operatorInf := operatorinformers.NewSharedInformerFactory(operatorfake.NewSimpleClientset(), 0)
	imageInf := imageinformers.NewSharedInformerFactory(imagefake.NewSimpleClientset(imageObjs...), 0)
	templateInf := templateinformers.NewSharedInformerFactory(f.templates, 0)
	kubeInf := kubeinformers.NewSharedInformerFactory(f.kube, 0)
	f.informers = Informers{
		Config: samplesInf.Samples().V1().Configs(), ImageConfig: configInf.Config().V1().Images(),
		ImageStream: imageInf.Image().V1().ImageStreams(), Template: templateInf.Template().V1().Templates(),
		ConfigMap: kubeInf.Core().V1().ConfigMaps(), Secret: kubeInf.Core().V1().Secrets(),
		MirrorSets: mirrorsetinformers.New(configInf.Config().V1().ImageTagMirrorSets(), configInf.Config().V1().ImageDigestMirrorSets(),
			operatorInf.Operator().V1alpha1().ImageContentSourcePolicies()),
		Usability: verdicts,
	}
	f.c = newController("v1", configspectest.X86Only{}, f.informers, f.records, acc, f.refusals, f.samples.SamplesV1(), clock.RealClock{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, inf := range []interface {
		Start(<-chan struct{})
		WaitForCacheSync(<-chan struct{}) map[reflect.Type]bool
	}{samplesInf, configInf, operatorInf, imageInf, templateInf, kubeInf} {
		inf.Start(ctx.Done())
		inf.WaitForCacheSync(ctx.Done())
	}
	f.syncCtx = factory.NewSyncContext("test", f.recorder)
	return f
}

// sync runs one sync and returns the status it wrote, nil when it wrote none.
func (f *fixture) sync(t *testing.T) *samplesv1.ConfigStatus {
	t.Helper()
	f.samples.ClearActions()
	if err := f.c.sync(context.Background(), f.syncCtx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	var written *samplesv1.ConfigStatus
	for _, a := range f.samples.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && u.GetSubresource() == "status" {
			written = &u.GetObject().(*samplesv1.Config).Status
		}
	}
	return written
}

func conditionOf(st *samplesv1.ConfigStatus, t samplesv1.ConfigConditionType) samplesv1.ConfigCondition {
	if c := configstatus.Condition(st, t); c != nil {
		return *c
	}
	return samplesv1.ConfigCondition{}
}

// installedObjects is every sample of the x86_64 inventory as a Managed Config wants it, and
// that Config.
func installedObjects() (*samplesv1.Config, []runtime.Object) {
	cfg, _, streams, templates := installed(markedAs{})
	var objects []runtime.Object
	for _, o := range streams.List() {
		objects = append(objects, copyStream(o))
	}
	for _, o := range templates.List() {
		objects = append(objects, copyTemplate(o))
	}
	return cfg, objects
}

func pullSecret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: imports.PullSecretNamespace, Name: imports.PullSecretName},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.redhat.io":{"auth":"dTpw"}}}`)},
	}
}

// Without a Config there is nothing to write, and no error.
func TestNoConfigNoStatus(t *testing.T) {
	f := newFixture(t, nil, allGranted)
	if st := f.sync(t); st != nil {
		t.Errorf("wrote %+v without a Config", st)
	}
}

// Until both grants are judged there is nothing to tell: the verdict's change brings the sync back.
func TestAGrantNotYetJudgedWritesNothing(t *testing.T) {
	cfg, objects := installedObjects()
	for _, g := range []grants{{access.Granted, access.Pending}, {access.Pending, access.Granted}} {
		f := newFixture(t, cfg.DeepCopy(), g, objects...)
		if st := f.sync(t); st != nil {
			t.Errorf("samples %s, pull secret %s: wrote a status", g.samples, g.pull)
		}
	}
}

// The samples are counted only with access to them, and the pull secret read only with access
// to it; what is missing is said instead.
func TestTheStatusSaysWhatItCanSee(t *testing.T) {
	cfg, objects := installedObjects()
	f := newFixture(t, cfg.DeepCopy(), allGranted, append(objects, pullSecret())...)
	st := f.sync(t)
	if st == nil {
		t.Fatal("no status written")
	}
	if c := conditionOf(st, samplesv1.SamplesExist); c.Status != corev1.ConditionTrue {
		t.Errorf("every sample in place: SamplesExist %s %q", c.Status, c.Message)
	}
	if c := conditionOf(st, samplesv1.ImportCredentialsExist); c.Status != corev1.ConditionTrue {
		t.Errorf("the pull secret in place: ImportCredentialsExist %s %q", c.Status, c.Message)
	}
	// The write's transitions are told once it went through.
	var transitions []string
	for _, e := range f.recorder.Events() {
		transitions = append(transitions, e.Reason)
	}
	if !slices.Contains(transitions, "ManagementStateChanged") || !slices.Contains(transitions, "ConditionChanged") {
		t.Errorf("after the first status write the events were %v, want the management state and the conditions told", transitions)
	}

	f = newFixture(t, cfg.DeepCopy(), allGranted, objects...)
	if c := conditionOf(f.sync(t), samplesv1.ImportCredentialsExist); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "does not exist") {
		t.Errorf("no pull secret: ImportCredentialsExist %s %q", c.Status, c.Message)
	}

	f = newFixture(t, cfg.DeepCopy(), grants{access.Missing, access.Missing}, append(objects, pullSecret())...)
	st = f.sync(t)
	if c := conditionOf(st, samplesv1.SamplesExist); c.Status == corev1.ConditionTrue {
		t.Errorf("without access to the samples: SamplesExist %s %q", c.Status, c.Message)
	}
	if c := conditionOf(st, samplesv1.ImportCredentialsExist); c.Status == corev1.ConditionTrue {
		t.Errorf("without access to the pull secret: ImportCredentialsExist %s %q", c.Status, c.Message)
	}
}

// A status as computed is not written again.
func TestAStatusAsComputedIsNotWrittenAgain(t *testing.T) {
	cfg, objects := installedObjects()
	f := newFixture(t, cfg.DeepCopy(), allGranted, append(objects, pullSecret())...)
	st := f.sync(t)
	if st == nil {
		t.Fatal("no status written")
	}
	again := cfg.DeepCopy()
	again.Status = *st
	f = newFixture(t, again, allGranted, append(objects, pullSecret())...)
	if st := f.sync(t); st != nil {
		t.Errorf("the status was written again as it was")
	}
}

// A refused write is reported while the Config is Managed or its samples are being removed,
// not while it is Unmanaged.
func TestRefusedWritesAreReportedWhileManaged(t *testing.T) {
	cfg, objects := installedObjects()
	// The first stream is missing: its create is refused.
	refused := objects[0].(*imagev1.ImageStream).Name
	objects = objects[1:]
	for _, state := range []operatorv1.ManagementState{operatorv1.Managed, operatorv1.Removed, operatorv1.Unmanaged} {
		c := cfg.DeepCopy()
		c.Spec.ManagementState = state
		f := newFixture(t, c, allGranted, append(objects, pullSecret())...)
		f.refusals.Refused(samplewriter.ImageStreamKind, refused, "create", "create", refusal.Refusal{Code: 403, Reason: metav1.StatusReasonForbidden, Message: "exceeded quota"})
		st := f.sync(t)
		told := st != nil && strings.Contains(conditionOf(st, samplesv1.SamplesExist).Message+conditionOf(st, samplesv1.RemovePending).Message, "exceeded quota")
		if want := state != operatorv1.Unmanaged; told != want {
			t.Errorf("%s: the refusal told %v, want %v; status %+v", state, told, want, st)
		}
		// A refusal reported at once leaves nothing to look at later.
		if n := f.syncCtx.Queue().Len(); n != 0 {
			t.Errorf("%s: %d keys queued after a refusal reported at once", state, n)
		}
	}
}

// A sample the operator stopped reverting is named in the status.
func TestASampleHeldBackIsNamed(t *testing.T) {
	cfg, objects := installedObjects()
	f := newFixture(t, cfg.DeepCopy(), allGranted, append(objects, pullSecret())...)
	for range samplewriter.RevertBudget {
		f.records.ImageStreams.Reverted("ruby")
	}
	st := f.sync(t)
	if st == nil || !strings.Contains(conditionOf(st, samplesv1.SamplesExist).Message, "ruby") {
		t.Errorf("ruby held back: status %+v does not name it", st)
	}
}

// An import error record of a managed imagestream is told while Managed.
func TestImportErrorsAreToldWhileManaged(t *testing.T) {
	cfg, objects := installedObjects()
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: names.OperatorNamespace, Name: "ruby",
		Labels: map[string]string{imports.ErrorLabel: "true"}}}
	f := newFixture(t, cfg.DeepCopy(), allGranted, append(objects, pullSecret(), record)...)
	if c := conditionOf(f.sync(t), samplesv1.ImportImageErrorsExist); c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, "ruby") {
		t.Errorf("ruby's import failing: ImportImageErrorsExist %s %q", c.Status, c.Message)
	}
}

// What the mirror sets do for the samples is said, and told once, while the Config is Managed;
// an Unmanaged Config installs nothing, so there is nothing to say.
func TestWhatTheMirrorSetsDoIsSaidWhileManaged(t *testing.T) {
	cfg, objects := installedObjects()
	mirror := &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "rh"}, Spec: configv1.ImageTagMirrorSetSpec{
		ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"127.0.0.1:5000/rh"}}}}}
	for _, tc := range []struct {
		name    string
		state   operatorv1.ManagementState
		objects []runtime.Object
		said    bool
	}{
		{"Managed, a mirror set", operatorv1.Managed, append(objects, pullSecret(), mirror), true},
		{"Managed, none", operatorv1.Managed, append(objects, pullSecret()), false},
		{"Unmanaged, a mirror set", operatorv1.Unmanaged, append(objects, pullSecret(), mirror), false},
	} {
		c := cfg.DeepCopy()
		c.Spec.ManagementState = tc.state
		f := newFixture(t, c, allGranted, tc.objects...)
		st := f.sync(t)
		said := st != nil && strings.Contains(conditionOf(st, samplesv1.SamplesExist).Message, "mirror sets (ImageTagMirrorSet/rh)")
		var told []string
		for _, e := range f.recorder.Events() {
			if strings.Contains(e.Reason, "Mirror") {
				told = append(told, e.Reason)
			}
		}
		if said != tc.said || (len(told) == 1) != tc.said || len(told) > 1 {
			t.Errorf("%s: SamplesExist says the mirror set %v, events %v; want said and told %v; %q", tc.name, said, told, tc.said, conditionOf(st, samplesv1.SamplesExist).Message)
		}
	}
}

type countedStreams struct {
	imageinformersv1.ImageStreamInformer
	added *atomic.Int32
}

func (c countedStreams) Informer() cache.SharedIndexInformer {
	return informertest.Registrations{SharedIndexInformer: c.ImageStreamInformer.Informer(), Added: c.added}
}

type countedTemplates struct {
	templateinformersv1.TemplateInformer
	added *atomic.Int32
}

func (c countedTemplates) Informer() cache.SharedIndexInformer {
	return informertest.Registrations{SharedIndexInformer: c.TemplateInformer.Informer(), Added: c.added}
}

type countedSecrets struct {
	coreinformersv1.SecretInformer
	added *atomic.Int32
}

func (c countedSecrets) Informer() cache.SharedIndexInformer {
	return informertest.Registrations{SharedIndexInformer: c.SecretInformer.Informer(), Added: c.added}
}

// run starts the controller New wires over the fixture's informers, as the operator does, once
// each of the samples' and the pull secret's informers has its handler; it returns the Config's
// status as the fake server holds it.
func (f *fixture) run(t *testing.T) func() samplesv1.ConfigStatus {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var streams, templates, secrets atomic.Int32
	inf := f.informers
	inf.ImageStream = countedStreams{inf.ImageStream, &streams}
	inf.Template = countedTemplates{inf.Template, &templates}
	inf.Secret = countedSecrets{inf.Secret, &secrets}
	go New("v1", configspectest.X86Only{}, inf, f.records, f.access, f.refusals, f.samples.SamplesV1(), f.recorder, clock.RealClock{}).Run(ctx, 1)
	// A change is followed only through a handler: without this wait, a sync that something
	// else brought may happen to see it.
	deadline := time.Now().Add(10 * time.Second)
	for streams.Load() != 1 || templates.Load() != 1 || secrets.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("handlers added: %d on the imagestreams, %d on the templates, %d on the pull secret; want one each",
				streams.Load(), templates.Load(), secrets.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func() samplesv1.ConfigStatus {
		cfg, err := f.samples.SamplesV1().Configs().Get(ctx, names.ConfigName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading the Config: %v", err)
		}
		return cfg.Status
	}
}

// waitFor polls the status until ok holds, and fails the test with what was seen after a while.
func waitFor(t *testing.T, status func() samplesv1.ConfigStatus, what string, ok func(samplesv1.ConfigStatus) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := status()
		if ok(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the status did not follow; it is %+v", what, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The controller New wires looks again when a sample or the pull secret changes, though the
// Config does not: its handlers are added once it runs, and each informer must have one.
func TestTheRunningControllerFollowsTheSamplesAndThePullSecret(t *testing.T) {
	cfg, objects := installedObjects()
	f := newFixture(t, cfg.DeepCopy(), allGranted, objects...)
	status := f.run(t)
	waitFor(t, status, "first sync, no pull secret", func(st samplesv1.ConfigStatus) bool {
		return conditionOf(&st, samplesv1.SamplesExist).Status == corev1.ConditionTrue &&
			conditionOf(&st, samplesv1.ImportCredentialsExist).Status == corev1.ConditionFalse
	})

	if _, err := f.kube.CoreV1().Secrets(imports.PullSecretNamespace).Create(context.Background(), pullSecret(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, status, "the pull secret created", func(st samplesv1.ConfigStatus) bool {
		return conditionOf(&st, samplesv1.ImportCredentialsExist).Status == corev1.ConditionTrue
	})

	var template string
	for _, o := range objects {
		if tpl, ok := o.(*templatev1.Template); ok {
			template = tpl.Name
			break
		}
	}
	if err := f.templates.TemplateV1().Templates(names.SamplesNamespace).Delete(context.Background(), template, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, status, "template "+template+" deleted", func(st samplesv1.ConfigStatus) bool {
		return conditionOf(&st, samplesv1.SamplesExist).Status != corev1.ConditionTrue
	})
}
