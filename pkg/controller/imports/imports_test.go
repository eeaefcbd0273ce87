package imports

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

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
	}{
		{"nothing failed, no record: no write", nil, nil, nil},
		{"nothing failed, a record: delete", ours, nil, []string{"delete"}},
		{"nothing failed, someone else's ConfigMap: left alone", foreign, nil, nil},
		{"failures, no record: create", nil, failed, []string{"create"}},
		{"failures, same record: no write", ours, failed, nil},
		{"failures, other record: update", stale, failed, []string{"update"}},
		{"failures, someone else's ConfigMap: left alone", foreign, failed, nil},
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
			}
			if err := c.record(context.Background(), "python", tc.failed); err != nil {
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
