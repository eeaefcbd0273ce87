package operator

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/availability"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/trigger"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
)

// troubleReport is what the ClusterOperator and the metrics observe beyond the Config's
// conditions (clusteroperator.Observed): refused writes and unavailable APIs, with when each
// began, and the import error records.
type troubleReport struct {
	refusals   *refusal.Store
	apis       *availability.Tracker
	configMaps corelisters.ConfigMapNamespaceLister
	grace      time.Duration
}

func (t troubleReport) Observed() clusteroperator.Observed {
	_, since, _ := t.refusals.Reported()
	records, _ := t.configMaps.List(labels.SelectorFromSet(labels.Set{imports.ErrorLabel: "true"})) // a lister fails only for a bad selector
	return clusteroperator.Observed{RefusedSince: since, Outages: t.apis.Outages(), ImportErrors: records, Grace: t.grace}
}

func (t troubleReport) OnChange(f func()) {
	t.refusals.OnChange(f)
	t.apis.OnChange(f)
}

// retryTriggers are what may end a refusal (samples.RetryTriggers): the ResourceQuotas and
// LimitRanges of openshift. Only a real change counts (pkg/controller/trigger): a quota's status
// moves with every object created in openshift, and a resync hands every object over again;
// retrying every refused sample at once on those would undo its backoff.
type retryTriggers struct {
	quotas, limitRanges watchedInformer
}

// watchedInformer is an informer that says whether it could list its objects.
type watchedInformer interface {
	trigger.Informer
	HasSynced() bool
}

// Watched: both kinds are watched. Their RBAC is optional (access.OptionalRules); without it
// their informers never sync, and the Config status promises no retry on their changes.
func (r retryTriggers) Watched() bool {
	return r.quotas.HasSynced() && r.limitRanges.HasSynced()
}

func (r retryTriggers) sources() []trigger.Source {
	return []trigger.Source{
		{Kind: "ResourceQuota", Informer: r.quotas, Part: func(o interface{}) interface{} { return o.(*corev1.ResourceQuota).Spec }},
		{Kind: "LimitRange", Informer: r.limitRanges, Part: func(o interface{}) interface{} { return o.(*corev1.LimitRange).Spec }},
	}
}

func (r retryTriggers) OnChange(f func()) error {
	return trigger.Watch(r.sources(), func(trigger.Change) { f() })
}
