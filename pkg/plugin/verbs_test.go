package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "github.com/openshift/api/apps/v1"
	buildv1 "github.com/openshift/api/build/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	projectv1 "github.com/openshift/api/project/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	appsfake "github.com/openshift/client-go/apps/clientset/versioned/fake"
	buildfake "github.com/openshift/client-go/build/clientset/versioned/fake"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	imagefake "github.com/openshift/client-go/image/clientset/versioned/fake"
	operatorfake "github.com/openshift/client-go/operator/clientset/versioned/fake"
	projectfake "github.com/openshift/client-go/project/clientset/versioned/fake"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	templatefake "github.com/openshift/client-go/template/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/plugin/plugintest"
)

// fakeCluster is a cluster of fake clientsets holding the samples Config, the objects given, and
// whatever a test creates.
type fakeCluster struct {
	kube     *kubefake.Clientset
	samples  *samplesfake.Clientset
	images   *imagefake.Clientset
	template *templatefake.Clientset
	build    *buildfake.Clientset
	apps     *appsfake.Clientset
	config   *configfake.Clientset
	operator *operatorfake.Clientset
	project  *projectfake.Clientset
}

func newFakeCluster(t *testing.T, streams ...*imagev1.ImageStream) *fakeCluster {
	t.Helper()
	var isObjs []kruntime.Object
	for _, is := range streams {
		isObjs = append(isObjs, is)
	}
	f := &fakeCluster{
		kube:     kubefake.NewClientset(),
		samples:  samplesfake.NewSimpleClientset(&samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: configName}, Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}}),
		images:   imagefake.NewSimpleClientset(isObjs...),
		template: templatefake.NewSimpleClientset(),
		build:    buildfake.NewSimpleClientset(),
		apps:     appsfake.NewSimpleClientset(),
		config:   configfake.NewSimpleClientset(),
		operator: operatorfake.NewSimpleClientset(),
		project:  projectfake.NewSimpleClientset(),
	}
	// Discovery shows every kind `usage` reads, as on a cluster with every capability on.
	for _, k := range (&options{clients: f.clients()}).workloadKinds() {
		f.serve(k.gvr)
	}
	return f
}

// serve adds gvr to what discovery shows.
func (f *fakeCluster) serve(gvr schema.GroupVersionResource) {
	gv := gvr.GroupVersion().String()
	for _, l := range f.kube.Resources {
		if l.GroupVersion == gv {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: gvr.Resource, Namespaced: true})
			return
		}
	}
	f.kube.Resources = append(f.kube.Resources, &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: gvr.Resource, Namespaced: true}}})
}

func (f *fakeCluster) clients() *clients {
	return &clients{kube: f.kube, samples: f.samples, images: f.images, template: f.template, build: f.build,
		apps: f.apps, config: f.config, operator: f.operator, project: f.project}
}

// fakes are every clientset, for reactors meant for all of them.
func (f *fakeCluster) fakes() []*clienttesting.Fake {
	return []*clienttesting.Fake{&f.kube.Fake, &f.samples.Fake, &f.images.Fake, &f.template.Fake, &f.build.Fake,
		&f.apps.Fake, &f.config.Fake, &f.operator.Fake, &f.project.Fake}
}

// forbid answers 403 to verb on resource when the action matches (nil: always), in every clientset.
func (f *fakeCluster) forbid(verb, resource string, when func(clienttesting.Action) bool) {
	for _, fake := range f.fakes() {
		fake.PrependReactor(verb, resource, func(a clienttesting.Action) (bool, kruntime.Object, error) {
			if when != nil && !when(a) {
				return false, nil, nil
			}
			gr := schema.GroupResource{Group: a.GetResource().Group, Resource: a.GetResource().Resource}
			return true, nil, apierrors.NewForbidden(gr, "", fmt.Errorf("the test forbids it"))
		})
	}
}

// allNamespaces matches a request made in all namespaces at once.
func allNamespaces(a clienttesting.Action) bool { return a.GetNamespace() == "" }

// run runs the plugin on the fake cluster.
func (f *fakeCluster) run(t *testing.T, args ...string) plugintest.Run {
	t.Helper()
	var out, errOut bytes.Buffer
	o := &options{out: &out, errOut: &errOut, clients: f.clients()}
	code := run(o, args)
	t.Logf("kubectl samples %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return plugintest.Run{Code: code, Out: out.String(), ErrOut: errOut.String()}
}

func (f *fakeCluster) namespace(t *testing.T, name string) {
	t.Helper()
	if _, err := f.kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// buildOn creates a BuildConfig in namespace whose strategy is the sample tag "stream:tag".
func (f *fakeCluster) buildOn(t *testing.T, namespace, name, streamTag string) {
	t.Helper()
	bc := &buildv1.BuildConfig{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: buildv1.BuildConfigSpec{CommonSpec: buildv1.CommonSpec{
		Strategy: buildv1.BuildStrategy{SourceStrategy: &buildv1.SourceBuildStrategy{From: corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: names.SamplesNamespace, Name: streamTag}}},
	}}}
	if _, err := f.build.BuildV1().BuildConfigs(namespace).Create(context.Background(), bc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (f *fakeCluster) cfg(t *testing.T) *samplesv1.Config {
	t.Helper()
	cfg, err := f.samples.SamplesV1().Configs().Get(context.Background(), configName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// rubyStream is a sample stream whose latest follows 3.3-ubi9, as the inventory's ruby does.
func rubyStream() *imagev1.ImageStream {
	return &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: names.SamplesNamespace, Labels: map[string]string{desired.ManagedLabel: "true"}},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
			{Name: "3.3-ubi9", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/ruby-33:latest"}},
			{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "3.3-ubi9"}},
		}},
	}
}

// Issue 48 item 6: a BuildConfig on ruby:latest uses ruby:3.3-ubi9, which latest follows;
// skipping 3.3-ubi9 would leave latest pointing at nothing.
func TestSkipRefusesATagThatATagInUseFollows(t *testing.T) {
	f := newFakeCluster(t, rubyStream())
	f.namespace(t, "team-a")
	f.buildOn(t, "team-a", "web", "ruby:latest")
	f.run(t, "skip", "ruby:3.3-ubi9").Expect(t, ExitFailing, "ruby:latest -> 3.3-ubi9", "not skipping ruby:3.3-ubi9: 1 object uses it")
	if a := f.cfg(t).Annotations; len(a) > 0 {
		t.Errorf("a refused skip changed the Config: %v", a)
	}
	f.run(t, "usage", "ruby:3.3-ubi9").Expect(t, ExitOK, "1 object uses ruby:3.3-ubi9")
}

// Issue 48 item 7: -n with no name (an unset variable) looks nowhere: an error for both verbs,
// never "no user found".
func TestANamespaceFlagNamingNothingIsAnError(t *testing.T) {
	f := newFakeCluster(t, rubyStream())
	f.namespace(t, "team-a")
	f.buildOn(t, "team-a", "web", "ruby:latest")
	for _, args := range [][]string{{"usage", "-n", ""}, {"usage", "ruby", "--namespace="}, {"skip", "ruby", "-n", ""}, {"usage", "-n", "team-a,"}} {
		r := f.run(t, args...)
		r.Expect(t, ExitUsage, "-n ")
		if strings.Contains(r.Out, "no user") || strings.Contains(r.Out, "changed the Config") {
			t.Errorf("%v looked nowhere and answered: %s", args, r.Out)
		}
	}
	if skipped := f.cfg(t).Spec.SkippedImagestreams; len(skipped) > 0 {
		t.Errorf("skip -n \"\" changed the Config: %v", skipped)
	}
}

// Issue 48 item 7: with -n, skip looks in the namespaces named and refuses unless they are all
// the cluster's: a user elsewhere was not counted.
func TestSkipWithNamespacesRefusesUnlessTheyAreEveryNamespace(t *testing.T) {
	f := newFakeCluster(t, rubyStream())
	for _, ns := range []string{"team-a", "team-b"} {
		f.namespace(t, ns)
	}
	f.buildOn(t, "team-b", "web", "ruby:latest")
	f.run(t, "skip", "ruby", "-n", "team-a").Expect(t, ExitFailing, "not seen: namespace team-b: not looked in (not named with -n)", "not every user could be seen")
	if skipped := f.cfg(t).Spec.SkippedImagestreams; len(skipped) > 0 {
		t.Fatalf("skip -n team-a skipped ruby, used in team-b: %v", skipped)
	}
	f.run(t, "usage", "ruby", "-n", "team-a").Expect(t, ExitOK, "no user of ruby found; looked in namespace team-a only (-n)")
	f.run(t, "usage", "ruby", "-n", "team-a, team-b").Expect(t, ExitOK, "1 object uses ruby", "looked in namespaces team-a, team-b only (-n)")
	// Naming every namespace is looking everywhere: the user in team-b is found.
	f.run(t, "skip", "ruby", "-n", "team-a,team-b").Expect(t, ExitFailing, "not skipping ruby: 1 object uses it")
	// Who may not list namespaces cannot tell there is no other.
	f.forbid("list", "namespaces", nil)
	f.run(t, "skip", "ruby", "-n", "team-a,team-b").Expect(t, ExitFailing, "namespaces not named with -n: not looked in, and the namespaces could not be listed", "forbidden")
}

// Issue 48 item 8: a developer who may read the samples in openshift and the workloads of their
// project, and nothing cluster-scoped, gets the users there and what could not be read.
func TestUsageAnswersADeveloperWhoMayNotReadTheConfig(t *testing.T) {
	f := newFakeCluster(t, rubyStream())
	for _, ns := range []string{"team-a", "team-b"} {
		f.namespace(t, ns)
		f.buildOn(t, ns, "web", "ruby:latest")
	}
	if _, err := f.project.ProjectV1().Projects().Create(context.Background(), &projectv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.forbid("get", "configs", nil)
	f.forbid("list", "namespaces", nil)
	// OpenShift lists everyone's own projects.
	f.forbid("list", "*", func(a clienttesting.Action) bool { return allNamespaces(a) && a.GetResource().Resource != "projects" })
	f.forbid("list", "*", func(a clienttesting.Action) bool { return a.GetNamespace() == "team-b" })
	r := f.run(t, "usage", "ruby")
	r.Expect(t, ExitFailing, "team-a", "not seen: the samples Config: you may not read it",
		"not seen: buildconfigs outside your projects", "1 object uses ruby (1 sample in 1 namespace); not everything could be seen")
	if strings.Contains(r.Out, "team-b") {
		t.Error("a user in team-b, which the developer may not see, is listed")
	}
	f.run(t, "usage", "ruby", "-n", "team-a").Expect(t, ExitFailing, "not seen: the samples Config", "looked in namespace team-a only (-n)")
	// skip writes the Config: it must be read.
	f.run(t, "skip", "ruby").Expect(t, ExitUsage, "you may not read the samples Config")
}

// Issue 48 item 9: everything not seen makes the exit status 1, as the help says.
func TestStatusExitsOneWhenSomethingIsNotSeen(t *testing.T) {
	f := newFakeCluster(t)
	f.run(t, "status").Expect(t, ExitOK)
	f.forbid("list", "imagetagmirrorsets", nil)
	f.run(t, "status").Expect(t, ExitFailing, "not seen: ImageTagMirrorSets: ")
}

// Issue 48 item 9: no user is an empty list in JSON, not null.
func TestUsageInJSONListsNoUserAsAnEmptyList(t *testing.T) {
	f := newFakeCluster(t, rubyStream())
	r := f.run(t, "usage", "ruby", "-o", "json")
	r.Expect(t, ExitOK)
	var report map[string]any
	if err := json.Unmarshal([]byte(r.Out), &report); err != nil {
		t.Fatal(err)
	}
	if users, ok := report["users"].([]any); !ok || len(users) != 0 {
		t.Errorf(`"users" is %#v, want []`, report["users"])
	}
}

// Issue 48 item 9: a refused write says which: an update of the Config, an import.
func TestARefusedWriteSaysWhatWasRefused(t *testing.T) {
	ruby := rubyStream()
	ruby.Status.Tags = []imagev1.NamedTagEventList{{Tag: "3.3-ubi9", Conditions: []imagev1.TagEventCondition{{
		Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse, Message: "manifest unknown", Generation: 1,
	}}}}
	f := newFakeCluster(t, ruby)
	f.forbid("update", "configs", nil)
	f.forbid("create", "imagestreamimports", nil)
	f.run(t, "skip", "ruby", "--force").Expect(t, ExitUsage, "you may not update the samples Config")
	f.run(t, "retry-imports", "ruby").Expect(t, ExitUsage, "you may not import imagestream ruby")
}

// Issue 48 item 9: when someone made the same change between skip's read and its write, skip
// writes nothing and does not claim it changed the Config.
func TestSkipSaysItChangedTheConfigOnlyWhenItDid(t *testing.T) {
	f := newFakeCluster(t, rubyStream())
	gets := 0
	f.samples.PrependReactor("get", "configs", func(clienttesting.Action) (bool, kruntime.Object, error) {
		if gets++; gets == 2 { // skip's own read before it writes: someone was faster
			cfg := f.cfgFromTracker(t)
			cfg.Spec.SkippedImagestreams = []string{"ruby"}
			if err := f.samples.Tracker().Update(samplesv1.GroupVersion.WithResource("configs"), cfg, ""); err != nil {
				t.Fatal(err)
			}
		}
		return false, nil, nil
	})
	r := f.run(t, "skip", "ruby")
	r.Expect(t, ExitOK, "nothing to change")
	if strings.Contains(r.Out, "changed the Config") {
		t.Error("skip says it changed the Config, which someone else had changed")
	}
	for _, a := range f.samples.Actions() {
		if a.GetVerb() == "update" {
			t.Errorf("skip wrote the Config: %v", a)
		}
	}
}

func (f *fakeCluster) cfgFromTracker(t *testing.T) *samplesv1.Config {
	t.Helper()
	obj, err := f.samples.Tracker().Get(samplesv1.GroupVersion.WithResource("configs"), "", configName)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*samplesv1.Config).DeepCopy()
}

// Issue 48 item 9: listing namespace by namespace starts its few readers, never one goroutine
// per namespace waiting for a turn.
func TestNamespaceByNamespaceListingStartsOnlyItsReaders(t *testing.T) {
	namespaces := make([]string, 200)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("app-%03d", i)
	}
	var (
		mu       sync.Mutex
		inFlight int
		peak     int
		peakGo   int
	)
	release := make(chan struct{})
	var releaseOnce sync.Once
	before := runtime.NumGoroutine()
	list := func(ctx context.Context, ns string, _ metav1.ListOptions) (kruntime.Object, error) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		if inFlight == namespaceReaders {
			// Every reader is busy: count what runs now, then let them go on.
			releaseOnce.Do(func() {
				peakGo = runtime.NumGoroutine() - before
				close(release)
			})
		}
		mu.Unlock()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		return &corev1.PodList{}, nil
	}
	l := &lister{namespaces: namespaces}
	notSeen, err := l.each(context.Background(), "pods", list, func(kruntime.Object) {})
	if err != nil || len(notSeen) > 0 {
		t.Fatalf("listing: %v %v", notSeen, err)
	}
	if peak != namespaceReaders {
		t.Errorf("%d lists in flight at once, want %d", peak, namespaceReaders)
	}
	// Each reader runs in its goroutine and the pager's; a goroutine per namespace would add 200.
	if limit := 3 * namespaceReaders; peakGo > limit {
		t.Errorf("%d goroutines started for %d namespaces, want at most %d", peakGo, len(namespaces), limit)
	}
}

// Issue 50: status names what cannot work on this cluster, in a column and in JSON.
func TestStatusNamesWhatCannotWorkHere(t *testing.T) {
	ruby := rubyStream()
	ruby.Spec.Tags[0].Annotations = map[string]string{desired.UnusableAnnotation: "no image for node architecture s390x"}
	f := newFakeCluster(t, ruby)
	f.run(t, "status").Expect(t, ExitOK, "UNUSABLE HERE", "3.3-ubi9: no image for node architecture s390x")
	f.run(t, "status", "-o", "wide").Expect(t, ExitOK, "UNUSABLE HERE", "no image for node architecture s390x")
	r := f.run(t, "status", "-o", "json")
	r.Expect(t, ExitOK, `"unusable": "no image for node architecture s390x"`)
}

// unserve takes group version gv out of discovery, and answers a list of its kinds as the server
// answers a path it does not serve: 403 to whoever may not list it (authorization comes first),
// else 404.
func (f *fakeCluster) unserve(gv schema.GroupVersion, forbidden bool) {
	f.kube.Resources = slices.DeleteFunc(f.kube.Resources, func(l *metav1.APIResourceList) bool { return l.GroupVersion == gv.String() })
	for _, fake := range f.fakes() {
		fake.PrependReactor("list", "*", func(a clienttesting.Action) (bool, kruntime.Object, error) {
			if a.GetResource().GroupVersion() != gv {
				return false, nil, nil
			}
			gr := a.GetResource().GroupResource()
			if forbidden {
				return true, nil, apierrors.NewForbidden(gr, "", fmt.Errorf("the test forbids it"))
			}
			return true, nil, apierrors.NewGenericServerResponse(http.StatusNotFound, "list", gr, "", "", 0, false)
		})
	}
}

// Issue 56 item 11: with the Build and DeploymentConfig capabilities off, buildconfigs and
// deploymentconfigs have no object to count: usage answers with exit 0 and skip needs no
// --force, whether discovery or the list tells, and whoever asks.
func TestAKindTheClusterDoesNotServeHasNoUserToMiss(t *testing.T) {
	for _, forbidden := range []bool{false, true} {
		t.Run(fmt.Sprintf("listing forbidden %v", forbidden), func(t *testing.T) {
			f := newFakeCluster(t, rubyStream())
			f.namespace(t, "team-a")
			f.unserve(buildv1.GroupVersion, forbidden)
			f.unserve(appsv1.GroupVersion, forbidden)
			r := f.run(t, "usage", "ruby")
			r.Expect(t, ExitOK, "not served by this cluster (its capability may be off): buildconfigs, deploymentconfigs, no user to count", "no user of ruby found")
			if strings.Contains(r.Out, "not seen") || strings.Contains(r.Out, "not everything") {
				t.Errorf("a kind not served is taken as not seen: %s", r.Out)
			}
			r = f.run(t, "usage", "ruby", "-o", "json")
			r.Expect(t, ExitOK, `"notServed": [`)
			f.run(t, "skip", "ruby").Expect(t, ExitOK, "changed the Config")
		})
	}
	// Discovery that cannot answer leaves it to the lists: a 404 is a kind not served, a 403 or
	// a 503 a kind not seen.
	f := newFakeCluster(t, rubyStream())
	f.kube.PrependReactor("get", "resource", func(clienttesting.Action) (bool, kruntime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("discovery is down")
	})
	f.unserve(buildv1.GroupVersion, false)
	f.run(t, "usage", "ruby").Expect(t, ExitOK, "not served by this cluster (its capability may be off): buildconfigs, no user")
	f.forbid("list", "deploymentconfigs", nil)
	f.forbid("list", "namespaces", nil)
	f.forbid("list", "projects", nil)
	f.run(t, "usage", "ruby").Expect(t, ExitFailing, "not seen: deploymentconfigs: you may not list them", "not everything could be seen")
	f.run(t, "skip", "ruby").Expect(t, ExitFailing, "not skipping ruby: not every user could be seen")
	// A kind discovery shows served but the caller may not list is not seen.
	g := newFakeCluster(t, rubyStream())
	g.forbid("list", "buildconfigs", nil)
	g.forbid("list", "namespaces", nil)
	g.forbid("list", "projects", nil)
	g.run(t, "usage", "ruby").Expect(t, ExitFailing, "not seen: buildconfigs: you may not list them")
	g.kube.PrependReactor("list", "pods", func(clienttesting.Action) (bool, kruntime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd is away")
	})
	g.run(t, "usage", "ruby").Expect(t, ExitFailing, "not seen: pods in all namespaces: the server did not answer")
}

// Issue 56 item 11: a name of blanks is no name, as an empty one is.
func TestANamespaceOfBlanksIsAnError(t *testing.T) {
	f := newFakeCluster(t, rubyStream())
	f.run(t, "usage", "-n", " ").Expect(t, ExitUsage, `-n " ": a namespace name is empty`)
	f.run(t, "skip", "ruby", "--namespace", "\t").Expect(t, ExitUsage, "a namespace name is empty")
	if skipped := f.cfg(t).Spec.SkippedImagestreams; len(skipped) > 0 {
		t.Errorf("skip with a blank -n changed the Config: %v", skipped)
	}
}

// Issue 56 item 11: retry-imports with no tag to retry prints an empty list, not null.
func TestRetryImportsWithNothingToRetryPrintsAnEmptyList(t *testing.T) {
	f := newFakeCluster(t, rubyStream())
	for _, o := range []string{"json", "yaml"} {
		r := f.run(t, "retry-imports", "-o", o)
		r.Expect(t, ExitOK)
		if got := strings.TrimSpace(r.Out); got != "[]" {
			t.Errorf("retry-imports -o %s printed %q, want []", o, got)
		}
	}
}

// Issue 56 item 11: a refusal under -o json or yaml prints an object with the error and what it
// found, never a table; the exit status and the error's line on stderr stay.
func TestARefusalUnderStructuredOutputPrintsAnObject(t *testing.T) {
	f := newFakeCluster(t, rubyStream())
	f.namespace(t, "team-a")
	f.buildOn(t, "team-a", "web", "ruby:latest")
	r := f.run(t, "skip", "ruby", "-o", "json")
	r.Expect(t, ExitFailing)
	var refusal struct {
		Error      string
		ExitStatus int
		Users      []map[string]any
	}
	if err := json.Unmarshal([]byte(r.Out), &refusal); err != nil {
		t.Fatalf("skip -o json refused with no JSON object: %v: %q", err, r.Out)
	}
	if !strings.HasPrefix(refusal.Error, "not skipping ruby: 1 object uses it") || refusal.ExitStatus != ExitFailing || len(refusal.Users) != 1 {
		t.Errorf("the refusal's object: %+v", refusal)
	}
	if !strings.Contains(r.ErrOut, "error: not skipping ruby") {
		t.Errorf("the error's line is gone from stderr: %q", r.ErrOut)
	}
	r = f.run(t, "skip", "ruby", "-o", "yaml")
	r.Expect(t, ExitFailing, "error: not skipping ruby", "exitStatus: 1", "namespace: team-a")
	if strings.Contains(r.Out, "SAMPLE") {
		t.Errorf("skip -o yaml printed a table: %s", r.Out)
	}
	// The table is unchanged.
	f.run(t, "skip", "ruby").Expect(t, ExitFailing, "SAMPLE", "ruby:latest", "team-a")
	// A usage error too.
	r = f.run(t, "usage", "nosuch", "-o", "json")
	r.Expect(t, ExitUsage)
	var usage map[string]any
	if err := json.Unmarshal([]byte(r.Out), &usage); err != nil || usage["exitStatus"] != float64(ExitUsage) || !strings.Contains(fmt.Sprint(usage["error"]), "nosuch") {
		t.Errorf("usage nosuch -o json: %v, %q", err, r.Out)
	}
}

// Issue 56 item 11: a tag the operator rewrote after its import failed waits for its new
// import: status does not show it failing, nor exit 1 for it.
func TestStatusShowsATagRewrittenSinceItsImportFailedAsPending(t *testing.T) {
	ruby := rubyStream()
	specGen := int64(3)
	ruby.Spec.Tags[0].Generation = &specGen
	ruby.Status.Tags = []imagev1.NamedTagEventList{{Tag: "3.3-ubi9", Conditions: []imagev1.TagEventCondition{{
		Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse, Message: "manifest unknown", Generation: 2,
	}}}}
	f := newFakeCluster(t, ruby)
	r := f.run(t, "status", "-o", "wide")
	r.Expect(t, ExitOK)
	if strings.Contains(r.Out, "manifest unknown") || strings.Contains(r.Out, "failing") {
		t.Errorf("a tag waiting for its new import is shown failing:\n%s", r.Out)
	}
	specGen = 2 // the import of what the spec names failed
	newFakeCluster(t, ruby).run(t, "status").Expect(t, ExitFailing, "3.3-ubi9: manifest unknown")
}
