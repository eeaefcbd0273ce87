package finalizer

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	samplesv1 "github.com/openshift/api/samples/v1"
	imagefake "github.com/openshift/client-go/image/clientset/versioned/fake"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	templatefake "github.com/openshift/client-go/template/clientset/versioned/fake"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions"
	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
)

// stuckSamples is a server that keeps showing an owned sample the caches never get.
type stuckSamples struct{ lists atomic.Int32 }

func (s *stuckSamples) OwnedSamples(context.Context) (int, error) {
	s.lists.Add(1)
	return 1, nil
}

// TestACleanupHeldBackIsLookedAtLessAndLessOften: while the server shows a sample the caches do
// not (or a samples sync is under way), the finalizer looks again after 100 ms, then backs off;
// it used to list the server every 100 ms for as long as that lasted.
func TestACleanupHeldBackIsLookedAtLessAndLessOften(t *testing.T) {
	for _, tc := range []struct {
		name string
		busy bool
	}{{"a create the caches do not show", false}, {"a samples sync under way", true}} {
		t.Run(tc.name, func(t *testing.T) {
			now := metav1.Now()
			cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster", UID: "u1", DeletionTimestamp: &now, Finalizers: []string{samplesv1.ConfigFinalizer}}}
			samples := samplesfake.NewSimpleClientset(cfg)
			samplesInf := samplesinformers.NewSharedInformerFactory(samples, 0)
			imageInf := imageinformers.NewSharedInformerFactory(imagefake.NewSimpleClientset(), 0)
			templateInf := templateinformers.NewSharedInformerFactory(templatefake.NewSimpleClientset(), 0)
			kubeInf := kubeinformers.NewSharedInformerFactory(kubefake.NewSimpleClientset(), 0)
			live := &stuckSamples{}
			var busyChecks atomic.Int32
			busy := func() bool {
				busyChecks.Add(1)
				return tc.busy
			}
			c := New(samplesInf.Samples().V1().Configs(), imageInf.Image().V1().ImageStreams(), templateInf.Template().V1().Templates(),
				kubeInf.Core().V1().ConfigMaps(), busy, live, samples.SamplesV1(), events.NewInMemoryRecorder("test", clock.RealClock{}))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			for _, start := range []func(<-chan struct{}){samplesInf.Start, imageInf.Start, templateInf.Start, kubeInf.Start} {
				start(ctx.Done())
			}
			go c.Run(ctx, 1)
			<-ctx.Done()
			looks := busyChecks.Load()
			// 2 s at 100, 200, 400, 800 ms... is five or six looks; every 100 ms was twenty.
			t.Logf("%d looks in 2 s (%d server lists)", looks, live.lists.Load())
			if looks == 0 || looks > 7 {
				t.Errorf("%d looks at the held-back cleanup in 2 s, want 1 to 7", looks)
			}
			if tc.busy && live.lists.Load() != 0 {
				t.Errorf("the server was listed %d times while a sync was under way", live.lists.Load())
			}
		})
	}
}
