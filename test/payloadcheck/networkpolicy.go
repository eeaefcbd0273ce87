package payloadcheck

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
)

const (
	// MetricsPort is where the operator serves /metrics; only Prometheus needs to reach it.
	MetricsPort = 60000
	// MonitoringNamespace is where the cluster's Prometheus runs.
	MonitoringNamespace = "openshift-monitoring"
	namespaceNameLabel  = "kubernetes.io/metadata.name"
)

// CheckMetricsNetworkPolicy reports each profile of the ClusterOperator in which no
// NetworkPolicy of the operator namespace guards the operator's pods as the metrics port needs:
// it must select the pods of that profile's operator Deployment, restrict ingress, and admit
// only TCP port MetricsPort, only from pods of MonitoringNamespace. Egress is not restricted.
func CheckMetricsNetworkPolicy(objs []payload.Object) []error {
	var co *payload.Object
	var deps, policies []payload.Object
	for _, o := range objs {
		switch {
		case o.Kind == "ClusterOperator" && o.Name == payload.ClusterOperatorName && !o.Deleted():
			co = &o
		case isOperatorDeployment(o):
			deps = append(deps, o)
		case o.Kind == "NetworkPolicy" && o.Namespace == payload.OperatorNamespace && !o.Deleted():
			policies = append(policies, o)
		}
	}
	if co == nil {
		return nil // CheckOperatorDeployments says so
	}
	var errs []error
	for _, p := range co.Profiles() {
		var podLabels labels.Set
		for _, d := range deps {
			if !d.InProfile(p) {
				continue
			}
			var dep appsv1.Deployment
			if err := d.Decode(&dep); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", d, err))
				continue
			}
			podLabels = dep.Spec.Template.Labels
		}
		if podLabels == nil {
			continue // CheckOperatorDeployments says so
		}
		var why []string
		guarded := false
		for _, o := range policies {
			if !o.InProfile(p) {
				continue
			}
			var np networkingv1.NetworkPolicy
			if err := o.Decode(&np); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", o, err))
				continue
			}
			problem := metricsOnlyFromMonitoring(np, podLabels)
			if problem == "" {
				guarded = true
				break
			}
			why = append(why, fmt.Sprintf("%s %s", o, problem))
		}
		if !guarded {
			errs = append(errs, fmt.Errorf("profile %s: no NetworkPolicy in %s admits only %s to port %d of the operator's pods (labels %v); %v",
				p, payload.OperatorNamespace, MonitoringNamespace, MetricsPort, podLabels, why))
		}
	}
	return errs
}

// metricsOnlyFromMonitoring says what keeps np from guarding pods with podLabels as the metrics
// port needs, or "" when nothing does.
func metricsOnlyFromMonitoring(np networkingv1.NetworkPolicy, podLabels labels.Set) string {
	selector, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		return fmt.Sprintf("has an invalid podSelector: %v", err)
	}
	if selector.Empty() || !selector.Matches(podLabels) {
		return fmt.Sprintf("does not select the operator's pods alone (podSelector %v)", selector)
	}
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		return "does not restrict ingress (policyTypes lacks Ingress)"
	}
	if slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		return "restricts egress, which the operator needs to reach the API server"
	}
	if len(np.Spec.Ingress) != 1 {
		return fmt.Sprintf("has %d ingress rules, want exactly one", len(np.Spec.Ingress))
	}
	rule := np.Spec.Ingress[0]
	if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.IntValue() != MetricsPort ||
		(rule.Ports[0].Protocol != nil && *rule.Ports[0].Protocol != "TCP") || rule.Ports[0].EndPort != nil {
		return fmt.Sprintf("admits ports %v, want TCP %d alone", rule.Ports, MetricsPort)
	}
	if len(rule.From) != 1 || rule.From[0].IPBlock != nil || rule.From[0].NamespaceSelector == nil {
		return "must admit peers by namespace only"
	}
	peer := rule.From[0]
	ns, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
	if err != nil || ns.Empty() || !ns.Matches(labels.Set{namespaceNameLabel: MonitoringNamespace}) ||
		ns.Matches(labels.Set{namespaceNameLabel: "default"}) {
		return fmt.Sprintf("admits namespaces %v, want %s alone", peer.NamespaceSelector, MonitoringNamespace)
	}
	if peer.PodSelector != nil && len(peer.PodSelector.MatchLabels)+len(peer.PodSelector.MatchExpressions) > 0 {
		return "narrows the monitoring pods by label, which the monitoring stack does not promise to keep"
	}
	return ""
}
