package importscontrol

import (
	"context"
	"slices"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	imagefake "github.com/openshift/client-go/image/clientset/versioned/fake"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/ownwrites"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// storeOf is an informer's store holding objs.
func storeOf(objs ...interface{}) cache.Indexer {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, o := range objs {
		_ = store.Add(o)
	}
	return store
}

func errorRecord(name string, failed map[string]string) *corev1.ConfigMap {
	return imports.ErrorConfigMap(names.OperatorNamespace, name, failed, time.Time{})
}

// New's controller retries on the cap it is given, DefaultRetryInterval (15 minutes, as
// docs/design.md says) when given none, and counts nowhere when given no counter.
func TestNewFillsInTheRetryCapAndTheCounter(t *testing.T) {
	samplesInf := samplesinformers.NewSharedInformerFactory(samplesfake.NewSimpleClientset(), 0)
	imageInf := imageinformers.NewSharedInformerFactory(imagefake.NewSimpleClientset(), 0)
	kubeInf := kubeinformers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	inf := Informers{
		Config: samplesInf.Samples().V1().Configs(), ImageConfig: configlisters.NewImageLister(storeOf()),
		ImageStream: imageInf.Image().V1().ImageStreams(), ConfigMap: kubeInf.Core().V1().ConfigMaps(),
	}
	for _, tc := range []struct {
		name            string
		interval, limit time.Duration
	}{
		{"none given", 0, 15 * time.Minute},
		{"a negative one", -time.Minute, 15 * time.Minute},
		{"two minutes", 2 * time.Minute, 2 * time.Minute},
	} {
		clk := clocktesting.NewFakeClock(time.Now())
		c := newController("v1", configspectest.X86Only{}, tc.interval, nil, inf, imagefake.NewSimpleClientset().ImageV1(), fake.NewSimpleClientset().CoreV1(), clk)
		var delay time.Duration
		for range 20 {
			delay = c.schedule.TurnTaken("ruby").Sub(clk.Now())
		}
		if delay != tc.limit {
			t.Errorf("%s: the delays grew to %s, want %s", tc.name, delay, tc.limit)
		}
		c.countRetry("ruby") // no counter given: counted nowhere
	}
	var counted []string
	c := newController("v1", configspectest.X86Only{}, 0, func(stream string) { counted = append(counted, stream) }, inf,
		imagefake.NewSimpleClientset().ImageV1(), fake.NewSimpleClientset().CoreV1(), clock.RealClock{})
	c.countRetry("ruby")
	if !slices.Equal(counted, []string{"ruby"}) {
		t.Errorf("counted %v, want the retry counted by the counter given", counted)
	}
}

// A Config change brings back every stream and every error record, each once; a ConfigMap
// without the error label is not one.
func TestAConfigChangeBringsBackEveryStreamAndRecord(t *testing.T) {
	stream := func(name string) *imagev1.ImageStream {
		return &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Namespace: names.SamplesNamespace, Name: name}}
	}
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: names.OperatorNamespace, Name: "nodejs"}}
	c := &Controller{
		imageStreams: imagelisters.NewImageStreamLister(storeOf(stream("ruby"), stream("python"))).ImageStreams(names.SamplesNamespace),
		configMaps: corelisters.NewConfigMapLister(storeOf(errorRecord("python", map[string]string{"3.11": "x"}),
			errorRecord("perl", map[string]string{"5.30": "x"}), foreign)).ConfigMaps(names.OperatorNamespace),
	}
	keys := c.allKeys(nil)
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"perl", "python", "ruby"}) {
		t.Errorf("keys %v, want every stream and the record of a stream gone, each once", keys)
	}
}

// What is tracked follows the management state: nothing without a Config or while the samples
// are removed; while Unmanaged what was recorded stays, and nothing new is tracked.
func TestWhatIsTrackedFollowsTheManagementState(t *testing.T) {
	recorded := map[string]string{"3.11": "manifest unknown"}
	config := func(state operatorv1.ManagementState) *samplesv1.Config {
		return &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName, UID: "cfg", ResourceVersion: "1"},
			Spec: samplesv1.ConfigSpec{ManagementState: state, Architectures: []string{"x86_64"}}}
	}
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: names.OperatorNamespace, Name: "python"}}
	for _, tc := range []struct {
		name   string
		cfg    *samplesv1.Config
		record *corev1.ConfigMap
		want   map[string]string
	}{
		{"no Config", nil, errorRecord("python", recorded), nil},
		{"Removed", config(operatorv1.Removed), errorRecord("python", recorded), nil},
		{"Unmanaged, a record", config(operatorv1.Unmanaged), errorRecord("python", recorded), recorded},
		{"Unmanaged, someone else's ConfigMap", config(operatorv1.Unmanaged), foreign, nil},
		{"Unmanaged, no record", config(operatorv1.Unmanaged), nil, nil},
	} {
		var configs, records []interface{}
		if tc.cfg != nil {
			configs = append(configs, tc.cfg)
		}
		if tc.record != nil {
			records = append(records, tc.record)
		}
		c := &Controller{
			version:    "v1",
			config:     configreader.New(sampleslisters.NewConfigLister(storeOf(configs...)), configlisters.NewImageLister(storeOf()), configspectest.X86Only{}),
			configMaps: corelisters.NewConfigMapLister(storeOf(records...)).ConfigMaps(names.OperatorNamespace),
		}
		failed, live, want, err := c.failuresToTrack("python")
		if err != nil || live != nil || want != nil || len(failed) != len(tc.want) || (tc.want != nil && failed["3.11"] != tc.want["3.11"]) {
			t.Errorf("%s: tracked %v (live %v, want %v, %v); want %v", tc.name, failed, live != nil, want != nil, err, tc.want)
		}
	}
}

// A record this controller created or updated is not written again while the informer has not
// shown it yet: the second sync finds the write it made, not the cache's older view.
func TestARecordIsNotWrittenTwiceBeforeTheCacheShowsIt(t *testing.T) {
	failed := map[string]string{"3.11": "manifest unknown"}
	stale := errorRecord("python", map[string]string{"3.9": "old"})
	stale.ResourceVersion = "5"
	for _, tc := range []struct {
		name   string
		cached []interface{}
		verb   string
	}{
		{"created", nil, "create"},
		{"updated", []interface{}{stale}, "update"},
	} {
		store := storeOf(tc.cached...)
		client := fake.NewSimpleClientset()
		if len(tc.cached) > 0 {
			client = fake.NewSimpleClientset(stale.DeepCopy())
		}
		// The server gives each write a new resourceVersion; the fake tracker keeps the one sent.
		client.PrependReactor("update", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
			a.(clienttesting.UpdateAction).GetObject().(*corev1.ConfigMap).ResourceVersion = "6"
			return false, nil, nil
		})
		c := &Controller{
			configMapClient: client.CoreV1().ConfigMaps(names.OperatorNamespace),
			writtenRecords:  ownwrites.NewForStore[*corev1.ConfigMap](store, names.OperatorNamespace, corev1.Resource("configmaps")),
			clock:           clock.RealClock{},
		}
		syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))
		for range 2 {
			if err := c.record(context.Background(), syncCtx, "python", failed); err != nil {
				t.Fatalf("%s: record: %v", tc.name, err)
			}
		}
		syncCtx.Queue().ShutDown()
		var writes []string
		for _, a := range client.Actions() {
			if a.GetVerb() == "create" || a.GetVerb() == "update" {
				writes = append(writes, a.GetVerb())
			}
		}
		if !slices.Equal(writes, []string{tc.verb}) {
			t.Errorf("%s: two syncs before the cache showed the record wrote %v, want one %s", tc.name, writes, tc.verb)
		}
	}
}
