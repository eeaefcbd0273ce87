package clusteroperatorcontrol

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/informertest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// troubles is what the operator observes, set by the test; set tells the listeners.
type troubles struct {
	mu        sync.Mutex
	observed  clusteroperator.Observed
	listeners []func()
}

func (t *troubles) Observed() clusteroperator.Observed {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.observed
}

func (t *troubles) OnChange(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.listeners = append(t.listeners, f)
}

func (t *troubles) listening() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.listeners)
}

// set changes what is observed, and tells the listeners when tell.
func (t *troubles) set(o clusteroperator.Observed, tell bool) {
	t.mu.Lock()
	t.observed = o
	listeners := slices.Clone(t.listeners)
	t.mu.Unlock()
	for _, f := range listeners {
		if tell {
			f()
		}
	}
}

// installed is a Config whose samples of version are all installed.
func installed(version string) *samplesv1.Config {
	return &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed},
		Status: samplesv1.ConfigStatus{ManagementState: operatorv1.Managed, Version: version, Conditions: []samplesv1.ConfigCondition{
			{Type: samplesv1.SamplesExist, Status: corev1.ConditionTrue},
			{Type: samplesv1.ConfigurationValid, Status: corev1.ConditionTrue},
		}},
	}
}

func operator(conditions ...configv1.ClusterOperatorStatusCondition) *configv1.ClusterOperator {
	return &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: clusteroperator.Name, ResourceVersion: "1"},
		Status: configv1.ClusterOperatorStatus{Conditions: conditions}}
}

// outageSince is an API answering 503 since since.
func outageSince(since time.Time) clusteroperator.Observed {
	return clusteroperator.Observed{Outages: []clusteroperator.Outage{{API: "image.openshift.io", Since: since, Message: "503"}}}
}

func conditionOf(st configv1.ClusterOperatorStatus, t configv1.ClusterStatusConditionType) configv1.ClusterOperatorStatusCondition {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c
		}
	}
	return configv1.ClusterOperatorStatusCondition{}
}

// fixture is the controller newController builds over a fake clientset, its caches holding the
// Config and the ClusterOperator given (the informers are not run), synced by hand.
type fixture struct {
	c         *Controller
	client    *configfake.Clientset
	operators cache.Store
	troubles  *troubles
	clock     *clocktesting.FakePassiveClock
	recorder  events.InMemoryRecorder
}

func newFixture(t *testing.T, cfg *samplesv1.Config, co *configv1.ClusterOperator) *fixture {
	t.Helper()
	var objs []runtime.Object
	if co != nil {
		objs = append(objs, co.DeepCopy())
	}
	client := configfake.NewSimpleClientset(objs...)
	configs := samplesinformers.NewSharedInformerFactory(samplesfake.NewSimpleClientset(), 0).Samples().V1().Configs()
	if cfg != nil {
		if err := configs.Informer().GetIndexer().Add(cfg); err != nil {
			t.Fatal(err)
		}
	}
	operators := configinformers.NewSharedInformerFactory(client, 0).Config().V1().ClusterOperators()
	if co != nil {
		if err := operators.Informer().GetIndexer().Add(co); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{
		client:    client,
		operators: operators.Informer().GetStore(),
		troubles:  &troubles{},
		clock:     clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
	}
	f.recorder = events.NewInMemoryRecorder("test", f.clock)
	f.c = newController("v1", configs, operators, client.ConfigV1(), f.troubles, f.clock)
	return f
}

// sync runs one sync and returns the writes it sent ("create", or "update status" and the
// ClusterOperator written), what it queued for later and its error.
func (f *fixture) sync() ([]string, []*configv1.ClusterOperator, []string, error) {
	f.client.ClearActions()
	syncCtx := informertest.NewSyncContext(f.recorder)
	err := f.c.sync(context.Background(), syncCtx)
	verbs, sent := informertest.Writes(f.client.Actions())
	written := make([]*configv1.ClusterOperator, len(sent))
	for i, o := range sent {
		written[i] = o.(*configv1.ClusterOperator)
	}
	return verbs, written, syncCtx.Later(), err
}

// told returns the events recorded, as "Reason: message".
func (f *fixture) told() []string {
	var out []string
	for _, e := range f.recorder.Events() {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}

// A missing ClusterOperator is created, and told by an event; its status is written at once when
// there is a Config to report on, and not before the first Config.
func TestAMissingClusterOperatorIsCreatedAndToldOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   *samplesv1.Config
		verbs []string
	}{
		{"no Config", nil, []string{"create"}},
		{"a Config", installed("v1"), []string{"create", "update status"}},
	} {
		f := newFixture(t, tc.cfg, nil)
		verbs, written, _, err := f.sync()
		if err != nil || !slices.Equal(verbs, tc.verbs) {
			t.Fatalf("%s: sync wrote %q (%v), want %q", tc.name, verbs, err, tc.verbs)
		}
		if written[0].Name != clusteroperator.Name {
			t.Errorf("%s: created %q, want %q", tc.name, written[0].Name, clusteroperator.Name)
		}
		if got, want := f.told(), []string{"ClusterOperatorCreated: created ClusterOperator " + clusteroperator.Name}; !slices.Equal(got, want) {
			t.Errorf("%s: told %q, want %q", tc.name, got, want)
		}
	}
}

// The status written is what pkg/clusteroperator computes from the Config, the version and what
// the operator observes, at the controller's clock: here the samples are installed while an API
// has answered 503 for longer than the grace.
func TestTheStatusWrittenIsWhatTheConfigAndTheTroublesSay(t *testing.T) {
	cfg := installed("v1")
	f := newFixture(t, cfg, operator())
	observed := outageSince(f.clock.Now().Add(-time.Hour))
	f.troubles.set(observed, false)
	verbs, written, _, err := f.sync()
	if err != nil || !slices.Equal(verbs, []string{"update status"}) {
		t.Fatalf("sync wrote %q (%v), want one status update", verbs, err)
	}
	st := written[0].Status
	if want := clusteroperator.Status(configv1.ClusterOperatorStatus{}, cfg, "v1", observed, f.clock); !equality.Semantic.DeepEqual(st, want) {
		t.Errorf("wrote\n%+v\nwant\n%+v", st, want)
	}
	if c := conditionOf(st, configv1.OperatorAvailable); c.Status != configv1.ConditionTrue {
		t.Errorf("Available %+v, want True", c)
	}
	if c := conditionOf(st, configv1.OperatorDegraded); c.Status != configv1.ConditionTrue || c.Reason != clusteroperator.ReasonAPIUnavailable {
		t.Errorf("Degraded %+v, want True for the outage", c)
	}
	if len(st.Versions) != 1 || st.Versions[0].Version != "v1" {
		t.Errorf("versions %+v, want v1", st.Versions)
	}
}

// Once the Config is gone, a ClusterOperator that has conditions is told of the deletion; one
// that has none yet is left alone until the first Config.
func TestWithoutAConfig(t *testing.T) {
	f := newFixture(t, nil, operator())
	if verbs, _, _, err := f.sync(); err != nil || len(verbs) != 0 {
		t.Errorf("no condition yet: sync wrote %q (%v), want nothing", verbs, err)
	}
	f = newFixture(t, nil, operator(configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue}))
	verbs, written, _, err := f.sync()
	if err != nil || !slices.Equal(verbs, []string{"update status"}) {
		t.Fatalf("conditions: sync wrote %q (%v), want one status update", verbs, err)
	}
	if c := conditionOf(written[0].Status, configv1.OperatorProgressing); c.Reason != clusteroperator.ReasonDeletionInProgress {
		t.Errorf("Progressing %+v, want the deletion", c)
	}
}

// A status that is already what the controller computes is not written again.
func TestAnUnchangedStatusIsNotWrittenAgain(t *testing.T) {
	f := newFixture(t, installed("v1"), operator())
	verbs, written, _, err := f.sync()
	if err != nil || len(verbs) != 1 {
		t.Fatalf("first sync wrote %q (%v), want one status update", verbs, err)
	}
	if err := f.operators.Update(written[0]); err != nil {
		t.Fatal(err)
	}
	f.clock.SetTime(f.clock.Now().Add(time.Minute))
	if verbs, _, _, err := f.sync(); err != nil || len(verbs) != 0 {
		t.Errorf("the second sync, a minute later, wrote %q (%v); want nothing", verbs, err)
	}
}

// When a grace runs out, Degraded follows without any event: the sync comes back then, and only
// while a grace is running.
func TestTheSyncComesBackWhenAGraceRunsOut(t *testing.T) {
	for _, tc := range []struct {
		name     string
		observed func(now time.Time) clusteroperator.Observed
		want     []string
	}{
		{"nothing observed", func(time.Time) clusteroperator.Observed { return clusteroperator.Observed{} }, nil},
		{"an outage half a minute old", func(now time.Time) clusteroperator.Observed { return outageSince(now.Add(-30 * time.Second)) },
			[]string{fmt.Sprintf("%s after %s", factory.DefaultQueueKey, clusteroperator.DegradedGrace-30*time.Second)}},
		{"an outage past its grace", func(now time.Time) clusteroperator.Observed { return outageSince(now.Add(-time.Hour)) }, nil},
	} {
		f := newFixture(t, installed("v1"), operator())
		f.troubles.set(tc.observed(f.clock.Now()), false)
		if _, _, queued, err := f.sync(); err != nil || !slices.Equal(queued, tc.want) {
			t.Errorf("%s: sync queued %q (%v), want %q", tc.name, queued, err, tc.want)
		}
	}
}

// A create that finds the ClusterOperator there is left to the informer, which brings it; a status
// update that conflicts was computed from a stale ClusterOperator, whose update event brings the
// controller back. Any other refusal is returned, to be retried, and nothing is told.
func TestFailedWrites(t *testing.T) {
	refused := errors.New("refused")
	for _, tc := range []struct {
		name     string
		existing *configv1.ClusterOperator
		verb     string
		answer   error
		wantErr  error
	}{
		{"create, already there", nil, "create", apierrors.NewAlreadyExists(configv1.Resource("clusteroperators"), clusteroperator.Name), nil},
		{"create, refused", nil, "create", refused, refused},
		{"status update, a conflict", operator(), "update", apierrors.NewConflict(configv1.Resource("clusteroperators"), clusteroperator.Name, errors.New("stale")), nil},
		{"status update, refused", operator(), "update", refused, refused},
	} {
		f := newFixture(t, installed("v1"), tc.existing)
		f.client.PrependReactor(tc.verb, "clusteroperators", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, tc.answer
		})
		verbs, _, _, err := f.sync()
		if !errors.Is(err, tc.wantErr) || len(verbs) != 1 || len(f.told()) != 0 {
			t.Errorf("%s: sync wrote %q, told %q and returned %v; want one write, nothing told, %v", tc.name, verbs, f.told(), err, tc.wantErr)
		}
	}
}

// unreadable is a lister of Configs or ClusterOperators whose cache cannot be read.
type unreadable struct{}

var errUnreadable = errors.New("unreadable")

func (unreadable) Get(string) (*configv1.ClusterOperator, error) { return nil, errUnreadable }
func (unreadable) List(labels.Selector) ([]*configv1.ClusterOperator, error) {
	return nil, errUnreadable
}

type unreadableConfigs struct{}

func (unreadableConfigs) Get(string) (*samplesv1.Config, error) { return nil, errUnreadable }
func (unreadableConfigs) List(labels.Selector) ([]*samplesv1.Config, error) {
	return nil, errUnreadable
}

// A cache that cannot be read is an error to retry, and nothing is written on it.
func TestAnUnreadableCacheWritesNothing(t *testing.T) {
	f := newFixture(t, installed("v1"), nil)
	f.c.configs = unreadableConfigs{}
	if verbs, _, _, err := f.sync(); !errors.Is(err, errUnreadable) || len(verbs) != 0 {
		t.Errorf("the Configs unreadable: sync wrote %q and returned %v; want nothing written and the error", verbs, err)
	}
	f = newFixture(t, installed("v1"), nil)
	f.c.operators = unreadable{}
	if verbs, _, _, err := f.sync(); !errors.Is(err, errUnreadable) || len(verbs) != 0 {
		t.Errorf("the ClusterOperators unreadable: sync wrote %q and returned %v; want nothing written and the error", verbs, err)
	}
}

// The controller New wires creates the ClusterOperator at its start though nothing has changed,
// and writes its status again when the Config changes, when the troubles tell of a change, when
// a ConfigMap of the operator namespace changes (an import error record) and when someone else
// writes the ClusterOperator's status.
func TestTheRunningControllerFollowsItsInformersAndTheTroubles(t *testing.T) {
	client := configfake.NewSimpleClientset()
	samples := samplesfake.NewSimpleClientset()
	kube := kubefake.NewSimpleClientset()
	samplesInf := samplesinformers.NewSharedInformerFactory(samples, 0)
	configInf := configinformers.NewSharedInformerFactory(client, 0)
	kubeInf := kubeinformers.NewSharedInformerFactory(kube, 0)
	tr := &troubles{}
	ctrl := New("v1", samplesInf.Samples().V1().Configs(), configInf.Config().V1().ClusterOperators(), kubeInf.Core().V1().ConfigMaps(),
		client.ConfigV1(), tr, events.NewInMemoryRecorder("test", clock.RealClock{}), clock.RealClock{})
	ctx := informertest.Run(t, ctrl, samplesInf, configInf, kubeInf)

	operators := client.ConfigV1().ClusterOperators()
	waitFor := func(what string, ok func(*configv1.ClusterOperator) bool) (co *configv1.ClusterOperator) {
		t.Helper()
		informertest.Eventually(t, what, func() (bool, string) {
			var err error
			co, err = operators.Get(ctx, clusteroperator.Name, metav1.GetOptions{})
			return err == nil && ok(co), fmt.Sprintf("the ClusterOperator is %+v (%v)", co, err)
		})
		return co
	}
	degradedBy := func(reason string) func(*configv1.ClusterOperator) bool {
		return func(co *configv1.ClusterOperator) bool {
			c := conditionOf(co.Status, configv1.OperatorDegraded)
			return c.Status == configv1.ConditionTrue && c.Reason == reason
		}
	}

	waitFor("at the start", func(*configv1.ClusterOperator) bool { return true })
	if _, err := samples.SamplesV1().Configs().Create(ctx, installed("v1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("a Config", func(co *configv1.ClusterOperator) bool {
		return conditionOf(co.Status, configv1.OperatorAvailable).Status == configv1.ConditionTrue
	})
	// The post-start hook adds the troubles' listener right after it queues the first sync.
	if n := tr.listening(); n != 1 {
		t.Fatalf("%d listeners on the troubles, want one", n)
	}
	tr.set(outageSince(time.Now().Add(-time.Hour)), true)
	waitFor("an outage told of", degradedBy(clusteroperator.ReasonAPIUnavailable))

	// Only the ConfigMap's event brings the controller back to see this change.
	tr.set(clusteroperator.Observed{}, false)
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: names.OperatorNamespace, Name: "ruby"}}
	if _, err := kube.CoreV1().ConfigMaps(names.OperatorNamespace).Create(ctx, record, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	co := waitFor("a ConfigMap's event", func(co *configv1.ClusterOperator) bool { return !degradedBy(clusteroperator.ReasonAPIUnavailable)(co) })

	// Someone else's write, with a resourceVersion of its own as the server would give it.
	co.Status.Conditions, co.ResourceVersion = nil, "100"
	if _, err := operators.UpdateStatus(ctx, co, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("another writer", func(co *configv1.ClusterOperator) bool { return len(co.Status.Conditions) == 3 })
}
