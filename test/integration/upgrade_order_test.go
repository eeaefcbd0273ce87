package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	"github.com/openshift/library-go/pkg/config/clusteroperator/v1helpers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

// revision is an object's resourceVersion as a number. One etcd stores every resource of the test
// control plane (the aggregated image and template APIs included), so these are etcd revisions and
// order writes across resources.
func revision(t *testing.T, obj metav1.Object) int64 {
	t.Helper()
	rv, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q of %s is not an etcd revision: %v", obj.GetResourceVersion(), obj.GetName(), err)
	}
	return rv
}

// upgradeRecord is every write to the samples, the Config and the ClusterOperator, seen through
// watches opened before the upgrade starts: a watch delivers each write, so nothing between two
// polls is missed.
type upgradeRecord struct {
	mu sync.Mutex
	// sampleAt is the revision at which each sample ("imagestream/python") first carried the new version.
	sampleAt map[string]int64
	// configAt is the revision at which the Config's status.version first was the new version.
	configAt int64
	// operators is each state of the ClusterOperator, in order.
	operators []*configv1.ClusterOperator
	stops     []func()
	// stopping is set before the watches are closed, whose streams may end with an error then.
	stopping atomic.Bool
}

func (e *env) recordUpgrade(t *testing.T, version string) *upgradeRecord {
	t.Helper()
	ctx := context.Background()
	rec := &upgradeRecord{sampleAt: map[string]int64{}}
	// A watch without a resourceVersion first sends the current state of every object, then
	// each write.
	watchAll := func(kind string, open func(context.Context, metav1.ListOptions) (watch.Interface, error), opts metav1.ListOptions, seen func(watch.Event)) {
		w, err := open(ctx, opts)
		if err != nil {
			t.Fatalf("watching %s: %v", kind, err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					if !rec.stopping.Load() {
						t.Errorf("watching %s: %v", kind, ev.Object)
					}
					continue
				}
				rec.mu.Lock()
				seen(ev)
				rec.mu.Unlock()
			}
		}()
		rec.stops = append(rec.stops, func() { w.Stop(); <-done })
	}
	sample := func(kind string) func(watch.Event) {
		return func(ev watch.Event) {
			obj, ok := ev.Object.(metav1.Object)
			if !ok || obj.GetAnnotations()[desired.VersionAnnotation] != version {
				return
			}
			if _, seen := rec.sampleAt[kind+"/"+obj.GetName()]; !seen {
				rec.sampleAt[kind+"/"+obj.GetName()] = revision(t, obj)
			}
		}
	}
	watchAll("imagestreams", e.images.ImageV1().ImageStreams("openshift").Watch, metav1.ListOptions{}, sample("imagestream"))
	watchAll("templates", e.tmpl.TemplateV1().Templates("openshift").Watch, metav1.ListOptions{}, sample("template"))
	watchAll("configs", e.samples.SamplesV1().Configs().Watch, metav1.ListOptions{}, func(ev watch.Event) {
		if cfg, ok := ev.Object.(*samplesv1.Config); ok && cfg.Status.Version == version && rec.configAt == 0 {
			rec.configAt = revision(t, cfg)
		}
	})
	watchAll("clusteroperators", e.config.ConfigV1().ClusterOperators().Watch, metav1.ListOptions{FieldSelector: "metadata.name=openshift-samples"}, func(ev watch.Event) {
		if co, ok := ev.Object.(*configv1.ClusterOperator); ok {
			rec.operators = append(rec.operators, co.DeepCopy())
		}
	})
	t.Cleanup(rec.stop)
	return rec
}

func (r *upgradeRecord) stop() {
	r.stopping.Store(true)
	for _, stop := range r.stops {
		stop()
	}
	r.stops = nil
}

func operatorVersion(co *configv1.ClusterOperator) string {
	for _, v := range co.Status.Versions {
		if v.Name == "operator" {
			return v.Version
		}
	}
	return ""
}

// TestUpgradeMovesEverySampleAndThenTheVersion runs an operator of version v1, then one of v2, as
// an upgrade does. Every sample must carry v2 before the Config's status.version moves to it, and
// the ClusterOperator must stay Available=True and Degraded=False through every write of the
// upgrade (OpenShift's upgrade tests fail an operator that drops Available), report Progressing
// naming both versions meanwhile, and report v2 only after the Config does.
func TestUpgradeMovesEverySampleAndThenTheVersion(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	inv := x86Inventory(t)
	op := e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	e.waitClusterOperator(t, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionFalse, "", "v1")
	op.stop(t)

	rec := e.recordUpgrade(t, "v2")
	opts := defaultOptions()
	opts.Version = "v2"
	e.startOperator(opts)
	e.waitManaged(t, inv, "v2")
	e.waitClusterOperator(t, configv1.ConditionTrue, configv1.ConditionFalse, configv1.ConditionFalse, "", "v2")

	want := len(inv.ImageStreamNames()) + len(inv.TemplateNames())
	eventually(t, 10*time.Second, func() (bool, string) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.sampleAt) == want && rec.configAt != 0,
			fmt.Sprintf("the watches saw %d of %d samples reach v2, Config at v2: %t", len(rec.sampleAt), want, rec.configAt != 0)
	})
	rec.stop()

	for sample, at := range rec.sampleAt {
		if at > rec.configAt {
			t.Errorf("%s carried v2 at revision %d, after the Config's status.version moved to v2 (revision %d)", sample, at, rec.configAt)
		}
	}
	namedBoth := false
	for _, co := range rec.operators {
		at := revision(t, co)
		for _, c := range co.Status.Conditions {
			switch {
			case c.Type == configv1.OperatorAvailable && c.Status != configv1.ConditionTrue,
				c.Type == configv1.OperatorDegraded && c.Status == configv1.ConditionTrue:
				t.Errorf("ClusterOperator at revision %d: %s=%s (%s: %s) during the upgrade", at, c.Type, c.Status, c.Reason, c.Message)
			}
		}
		if p := v1helpers.FindStatusCondition(co.Status.Conditions, configv1.OperatorProgressing); p != nil && p.Status == configv1.ConditionTrue &&
			strings.Contains(p.Message, "v1") && strings.Contains(p.Message, "v2") {
			namedBoth = true
		}
		if operatorVersion(co) == "v2" && at < rec.configAt {
			t.Errorf("ClusterOperator reported v2 at revision %d, before the Config's status.version (revision %d)", at, rec.configAt)
		}
	}
	if !namedBoth {
		t.Errorf("no ClusterOperator state during the upgrade was Progressing=True naming v1 and v2; saw %d states", len(rec.operators))
	}
	e.assertNoCreateOfWhatExists(t)
	t.Logf("upgrade: %d samples moved to v2 by revision %d; ClusterOperator written %d times", len(rec.sampleAt), rec.configAt, len(rec.operators))
}
