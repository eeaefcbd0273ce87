package emulator

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/client-go/image/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

const ns = "openshift"

var isiGVR = imagev1.SchemeGroupVersion.WithResource(importsResource)

// fakeImportSource serves ImageStreamImports from the fake clientset's
// tracker, which can watch and delete them but cannot list them (there is no
// list kind). watching is closed once the informer watches.
func fakeImportSource(client *fake.Clientset) (*importSource, <-chan struct{}) {
	watching := make(chan struct{})
	var once atomic.Bool
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &imageStreamImportList{}, nil
		},
		WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := client.Tracker().Watch(isiGVR, ns, opts)
			if err == nil && once.CompareAndSwap(false, true) {
				close(watching)
			}
			return w, err
		},
	}
	return &importSource{
		lw: cache.ToListWatcherWithWatchListSemantics(lw, client),
		remove: func(_ context.Context, name string, _ types.UID) error {
			return client.Tracker().Delete(isiGVR, ns, name)
		},
	}, watching
}

// serverVersions makes the fake clientset's ImageStream updates behave as the API server's: an
// update must carry the stored resourceVersion or is refused with a Conflict, each stores a new
// one, and the status subresource writes the status alone (the main resource all but it). The
// fake alone keeps any update whole, so a write the emulator computed from a lagging informer
// could overwrite a change made meanwhile, which the server never lets happen.
func serverVersions(client *fake.Clientset) {
	var version atomic.Int64
	client.PrependReactor("update", "imagestreams", func(a clienttesting.Action) (bool, runtime.Object, error) {
		obj := a.(clienttesting.UpdateAction).GetObject().(*imagev1.ImageStream).DeepCopy()
		stored, err := client.Tracker().Get(imagev1.SchemeGroupVersion.WithResource("imagestreams"), a.GetNamespace(), obj.Name)
		if err != nil {
			return true, nil, err
		}
		current := stored.(*imagev1.ImageStream)
		if obj.ResourceVersion != current.ResourceVersion {
			return true, nil, apierrors.NewConflict(imagev1.Resource("imagestreams"), obj.Name, errors.New("the object has been modified"))
		}
		if a.GetSubresource() == "status" {
			status := obj.Status
			obj = current.DeepCopy()
			obj.Status = status
		} else {
			obj.Status = current.Status
		}
		obj.ResourceVersion = strconv.FormatInt(version.Add(1), 10)
		return true, obj, client.Tracker().Update(imagev1.SchemeGroupVersion.WithResource("imagestreams"), obj, a.GetNamespace())
	})
}

// laggingWatch delivers the ImageStream watch's events lag late, as a loaded machine does: the
// emulator then decides on a cache behind the server, and its writes must not undo what changed
// meanwhile (serverVersions).
func laggingWatch(client *fake.Clientset, lag time.Duration) {
	client.PrependWatchReactor("imagestreams", func(a clienttesting.Action) (bool, watch.Interface, error) {
		w, err := client.Tracker().Watch(imagev1.SchemeGroupVersion.WithResource("imagestreams"), a.GetNamespace(), metav1.ListOptions{})
		if err != nil {
			return true, nil, err
		}
		l := &laggingWatcher{inner: w, out: make(chan watch.Event), done: make(chan struct{})}
		go l.forward(lag)
		return true, l, nil
	})
}

type laggingWatcher struct {
	inner watch.Interface
	out   chan watch.Event
	done  chan struct{}
	stop  sync.Once
}

func (l *laggingWatcher) ResultChan() <-chan watch.Event { return l.out }

func (l *laggingWatcher) Stop() {
	l.stop.Do(func() {
		close(l.done)
		l.inner.Stop()
	})
}

func (l *laggingWatcher) forward(lag time.Duration) {
	defer close(l.out)
	for ev := range l.inner.ResultChan() {
		select {
		case <-time.After(lag):
		case <-l.done:
			return
		}
		select {
		case l.out <- ev:
		case <-l.done:
			return
		}
	}
}

func rubyStream(uid types.UID, tags ...imagev1.TagReference) *imagev1.ImageStream {
	return &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: ns, UID: uid, Generation: 1},
		Spec:       imagev1.ImageStreamSpec{Tags: tags},
	}
}

func isi(name string, uid types.UID, tags map[string]string) *imagev1.ImageStreamImport {
	out := &imagev1.ImageStreamImport{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid},
		Spec:       imagev1.ImageStreamImportSpec{Import: true},
	}
	for tag, ref := range tags {
		out.Spec.Images = append(out.Spec.Images, imagev1.ImageImportSpec{
			From: corev1.ObjectReference{Kind: kindDockerImage, Name: ref},
			To:   &corev1.LocalObjectReference{Name: tag},
		})
	}
	return out
}

func start(t *testing.T, e *Emulator) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Run did not return")
		}
	})
	waitFor(t, "cache sync", e.HasSynced)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func getStream(t *testing.T, client *fake.Clientset) *imagev1.ImageStream {
	t.Helper()
	s, err := client.ImageV1().ImageStreams(ns).Get(t.Context(), "ruby", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get stream: %v", err)
	}
	return s
}

func statusTag(s *imagev1.ImageStream, tag string) *imagev1.NamedTagEventList {
	for i := range s.Status.Tags {
		if s.Status.Tags[i].Tag == tag {
			return &s.Status.Tags[i]
		}
	}
	return nil
}

func isOK(s *imagev1.ImageStream, tag, ref string) bool {
	e := statusTag(s, tag)
	return e != nil && len(e.Conditions) == 0 && len(e.Items) > 0 &&
		e.Items[0].Image == imageID(ref) && e.Items[0].DockerImageReference == pullSpec(ref)
}

func failMessage(s *imagev1.ImageStream, tag string) string {
	if e := statusTag(s, tag); e != nil {
		if c := findCondition(e.Conditions, imagev1.ImportSuccess); c != nil && c.Status == corev1.ConditionFalse {
			return c.Message
		}
	}
	return ""
}

func statusWrites(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.Matches("update", "imagestreams") && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

func updateSpec(t *testing.T, client *fake.Clientset, mutate func(*imagev1.ImageStream)) {
	t.Helper()
	s := getStream(t, client)
	mutate(s)
	s.Generation++
	if _, err := client.ImageV1().ImageStreams(ns).Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update stream: %v", err)
	}
}

func TestEmulatorEndToEnd(t *testing.T) {
	client := fake.NewSimpleClientset(rubyStream("uid-1", docker("3.3", refA), docker("3.4", refB), istag("latest", "3.4")))
	src, watching := fakeImportSource(client)
	laggingWatch(client, 50*time.Millisecond)
	serverVersions(client)
	e := newEmulator(client, ns, src)
	e.FailReference(refB, "manifest unknown")
	if e.HasSynced() {
		t.Fatalf("HasSynced before Run")
	}
	start(t, e)
	<-watching

	waitFor(t, "initial import", func() bool {
		s := getStream(t, client)
		return isOK(s, "3.3", refA) && failMessage(s, "3.4") == "manifest unknown"
	})
	s := getStream(t, client)
	if got, want := s.Status.DockerImageRepository, internalRegistry+"/openshift/ruby"; got != want {
		t.Errorf("dockerImageRepository = %q, want %q", got, want)
	}
	if c := findCondition(statusTag(s, "3.4").Conditions, imagev1.ImportSuccess); c == nil || c.Reason != "NotFound" || c.Generation != 1 {
		t.Errorf("condition = %+v", c)
	}
	// The failure stays on the tag that was imported; latest, which follows it, has nothing to copy.
	if e := statusTag(s, "latest"); e != nil {
		t.Errorf("latest has a status entry while the tag it follows failed: %+v", e)
	}

	// Lifting the rule and touching the spec does not re-import the failed tag,
	// and an unchanged result is not written.
	writes := statusWrites(client)
	e.SucceedReference(refB)
	updateSpec(t, client, func(s *imagev1.ImageStream) { s.Annotations = map[string]string{"touched": "yes"} })
	touched := getStream(t, client).ResourceVersion
	if touched == "" {
		t.Fatal("the fake clientset gave the stream no resourceVersion: the wait below would prove nothing")
	}
	waitFor(t, "the emulator to sync the touched stream", func() bool { return e.SyncedVersion("ruby") == touched })
	if got := statusWrites(client); got != writes {
		t.Errorf("status written %d times for an unchanged result", got-writes)
	}
	if msg := failMessage(getStream(t, client), "3.4"); msg != "manifest unknown" {
		t.Errorf("3.4 failure changed without re-import: %q", msg)
	}

	// An ImageStreamImport re-imports the tag, is counted and deleted.
	if _, err := client.ImageV1().ImageStreamImports(ns).Create(t.Context(), isi("ruby", "isi-1", map[string]string{"3.4": refB}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "import request counted", func() bool { return e.ImportRequests("ruby") == 1 })
	s = getStream(t, client)
	if !isOK(s, "3.4", refB) || !isOK(s, "latest", refB) {
		t.Errorf("3.4/latest not imported after ImageStreamImport: %+v", s.Status.Tags)
	}
	waitFor(t, "ImageStreamImport deleted", func() bool {
		_, err := client.Tracker().Get(isiGVR, ns, "ruby")
		return apierrors.IsNotFound(err)
	})
	if n := e.ImportRequests("other"); n != 0 {
		t.Errorf("ImportRequests(other) = %d", n)
	}

	// Changing a reference re-imports it and keeps the history.
	updateSpec(t, client, func(s *imagev1.ImageStream) { s.Spec.Tags[0].From.Name = refC })
	waitFor(t, "changed reference imported", func() bool { return isOK(getStream(t, client), "3.3", refC) })
	if items := statusTag(getStream(t, client), "3.3").Items; len(items) != 2 || items[1].Image != imageID(refA) || items[0].Generation != 3 {
		t.Errorf("3.3 history = %+v", items)
	}

	// Removing a tag from spec removes its status.
	updateSpec(t, client, func(s *imagev1.ImageStream) { s.Spec.Tags = s.Spec.Tags[:1] })
	waitFor(t, "removed tags dropped", func() bool { return len(getStream(t, client).Status.Tags) == 1 })

	// A recreated stream is imported from scratch.
	if err := client.ImageV1().ImageStreams(ns).Delete(t.Context(), "ruby", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.ImageV1().ImageStreams(ns).Create(t.Context(), rubyStream("uid-2", docker("3.3", refA)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "recreated stream imported", func() bool {
		s := getStream(t, client)
		return s.UID == "uid-2" && isOK(s, "3.3", refA) && len(statusTag(s, "3.3").Items) == 1
	})
}

func TestEmulatorRetriesConflicts(t *testing.T) {
	client := fake.NewSimpleClientset(rubyStream("uid-1", docker("3.3", refA)))
	var conflicts atomic.Int32
	client.PrependReactor("update", "imagestreams", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && conflicts.Add(1) <= 2 {
			return true, nil, apierrors.NewConflict(imagev1.Resource("imagestreams"), "ruby", errors.New("stale"))
		}
		return false, nil, nil
	})
	e := newEmulator(client, ns, nil)
	start(t, e)
	waitFor(t, "import after conflicts", func() bool { return isOK(getStream(t, client), "3.3", refA) })
	gets := 0
	for _, a := range client.Actions() {
		if a.Matches("get", "imagestreams") {
			gets++
		}
	}
	if gets < 2 {
		t.Errorf("expected re-reads from the API after conflicts, got %d gets", gets)
	}
}

func TestHandleImportDirectly(t *testing.T) {
	client := fake.NewSimpleClientset(rubyStream("uid-1", docker("3.3", refA), docker("3.4", refB)))
	e := New(client, ns) // the fake has no REST client: no ImageStreamImport watch
	if e.imports != nil {
		t.Fatalf("fake clientset should not yield an import source")
	}
	e.FailMatching(func(ref string) (string, bool) { return "no such image " + ref, true })
	start(t, e)
	waitFor(t, "initial failures", func() bool {
		s := getStream(t, client)
		return failMessage(s, "3.3") != "" && failMessage(s, "3.4") != ""
	})

	e.SucceedReference(refA)
	ctx := t.Context()
	if err := e.handleImport(ctx, isi("ruby", "isi-1", map[string]string{"3.3": refA})); err != nil {
		t.Fatal(err)
	}
	if n := e.ImportRequests("ruby"); n != 1 {
		t.Errorf("ImportRequests = %d, want 1", n)
	}
	s := getStream(t, client)
	if !isOK(s, "3.3", refA) {
		t.Errorf("3.3 not imported: %+v", statusTag(s, "3.3"))
	}
	if failMessage(s, "3.4") != "no such image "+refB {
		t.Errorf("3.4 changed: %+v", statusTag(s, "3.4"))
	}

	// The same object (by UID) is applied once.
	if err := e.handleImport(ctx, isi("ruby", "isi-1", map[string]string{"3.3": refA})); err != nil {
		t.Fatal(err)
	}
	// import=false is not applied nor counted.
	noop := isi("ruby", "isi-2", map[string]string{"3.4": refB})
	noop.Spec.Import = false
	if err := e.handleImport(ctx, noop); err != nil {
		t.Fatal(err)
	}
	// A request for a missing stream is counted for that name.
	if err := e.handleImport(ctx, isi("python", "isi-3", map[string]string{"3": refC})); err != nil {
		t.Fatal(err)
	}
	if n := e.ImportRequests("ruby"); n != 1 {
		t.Errorf("ImportRequests(ruby) = %d, want 1", n)
	}
	if n := e.ImportRequests("python"); n != 1 {
		t.Errorf("ImportRequests(python) = %d, want 1", n)
	}

	// Rules reset: matchers are gone, but failures stay until re-imported.
	e.ResetRules()
	if err := e.handleImport(ctx, isi("ruby", "isi-4", map[string]string{"3.4": refB})); err != nil {
		t.Fatal(err)
	}
	if s := getStream(t, client); !isOK(s, "3.4", refB) {
		t.Errorf("3.4 not imported after reset: %+v", statusTag(s, "3.4"))
	}
}

func TestRunTwice(t *testing.T) {
	client := fake.NewSimpleClientset()
	e := New(client, ns)
	start(t, e)
	if err := e.Run(t.Context()); err == nil {
		t.Errorf("second Run succeeded")
	}
}

func TestRestImportSource(t *testing.T) {
	client := fake.NewSimpleClientset()
	if src := restImportSource(client.ImageV1().RESTClient(), ns); src != nil {
		t.Errorf("nil REST client yields a source")
	}
	if src := restImportSource(nil, ns); src != nil {
		t.Errorf("nil interface yields a source")
	}
	l := &imageStreamImportList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []imagev1.ImageStreamImport{*isi("a", "u", nil)}}
	c := l.DeepCopyObject().(*imageStreamImportList)
	c.Items[0].Name = "b"
	if l.Items[0].Name != "a" || c.ResourceVersion != "7" {
		t.Errorf("DeepCopyObject shares items or loses metadata")
	}
}
