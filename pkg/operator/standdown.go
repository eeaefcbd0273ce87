package operator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/standdown"
)

// errStandDownLifted ends the process when a copy that stood down may work again: its controllers
// ran once already and cannot be started twice, and a restart decides afresh.
var errStandDownLifted = errors.New("the cluster-version operator no longer manages the samples: restarting to take them over")

// operatorConditions is OLM's OperatorCondition, named by OPERATOR_CONDITION_NAME in the
// operator's namespace; OLM lets the operator's service account get, update and patch it.
var operatorConditions = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v2", Resource: "operatorconditions"}

// gate keeps a copy installed by OLM from fighting the cluster-version operator's: it decides,
// from the ClusterVersion informer, whether to stand down, before this copy campaigns for the
// leader lease it would share with the CVO's copy. A copy the CVO installed has no gate.
type gate struct {
	csv      string // the OperatorCondition's name, which OLM gives its CSV; "" for no gate
	versions configlisters.ClusterVersionLister
	synced   cache.InformerSynced
	dynamic  dynamic.Interface
	recorder events.Recorder
	clock    clock.PassiveClock

	mu       sync.Mutex
	decided  bool
	decision standdown.Decision
	changed  chan struct{} // closed, and replaced, on every change of decision
	// reports counts the decisions reported: a retry of an older report's write gives up once
	// a newer one was made.
	reports int
	// retryDelay is the first wait before a failed OperatorCondition write is retried.
	retryDelay time.Duration
}

// newGate watches the ClusterVersion through inf (field-selected to its one name); with csv
// empty it returns nil, an open gate.
func newGate(csv string, inf configinformers.ClusterVersionInformer, dyn dynamic.Interface, recorder events.Recorder, clk clock.PassiveClock) (*gate, error) {
	if csv == "" {
		return nil, nil
	}
	g := &gate{csv: csv, versions: inf.Lister(), synced: inf.Informer().HasSynced, dynamic: dyn,
		recorder: recorder, clock: clk, changed: make(chan struct{}), retryDelay: time.Second}
	_, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { g.decide() },
		UpdateFunc: func(_, _ interface{}) { g.decide() },
		DeleteFunc: func(interface{}) { g.decide() },
	})
	return g, err
}

// decide recomputes the decision from the lister, once it has synced.
func (g *gate) decide() {
	if !g.synced() {
		return
	}
	cv, err := g.versions.Get(standdown.ClusterVersionName)
	if apierrors.IsNotFound(err) {
		cv = nil
	} else if err != nil {
		klog.ErrorS(err, "Reading the ClusterVersion from the cache")
		return
	}
	d := standdown.Decide(cv, g.csv)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.decided && g.decision == d {
		return
	}
	g.decided, g.decision = true, d
	close(g.changed)
	g.changed = make(chan struct{})
}

func (g *gate) current() (d standdown.Decision, decided bool, changed <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.decision, g.decided, g.changed
}

// open is true when this copy may work: readiness is false while it stands down or has not
// decided yet, so that OLM does not report a copy that does nothing as installed.
func (g *gate) open() bool {
	if g == nil {
		return true
	}
	d, decided, _ := g.current()
	return decided && !d.StandDown
}

// run runs lead (the leader election and the controllers under it) while this copy need not
// stand down, and stops it as soon as it must; standing down it makes no write but its reports.
func (g *gate) run(ctx context.Context, lead func(context.Context) error) error {
	if g == nil {
		return lead(ctx)
	}
	klog.InfoS("Installed by OLM: reading ClusterVersion before taking the samples over", "clusterServiceVersion", g.csv)
	if !cache.WaitForCacheSync(ctx.Done(), g.synced) {
		return nil
	}
	g.decide()
	d, _, changed := g.current()
	g.report(ctx, d)
	if d.StandDown {
		return g.standingDown(ctx, changed)
	}

	leadCtx, stopLeading := context.WithCancel(ctx)
	defer stopLeading()
	stoodDown := make(chan standdown.Decision, 1)
	go func(changed <-chan struct{}) {
		for {
			select {
			case <-leadCtx.Done():
				return
			case <-changed:
			}
			var d standdown.Decision
			d, _, changed = g.current()
			if d.StandDown {
				stoodDown <- d
				stopLeading() // the controllers stop, then the lease is released for the CVO's copy
				return
			}
		}
	}(changed)
	err := lead(leadCtx)
	select {
	case d := <-stoodDown:
		g.report(ctx, d)
		_, _, changed := g.current()
		return g.standingDown(ctx, changed)
	default:
		return err
	}
}

// standingDown waits, writing nothing, until ctx ends or the decision changes.
func (g *gate) standingDown(ctx context.Context, changed <-chan struct{}) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		var d standdown.Decision
		d, _, changed = g.current()
		if !d.StandDown {
			g.report(ctx, d)
			return errStandDownLifted
		}
	}
}

// report tells the log, the events and OLM's OperatorCondition what was decided. It runs once
// per decision, so it reads the OperatorCondition with a GET rather than an informer: its CRD
// exists only where OLM runs, and an informer of it would otherwise never sync.
func (g *gate) report(ctx context.Context, d standdown.Decision) {
	if d.StandDown {
		klog.InfoS("Standing down: the cluster-version operator manages the samples; this copy writes nothing", "reason", d.Reason, "message", d.Message)
		g.recorder.Warningf("StandingDown", "%s", d.Message)
	} else {
		klog.InfoS("Managing the samples", "reason", d.Reason, "message", d.Message)
	}
	g.mu.Lock()
	g.reports++
	report := g.reports
	g.mu.Unlock()
	if err := g.writeUpgradeable(ctx, d); err != nil {
		// An API server restarting, say: OLM must still learn the decision, or it upgrades a
		// copy that stood down for the cluster-version operator's.
		klog.ErrorS(err, "Updating the OperatorCondition; retrying", "name", g.csv)
		go g.retryUpgradeable(ctx, d, report)
	}
}

// writeUpgradeable sets Upgradeable on the OperatorCondition for d. It returns only errors worth
// a retry: without OLM (no CRD, no OperatorCondition) or without the grant, readiness, the log and
// the events still say it.
func (g *gate) writeUpgradeable(ctx context.Context, d standdown.Decision) error {
	client := g.dynamic.Resource(operatorConditions).Namespace(names.OperatorNamespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		oc, err := client.Get(ctx, g.csv, metav1.GetOptions{})
		if err != nil {
			return err
		}
		current, err := specConditions(oc)
		if err != nil {
			return err
		}
		updated, changed := standdown.SetUpgradeable(current, d, metav1.NewTime(g.clock.Now()))
		if !changed {
			return nil
		}
		if err := setSpecConditions(oc, updated); err != nil {
			return err
		}
		_, err = client.Update(ctx, oc, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		klog.InfoS("Cannot report through the OperatorCondition", "name", g.csv, "namespace", names.OperatorNamespace, "err", err)
		if d.StandDown {
			g.recorder.Warningf("OperatorConditionNotUpdated", "could not set Upgradeable=False on OperatorCondition %s/%s: %v", names.OperatorNamespace, g.csv, err)
		}
		return nil
	}
	return err
}

// retryUpgradeable writes the report's decision again, waiting twice as long each time (at most a
// minute), until it lands, ctx ends or a newer report supersedes it.
func (g *gate) retryUpgradeable(ctx context.Context, d standdown.Decision, report int) {
	delay := g.retryDelay
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		g.mu.Lock()
		superseded := g.reports != report
		g.mu.Unlock()
		if superseded {
			return
		}
		err := g.writeUpgradeable(ctx, d)
		if err == nil {
			klog.InfoS("Updated the OperatorCondition after a retry", "name", g.csv, "standDown", d.StandDown)
			return
		}
		klog.V(2).InfoS("Updating the OperatorCondition failed again", "name", g.csv, "err", err, "nextTry", 2*delay)
		delay = min(2*delay, time.Minute)
	}
}

func specConditions(oc *unstructured.Unstructured) ([]metav1.Condition, error) {
	raw, _, err := unstructured.NestedSlice(oc.Object, "spec", "conditions")
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Condition, len(raw))
	for i, r := range raw {
		m, ok := r.(map[string]interface{})
		if !ok {
			return nil, fmt.Errorf("spec.conditions[%d] is not an object", i)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &out[i]); err != nil {
			return nil, fmt.Errorf("spec.conditions[%d]: %w", i, err)
		}
	}
	return out, nil
}

func setSpecConditions(oc *unstructured.Unstructured, conditions []metav1.Condition) error {
	raw := make([]interface{}, len(conditions))
	for i := range conditions {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conditions[i])
		if err != nil {
			return err
		}
		raw[i] = m
	}
	return unstructured.SetNestedSlice(oc.Object, raw, "spec", "conditions")
}
