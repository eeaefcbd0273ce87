package operator

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/mirrorsetinformers"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/trigger"
)

// Every change that reaches openshift-apiserver through a cache of its own is acted on a second
// time, once that cache has it; the pull secret reaches the nodes later still. What reaches the
// server through its operator's rollout is acted on at once and at the rollout's end.
func TestImportFixesRetryAgainOnceTheServerHasTheChange(t *testing.T) {
	inf := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(), 0)
	sources := importFixes(importFixInformers{
		mirrorSets:  mirrorsetinformers.New(inf.Config().V1().ImageTagMirrorSets(), inf.Config().V1().ImageDigestMirrorSets(), nil),
		rolloutWait: time.Hour,
	})
	want := map[string][]time.Duration{
		"Config":               {0},
		"Image":                {0},
		"Proxy":                {0},
		"ClusterOperator":      {0},
		"Secret":               {time.Hour, ServerCacheLag},
		"ImageTagMirrorSet":    {ServerCacheLag},
		"ImageDigestMirrorSet": {ServerCacheLag},
	}
	got := map[string][]time.Duration{}
	for _, s := range sources {
		got[s.Kind] = append(got[s.Kind], s.Again)
	}
	for kind, again := range want {
		if len(got[kind]) != len(again) {
			t.Errorf("%s: %v, want %v", kind, got[kind], again)
			continue
		}
		for i := range again {
			if got[kind][i] != again[i] {
				t.Errorf("%s: acted on again after %v, want %v", kind, got[kind], again)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("sources %v, want the kinds of %v", got, want)
	}
}

// TestTheEndOfOpenShiftAPIServersRolloutRetriesEveryFailingImport: the image configuration's
// allowedRegistriesForImport and the Proxy reach openshift-apiserver as its operator rolls its
// pods; the ClusterOperator's Progressing turning False is a change, its turning True is not.
func TestTheEndOfOpenShiftAPIServersRolloutRetriesEveryFailingImport(t *testing.T) {
	co := func(progressing configv1.ConditionStatus) *configv1.ClusterOperator {
		return &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: APIServerOperatorName},
			Status: configv1.ClusterOperatorStatus{Conditions: []configv1.ClusterOperatorStatusCondition{
				{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue},
				{Type: configv1.OperatorProgressing, Status: progressing}}}}
	}
	client := configfake.NewSimpleClientset(co(configv1.ConditionFalse))
	inf := configinformers.NewSharedInformerFactory(client, 0)
	sources := importFixes(importFixInformers{
		apiServerOperator: inf.Config().V1().ClusterOperators().Informer(),
		mirrorSets:        mirrorsetinformers.New(inf.Config().V1().ImageTagMirrorSets(), nil, nil),
	})
	var mu sync.Mutex
	var changes []trigger.Change
	if err := trigger.Watch(sources, func(c trigger.Change) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, c)
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inf.Start(ctx.Done())
	inf.WaitForCacheSync(ctx.Done())
	observed := func() []trigger.Change {
		mu.Lock()
		defer mu.Unlock()
		return append([]trigger.Change(nil), changes...)
	}
	update := func(progressing configv1.ConditionStatus, rv string) {
		t.Helper()
		o := co(progressing)
		o.ResourceVersion = rv
		if _, err := client.ConfigV1().ClusterOperators().UpdateStatus(ctx, o, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update(configv1.ConditionTrue, "2")
	time.Sleep(100 * time.Millisecond)
	if got := observed(); len(got) != 0 {
		t.Fatalf("changes %+v as the rollout began, want none", got)
	}
	update(configv1.ConditionFalse, "3")
	deadline := time.Now().Add(5 * time.Second)
	for len(observed()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := observed(); len(got) != 1 || got[0].Kind != "ClusterOperator" || got[0].Name != APIServerOperatorName {
		t.Errorf("changes %+v, want one: the end of openshift-apiserver's rollout", got)
	}
}

func TestRolledOutReadsProgressing(t *testing.T) {
	for _, tc := range []struct {
		name       string
		conditions []configv1.ClusterOperatorStatusCondition
		want       bool
	}{
		{"no conditions yet", nil, false},
		{"progressing", []configv1.ClusterOperatorStatusCondition{{Type: configv1.OperatorProgressing, Status: configv1.ConditionTrue}}, false},
		{"unknown", []configv1.ClusterOperatorStatusCondition{{Type: configv1.OperatorProgressing, Status: configv1.ConditionUnknown}}, false},
		{"done", []configv1.ClusterOperatorStatusCondition{
			{Type: configv1.OperatorDegraded, Status: configv1.ConditionTrue},
			{Type: configv1.OperatorProgressing, Status: configv1.ConditionFalse}}, true},
	} {
		if got := rolledOut(&configv1.ClusterOperator{Status: configv1.ClusterOperatorStatus{Conditions: tc.conditions}}); got != tc.want {
			t.Errorf("%s: rolledOut = %v, want %v", tc.name, got, tc.want)
		}
	}
	if rolledOut(&configv1.Proxy{}) {
		t.Error("rolledOut of a Proxy = true, want false")
	}
}

// secretHandlers hands the handlers a trigger registers to the test.
type secretHandlers struct{ handlers []cache.ResourceEventHandler }

func (f *secretHandlers) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	f.handlers = append(f.handlers, h)
	return nil, nil
}

// TestOnlyTheImportsCredentialsInOpenShiftRetryImports: openshift-controller-manager refreshes the
// internal registry's token in the dockercfg secret of each service account of openshift about
// every 36 minutes; those secrets serve no sample's import, and their creates, refreshes and
// deletes retry nothing. Credentials for a registry the samples import from, or for a mirror of
// theirs, retry every failing import when they come, change or go.
func TestOnlyTheImportsCredentialsInOpenShiftRetryImports(t *testing.T) {
	secrets := &secretHandlers{}
	sources := importFixes(importFixInformers{
		samplesSecret: secrets,
		importRegistries: func() sets.Set[string] {
			return sets.New("registry.redhat.io", "127.0.0.1:5000")
		},
		mirrorSets: mirrorsetinformers.New(configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(), 0).Config().V1().ImageTagMirrorSets(), nil, nil),
	})
	var changes []trigger.Change
	if err := trigger.Watch(sources, func(c trigger.Change) { changes = append(changes, c) }); err != nil {
		t.Fatal(err)
	}
	cached := func(name, rv string, typ corev1.SecretType, key, cfg string) *corev1.Secret {
		t.Helper()
		o, err := digestSecretData(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "openshift", ResourceVersion: rv},
			Type: typ, Data: map[string][]byte{key: []byte(cfg)}})
		if err != nil {
			t.Fatal(err)
		}
		return o.(*corev1.Secret)
	}
	dockercfg := func(name, rv, cfg string) *corev1.Secret {
		return cached(name, rv, corev1.SecretTypeDockercfg, corev1.DockerConfigKey, cfg)
	}
	const internal = `"image-registry.openshift-image-registry.svc:5000":{"auth":"%s"},"172.30.12.7:5000":{"auth":"%s"}`
	builder := func(rv, token string) *corev1.Secret {
		return dockercfg("builder-dockercfg-x7k2q", rv, "{"+fmt.Sprintf(internal, token, token)+"}")
	}
	mixed := func(rv, internalToken, samplesAuth string) *corev1.Secret {
		return dockercfg("mixed", rv, "{"+fmt.Sprintf(internal, internalToken, internalToken)+`,"registry.redhat.io":{"auth":"`+samplesAuth+`"}}`)
	}
	mirror := func(rv, auth string) *corev1.Secret {
		return cached("mirror-credentials", rv, corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey, `{"auths":{"127.0.0.1:5000":{"auth":"`+auth+`"}}}`)
	}
	opaque := func(rv, v string) *corev1.Secret {
		return cached("app-settings", rv, corev1.SecretTypeOpaque, "registry.redhat.io", v)
	}
	h := secrets.handlers
	if len(h) != 1 {
		t.Fatalf("%d handlers on the secrets of openshift, want 1", len(h))
	}
	for _, step := range []struct {
		name   string
		event  func()
		change bool
	}{
		{"a service account's dockercfg secret created", func() { h[0].OnAdd(builder("1", "dG9rZW46MQ=="), false) }, false},
		{"its token refreshed", func() { h[0].OnUpdate(builder("1", "dG9rZW46MQ=="), builder("2", "dG9rZW46Mg==")) }, false},
		{"and refreshed again", func() { h[0].OnUpdate(builder("2", "dG9rZW46Mg=="), builder("3", "dG9rZW46Mw==")) }, false},
		{"the dockercfg secret deleted", func() { h[0].OnDelete(builder("3", "dG9rZW46Mw==")) }, false},
		{"an opaque secret changed", func() { h[0].OnUpdate(opaque("1", "a"), opaque("2", "b")) }, false},
		{"credentials for a mirror created", func() { h[0].OnAdd(mirror("1", "YTpi"), false) }, true},
		{"they change", func() { h[0].OnUpdate(mirror("1", "YTpi"), mirror("2", "YTpj")) }, true},
		{"a resync", func() { h[0].OnUpdate(mirror("2", "YTpj"), mirror("2", "YTpj")) }, false},
		{"the internal token beside the samples registry's refreshed", func() { h[0].OnUpdate(mixed("1", "MQ==", "YTpi"), mixed("2", "Mg==", "YTpi")) }, false},
		{"the samples registry's credentials beside it changed", func() { h[0].OnUpdate(mixed("2", "Mg==", "YTpi"), mixed("3", "Mg==", "YTpk")) }, true},
		{"the mirror's credentials deleted", func() { h[0].OnDelete(mirror("2", "YTpj")) }, true},
	} {
		before := len(changes)
		step.event()
		if got := len(changes) > before; got != step.change {
			t.Errorf("%s: a retry of every failing import: %t, want %t", step.name, got, step.change)
		}
	}
}
