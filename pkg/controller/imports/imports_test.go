package imports

import (
	"context"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	imagefake "github.com/openshift/client-go/image/clientset/versioned/fake"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/common"
	pureimports "github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
)

// TestRecordWritesOnlyWhatDiffers states, for each starting point, the exact writes record makes.
func TestRecordWritesOnlyWhatDiffers(t *testing.T) {
	failed := map[string]string{"3.11": "manifest unknown"}
	ours := pureimports.ErrorConfigMap(common.OperatorNamespace, "python", failed)
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "python", Namespace: common.OperatorNamespace}}
	stale := ours.DeepCopy()
	stale.Data = map[string]string{"3.9": "old"}
	cases := []struct {
		name   string
		live   *corev1.ConfigMap
		failed map[string]string
		want   []string // verbs
		// createdBefore: an earlier sync created the record, and the cache does not show it yet.
		createdBefore bool
	}{
		{"nothing failed, no record: no write", nil, nil, nil, false},
		{"nothing failed, a record: delete", ours, nil, []string{"delete"}, false},
		{"nothing failed, someone else's ConfigMap: left alone", foreign, nil, nil, false},
		{"failures, no record: create", nil, failed, []string{"create"}, false},
		{"failures, same record: no write", ours, failed, nil, false},
		{"failures, other record: update", stale, failed, []string{"update"}, false},
		{"failures, someone else's ConfigMap: left alone", foreign, failed, nil, false},
		{"failures, record just created but not in the cache yet: no second create", nil, failed, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			client := fake.NewSimpleClientset()
			if tc.live != nil {
				_ = indexer.Add(tc.live)
				client = fake.NewSimpleClientset(tc.live)
			}
			c := &Controller{
				configMaps:      corelisters.NewConfigMapLister(indexer).ConfigMaps(common.OperatorNamespace),
				configMapClient: client.CoreV1().ConfigMaps(common.OperatorNamespace),
				createdRecords:  common.NewPendingCreates(clock.RealClock{}),
			}
			if tc.createdBefore {
				c.createdRecords.Created("python")
			}
			syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))
			defer syncCtx.Queue().ShutDown()
			if err := c.record(context.Background(), syncCtx, "python", tc.failed); err != nil {
				t.Fatalf("record: %v", err)
			}
			var verbs []string
			for _, a := range client.Actions() {
				if a.GetVerb() != "list" && a.GetVerb() != "watch" {
					verbs = append(verbs, a.GetVerb())
				}
			}
			if len(verbs) != len(tc.want) || (len(verbs) > 0 && verbs[0] != tc.want[0]) {
				t.Errorf("writes = %v, want %v", verbs, tc.want)
			}
		})
	}
}

func TestErrorRecordFilterSeesTombstones(t *testing.T) {
	record := pureimports.ErrorConfigMap(common.OperatorNamespace, "python", map[string]string{"3.11": "not found"})
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: common.OperatorNamespace}}
	for _, tc := range []struct {
		name string
		obj  interface{}
		want bool
	}{
		{"an error record", record, true},
		{"another ConfigMap", other, false},
		{"an error record deleted while the informer relisted", cache.DeletedFinalStateUnknown{Key: "openshift-cluster-samples-operator/python", Obj: record}, true},
		{"another ConfigMap deleted while the informer relisted", cache.DeletedFinalStateUnknown{Key: "openshift-cluster-samples-operator/kube-root-ca.crt", Obj: other}, false},
	} {
		if got := isErrorRecord(tc.obj); got != tc.want {
			t.Errorf("%s: isErrorRecord = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRetryWaitsForAPendingRewrite: a due retry is sent for a stream the operator leaves as it
// is, and skipped, with the next one scheduled, for a stream whose failed tag is about to point
// at another image.
func TestRetryWaitsForAPendingRewrite(t *testing.T) {
	tag := func(ref string) []imagev1.TagReference {
		return []imagev1.TagReference{{Name: "3.3", From: &corev1.ObjectReference{Kind: "DockerImage", Name: ref}}}
	}
	live := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: common.SamplesNamespace, UID: "u1", ResourceVersion: "7"},
		Spec: imagev1.ImageStreamSpec{Tags: tag("registry.redhat.io/ubi9/ruby-33:latest")}}
	failed := map[string]string{"3.3": "not found"}
	for _, tc := range []struct {
		name      string
		wantRef   string
		wantSends int
	}{
		{"the same image wanted: retried", "registry.redhat.io/ubi9/ruby-33:latest", 1},
		{"another image wanted (samplesRegistry changed): skipped", "mirror.local:5000/ubi9/ruby-33:latest", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := imagefake.NewSimpleClientset()
			now := time.Now()
			c := &Controller{
				retryInterval: time.Minute,
				clock:         clocktesting.NewFakePassiveClock(now),
				countRetry:    func(string) {},
				importClient:  client.ImageV1().ImageStreamImports(common.SamplesNamespace),
				nextRetry:     map[string]time.Time{"ruby": now.Add(-time.Second)},
			}
			want := live.DeepCopy()
			want.Spec.Tags = tag(tc.wantRef)
			syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))
			defer syncCtx.Queue().ShutDown()
			if err := c.retryWhenDue(context.Background(), syncCtx, live, want, failed); err != nil {
				t.Fatalf("retryWhenDue: %v", err)
			}
			sends := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource == "imagestreamimports" {
					sends++
				}
			}
			if sends != tc.wantSends {
				t.Errorf("ImageStreamImports sent = %d, want %d", sends, tc.wantSends)
			}
			// Either way the next turn is about one interval away, not at once: no busy loop.
			if next := c.nextRetry["ruby"]; next.Sub(now) < 50*time.Second {
				t.Errorf("next retry in %s, want about %s", next.Sub(now), c.retryInterval)
			}
		})
	}
}
