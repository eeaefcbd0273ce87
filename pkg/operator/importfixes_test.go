package operator

import (
	"testing"
	"time"

	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// Every change that reaches openshift-apiserver through a cache of its own is acted on a second
// time, once that cache has it; the pull secret reaches the nodes later still.
func TestImportFixesRetryAgainOnceTheServerHasTheChange(t *testing.T) {
	inf := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(), 0)
	sources := importFixes(importFixInformers{
		mirrorSets:  mirrorsets.NewInformers(inf.Config().V1().ImageTagMirrorSets(), inf.Config().V1().ImageDigestMirrorSets(), nil),
		rolloutWait: time.Hour,
	})
	want := map[string][]time.Duration{
		"Config":               {0},
		"Image":                {ServerCacheLag},
		"Proxy":                {0},
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
