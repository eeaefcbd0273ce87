package operator

import (
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/availability"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
)

// troubleReport is what the ClusterOperator and the metrics learn of refused writes and
// unavailable APIs, with when each began.
type troubleReport struct {
	refusals *refusal.Store
	apis     *availability.Tracker
}

func (t troubleReport) Trouble() clusteroperator.Trouble {
	_, since, _ := t.refusals.Reported()
	return clusteroperator.Trouble{RefusedSince: since, Outages: t.apis.Outages()}
}

func (t troubleReport) OnChange(f func()) {
	t.refusals.OnChange(f)
	t.apis.OnChange(f)
}

// retryTriggers are the informers whose every change may end a refusal (samples.RetryTriggers).
type retryTriggers []cache.SharedIndexInformer

func (r retryTriggers) OnChange(f func()) error {
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { f() },
		UpdateFunc: func(_, _ interface{}) { f() },
		DeleteFunc: func(interface{}) { f() },
	}
	for _, informer := range r {
		if _, err := informer.AddEventHandler(handler); err != nil {
			return err
		}
	}
	return nil
}
