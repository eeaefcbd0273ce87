package operator

import (
	"context"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/trigger"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// Every change that reaches openshift-apiserver through a cache of its own is acted on a second
// time, once that cache has it; the pull secret reaches the nodes later still. What reaches the
// server through its operator's rollout is acted on at once and at the rollout's end.
func TestImportFixesRetryAgainOnceTheServerHasTheChange(t *testing.T) {
	inf := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(), 0)
	sources := importFixes(importFixInformers{
		mirrorSets:  mirrorsets.NewInformers(inf.Config().V1().ImageTagMirrorSets(), inf.Config().V1().ImageDigestMirrorSets(), nil),
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
		mirrorSets:        mirrorsets.NewInformers(inf.Config().V1().ImageTagMirrorSets(), nil, nil),
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
