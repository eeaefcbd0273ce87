package tagmap

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/fstest"

	samplesv1 "github.com/openshift/api/samples/v1"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/informertest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/ownwrites"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// shipped is a cluster that ships a one-stream inventory for x86_64 and one for arm64, each
// stream's image naming its architecture, and runs on goarch.
type shipped struct{ goarch string }

var loadInventories = sync.OnceValues(func() (map[string]*inventory.Inventory, error) {
	by := map[string]*inventory.Inventory{}
	for _, arch := range []string{"x86_64", "arm64"} {
		stream := fmt.Sprintf(`{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"ruby"},"spec":{"tags":[`+
			`{"name":"3.3","from":{"kind":"DockerImage","name":"registry.redhat.io/%s/ruby:3.3"}},`+
			`{"name":"latest","from":{"kind":"ImageStreamTag","name":"3.3"}}]}}`, arch)
		inv, err := inventory.Load(fstest.MapFS{"x/ruby/imagestreams/ruby.json": &fstest.MapFile{Data: []byte(stream)}}, "x")
		if err != nil {
			return nil, err
		}
		by[arch] = inv
	}
	return by, nil
})

func (s shipped) Has(arch string) bool { return arch == "x86_64" || arch == "arm64" }
func (s shipped) GOARCH() string       { return s.goarch }
func (s shipped) For(arch string) (*inventory.Inventory, error) {
	by, err := loadInventories()
	if err != nil {
		return nil, err
	}
	if inv, ok := by[arch]; ok {
		return inv, nil
	}
	return nil, fmt.Errorf("no inventory for %q", arch)
}

// mapOf is the map's data for the inventory of arch: the DockerImage tag only, the tag that
// follows another being no image to mirror.
func mapOf(arch string) map[string]string {
	return map[string]string{"ruby_3.3": "registry.redhat.io/" + arch + "/ruby:3.3"}
}

func configFor(archs ...string) *samplesv1.Config {
	return &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName}, Spec: samplesv1.ConfigSpec{Architectures: archs}}
}

// tagMap is the map as the operator of version writes it for arch, with the resourceVersion rv.
func tagMap(version, arch, rv string) *corev1.ConfigMap {
	cm := imports.TagToImageConfigMap(names.OperatorNamespace, version, mapOf(arch))
	cm.ResourceVersion = rv
	return cm
}

// fixture is the controller newController builds over fake clientsets, its caches holding the
// Config and the ConfigMaps given (the informers are not run), synced by hand.
type fixture struct {
	c          *Controller
	kube       *fake.Clientset
	configMaps cache.Store
}

func newFixture(t *testing.T, goarch string, cfg *samplesv1.Config, cms ...*corev1.ConfigMap) *fixture {
	t.Helper()
	var objs []runtime.Object
	for _, cm := range cms {
		objs = append(objs, cm.DeepCopy())
	}
	kube := fake.NewSimpleClientset(objs...)
	// The server gives each write a new resourceVersion; the fake tracker keeps the one sent.
	kube.PrependReactor("update", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		cm := a.(clienttesting.UpdateAction).GetObject().(*corev1.ConfigMap)
		cm.ResourceVersion += "0"
		return false, nil, nil
	})
	configs := samplesinformers.NewSharedInformerFactory(samplesfake.NewSimpleClientset(), 0).Samples().V1().Configs()
	if cfg != nil {
		if err := configs.Informer().GetIndexer().Add(cfg); err != nil {
			t.Fatal(err)
		}
	}
	configMaps := kubeinformers.NewSharedInformerFactory(kube, 0).Core().V1().ConfigMaps()
	for _, cm := range cms {
		if err := configMaps.Informer().GetIndexer().Add(cm); err != nil {
			t.Fatal(err)
		}
	}
	return &fixture{
		c:          newController("v2", goarch, shipped{goarch}, configs, configMaps, kube.CoreV1()),
		kube:       kube,
		configMaps: configMaps.Informer().GetStore(),
	}
}

// sync runs one sync and returns the writes it sent ("create" or "update" and the map
// written), what it queued for later and its error.
func (f *fixture) sync() ([]string, []*corev1.ConfigMap, []string, error) {
	f.kube.ClearActions()
	syncCtx := informertest.NewSyncContext(events.NewInMemoryRecorder("test", clock.RealClock{}))
	err := f.c.sync(context.Background(), syncCtx)
	verbs, sent := informertest.Writes(f.kube.Actions())
	written := make([]*corev1.ConfigMap, len(sent))
	for i, o := range sent {
		written[i] = o.(*corev1.ConfigMap)
	}
	return verbs, written, syncCtx.Later(), err
}

// The map lists the source image of each tag of the inventory of the Config's architecture, the
// operator's own when the Config names none or does not exist, and is stamped with the version.
func TestTheMapListsTheInventoryOfTheSamplesArchitecture(t *testing.T) {
	for _, tc := range []struct {
		name   string
		goarch string
		cfg    *samplesv1.Config
		arch   string
	}{
		{"no Config", "amd64", nil, "x86_64"},
		{"a Config naming no architecture", "arm64", configFor(), "arm64"},
		{"a Config naming another architecture", "amd64", configFor("arm64"), "arm64"},
		{"a Config naming amd64", "arm64", configFor("amd64"), "x86_64"},
	} {
		f := newFixture(t, tc.goarch, tc.cfg)
		verbs, written, _, err := f.sync()
		if err != nil || !slices.Equal(verbs, []string{"create"}) {
			t.Fatalf("%s: sync wrote %v (%v), want one create", tc.name, verbs, err)
		}
		cm := written[0]
		if cm.Namespace != names.OperatorNamespace || cm.Name != imports.TagToImageName || !maps.Equal(cm.Data, mapOf(tc.arch)) ||
			cm.Annotations[desired.VersionAnnotation] != "v2" {
			t.Errorf("%s: created %s/%s with data %v and version %q; want %s/%s, %v, v2", tc.name, cm.Namespace, cm.Name, cm.Data,
				cm.Annotations[desired.VersionAnnotation], names.OperatorNamespace, imports.TagToImageName, mapOf(tc.arch))
		}
	}
}

// Without an inventory for the architecture there is nothing to mirror: nothing is written, and
// that is no error to retry.
func TestNoInventoryNoMap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		goarch string
		cfg    *samplesv1.Config
	}{
		{"an operator architecture no Config names", "riscv64", nil},
		{"an architecture the operator ships none for", "amd64", configFor("ppc64le")},
	} {
		f := newFixture(t, tc.goarch, tc.cfg, tagMap("v1", "x86_64", "5"))
		if verbs, _, queued, err := f.sync(); err != nil || len(verbs) != 0 || len(queued) != 0 {
			t.Errorf("%s: sync wrote %v and queued %v (%v), want nothing", tc.name, verbs, queued, err)
		}
	}
}

// A map with the data and the version wanted is not written again.
func TestAnUnchangedMapIsNotWritten(t *testing.T) {
	f := newFixture(t, "amd64", nil, tagMap("v2", "x86_64", "5"))
	if verbs, _, queued, err := f.sync(); err != nil || len(verbs) != 0 || len(queued) != 0 {
		t.Errorf("sync wrote %v and queued %v (%v), want nothing", verbs, queued, err)
	}
}

// A map with other data, or of another version, or none, is updated to the data and version
// wanted; what else it carries (an admin's label or annotation) is kept.
func TestAMapThatDiffersIsReplacedKeepingWhatElseItCarries(t *testing.T) {
	otherData := tagMap("v2", "arm64", "5")
	otherVersion := tagMap("v1", "x86_64", "5")
	noAnnotations := tagMap("v2", "x86_64", "5")
	noAnnotations.Annotations = nil
	for _, tc := range []struct {
		name string
		live *corev1.ConfigMap
	}{{"other data", otherData}, {"another version", otherVersion}, {"no annotations", noAnnotations}} {
		tc.live.Labels = map[string]string{"admin": "mine"}
		if tc.live.Annotations != nil {
			tc.live.Annotations["admin"] = "mine"
		}
		f := newFixture(t, "amd64", nil, tc.live)
		verbs, written, _, err := f.sync()
		if err != nil || !slices.Equal(verbs, []string{"update"}) {
			t.Fatalf("%s: sync wrote %v (%v), want one update", tc.name, verbs, err)
		}
		cm := written[0]
		if !maps.Equal(cm.Data, mapOf("x86_64")) || cm.Annotations[desired.VersionAnnotation] != "v2" || cm.Labels["admin"] != "mine" ||
			(tc.live.Annotations != nil && cm.Annotations["admin"] != "mine") {
			t.Errorf("%s: updated to data %v, labels %v, annotations %v; want the x86_64 map, v2 and the admin's own kept",
				tc.name, cm.Data, cm.Labels, cm.Annotations)
		}
	}
}

// A map this controller created or updated is not written again while the informer has not shown
// the write; a create it does not see yet is looked at again after ownwrites.Recheck, should it
// have been deleted meanwhile.
func TestAWriteIsNotSentTwiceBeforeTheCacheShowsIt(t *testing.T) {
	recheck := fmt.Sprintf("%s after %s", factory.DefaultQueueKey, ownwrites.Recheck)
	for _, tc := range []struct {
		name   string
		cached []*corev1.ConfigMap
		verb   string
		again  []string
	}{
		{"created", nil, "create", []string{recheck}},
		{"updated", []*corev1.ConfigMap{tagMap("v1", "x86_64", "5")}, "update", nil},
	} {
		f := newFixture(t, "amd64", nil, tc.cached...)
		if verbs, _, queued, err := f.sync(); err != nil || !slices.Equal(verbs, []string{tc.verb}) || len(queued) != 0 {
			t.Fatalf("%s: the first sync wrote %v and queued %v (%v), want one %s", tc.name, verbs, queued, err, tc.verb)
		}
		if verbs, _, queued, err := f.sync(); err != nil || len(verbs) != 0 || !slices.Equal(queued, tc.again) {
			t.Errorf("%s: the second sync, before the cache showed the write, wrote %v and queued %v (%v); want nothing written, %v queued",
				tc.name, verbs, queued, err, tc.again)
		}
	}
}

// A create that finds the map already there (the informer lags) is no error: the map's add event
// brings the controller back. A write the server refuses is returned, to be retried, and not
// taken for done.
func TestFailedWrites(t *testing.T) {
	refused := errors.New("refused")
	for _, tc := range []struct {
		name    string
		cached  []*corev1.ConfigMap
		verb    string
		answer  error
		wantErr error
	}{
		{"create, already there", nil, "create", apierrors.NewAlreadyExists(corev1.Resource("configmaps"), imports.TagToImageName), nil},
		{"create, refused", nil, "create", refused, refused},
		{"update, refused", []*corev1.ConfigMap{tagMap("v1", "x86_64", "5")}, "update", refused, refused},
	} {
		f := newFixture(t, "amd64", nil, tc.cached...)
		f.kube.PrependReactor(tc.verb, "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, tc.answer
		})
		for range 2 {
			if verbs, _, queued, err := f.sync(); !errors.Is(err, tc.wantErr) || !slices.Equal(verbs, []string{tc.verb}) || len(queued) != 0 {
				t.Errorf("%s: sync wrote %v, queued %v and returned %v; want one %s each time, returning %v", tc.name, verbs, queued, err, tc.verb, tc.wantErr)
			}
		}
	}
}

// failingStore is a store that cannot be read.
type failingStore struct{ cache.Store }

func (failingStore) GetByKey(string) (interface{}, bool, error) {
	return nil, false, errors.New("unreadable")
}

// A cache that cannot be read is an error to retry, and nothing is written on it.
func TestAnUnreadableCacheWritesNothing(t *testing.T) {
	f := newFixture(t, "amd64", nil)
	f.c.configMaps = ownwrites.NewForStore[*corev1.ConfigMap](failingStore{}, names.OperatorNamespace, corev1.Resource("configmaps"))
	if verbs, _, _, err := f.sync(); err == nil || len(verbs) != 0 {
		t.Errorf("sync wrote %v and returned %v; want nothing written and the error", verbs, err)
	}
}

// The controller New wires writes the map at its start though nothing has changed, writes it
// again when it is deleted, and follows the Config's architecture.
func TestTheRunningControllerKeepsTheMapAndFollowsTheConfig(t *testing.T) {
	kube := fake.NewSimpleClientset()
	samples := samplesfake.NewSimpleClientset()
	samplesInf := samplesinformers.NewSharedInformerFactory(samples, 0)
	kubeInf := kubeinformers.NewSharedInformerFactory(kube, 0)
	ctrl := New("v2", "amd64", shipped{"amd64"}, samplesInf.Samples().V1().Configs(), kubeInf.Core().V1().ConfigMaps(), kube.CoreV1(),
		events.NewInMemoryRecorder("test", clock.RealClock{}))
	ctx := informertest.Run(t, ctrl, samplesInf, kubeInf)

	configMaps := kube.CoreV1().ConfigMaps(names.OperatorNamespace)
	waitForMap := func(what, arch string) {
		t.Helper()
		informertest.Eventually(t, what, func() (bool, string) {
			cm, err := configMaps.Get(ctx, imports.TagToImageName, metav1.GetOptions{})
			return err == nil && maps.Equal(cm.Data, mapOf(arch)), fmt.Sprintf("the map is %v (%v), want the %s one", cm, err, arch)
		})
	}
	waitForMap("at the start, no Config", "x86_64")
	if err := configMaps.Delete(ctx, imports.TagToImageName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForMap("deleted", "x86_64")
	if _, err := samples.SamplesV1().Configs().Create(ctx, configFor("arm64"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForMap("a Config naming arm64", "arm64")
}
