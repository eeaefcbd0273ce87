// Package clusteroperatorcontrol writes the status of the ClusterOperator openshift-samples, computed by
// pkg/clusteroperator from the samples Config, and creates the ClusterOperator when it is missing.
package clusteroperatorcontrol

import (
	"context"

	configv1 "github.com/openshift/api/config/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned/typed/config/v1"
	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions/samples/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/eventfilter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// Troubles tells what the operator observes beyond the Config's conditions, and calls a
// listener when its refused writes or unavailable APIs change (the records' own informer wakes
// the controller).
type Troubles interface {
	Observed() clusteroperator.Observed
	OnChange(f func())
}

// Controller reports through the ClusterOperator.
type Controller struct {
	version   string
	troubles  Troubles
	clock     clock.PassiveClock
	configs   sampleslisters.ConfigLister
	operators configlisters.ClusterOperatorLister
	client    configclient.ClusterOperatorInterface
}

// New wires the controller. The ClusterOperator informer must be field-selected to Name.
func New(version string, configInformer samplesinformers.ConfigInformer, coInformer configinformers.ClusterOperatorInformer, configMaps coreinformers.ConfigMapInformer,
	client configclient.ConfigV1Interface, troubles Troubles, recorder events.Recorder, clk clock.PassiveClock) factory.Controller {
	c := newController(version, configInformer, coInformer, client, troubles, clk)
	return factory.New().
		WithSync(c.sync).
		// The Config's resync is the sync's safety net: the resyncs of the operator namespace's
		// ConfigMaps (one per imagestream) would only run it again (eventfilter.WithoutResyncs).
		WithInformers(configInformer.Informer(), eventfilter.WithoutResyncs(coInformer.Informer()), eventfilter.WithoutResyncs(configMaps.Informer())).
		WithPostStartHooks(func(ctx context.Context, syncCtx factory.SyncContext) error {
			syncCtx.Queue().Add(factory.DefaultQueueKey)
			c.troubles.OnChange(func() { syncCtx.Queue().Add(factory.DefaultQueueKey) })
			return nil
		}).
		ToController("ClusterOperatorStatusController", recorder)
}

// newController is the controller New wires, apart so that tests can sync it by hand.
func newController(version string, configInformer samplesinformers.ConfigInformer, coInformer configinformers.ClusterOperatorInformer,
	client configclient.ConfigV1Interface, troubles Troubles, clk clock.PassiveClock) *Controller {
	return &Controller{
		version:   version,
		troubles:  troubles,
		clock:     clk,
		configs:   configInformer.Lister(),
		operators: coInformer.Lister(),
		client:    client.ClusterOperators(),
	}
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	cfg, err := c.configs.Get(names.ConfigName)
	if apierrors.IsNotFound(err) {
		cfg = nil
	} else if err != nil {
		return err
	}
	current, err := c.operators.Get(clusteroperator.Name)
	if apierrors.IsNotFound(err) {
		// Deleted, or never created (the CVO creates it from manifests/ on a cluster).
		current, err = c.client.Create(ctx, &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: clusteroperator.Name}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // the informer brings it
		}
		if err != nil {
			return err
		}
		syncCtx.Recorder().Eventf("ClusterOperatorCreated", "created ClusterOperator %s", clusteroperator.Name)
	} else if err != nil {
		return err
	}
	if clusteroperator.NothingToReport(current.Status, cfg) {
		return nil
	}
	observed := c.troubles.Observed()
	if wait := clusteroperator.NextChange(cfg, c.version, observed, c.clock.Now()); wait > 0 {
		// A grace runs out then: Degraded may follow without any event.
		syncCtx.Queue().AddAfter(factory.DefaultQueueKey, wait)
	}
	computed := clusteroperator.Status(current.Status, cfg, c.version, observed, c.clock)
	if !clusteroperator.Changed(current.Status, computed) {
		return nil
	}
	updated := current.DeepCopy()
	updated.Status = computed
	if _, err = c.client.UpdateStatus(ctx, updated, metav1.UpdateOptions{}); apierrors.IsConflict(err) {
		return nil // computed from a stale cached ClusterOperator: its update event brings us back
	}
	return err
}
