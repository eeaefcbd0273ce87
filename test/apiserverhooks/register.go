package apiserverhooks

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConfigurationName names both webhook configurations.
const ConfigurationName = "local-openshift-apiserver"

// webhookTimeoutSeconds bounds each call. The handlers answer in microseconds; the bound only
// decides how long a write hangs when the test process is stopped in a debugger.
const webhookTimeoutSeconds = 10

// MutatingWebhookConfiguration registers the mutating webhooks with kube-apiserver.
func (s *Server) MutatingWebhookConfiguration() *admissionregistrationv1.MutatingWebhookConfiguration {
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName}}
	for _, h := range s.hooks() {
		if h.mutating {
			// Never reinvoked: nothing else mutates these kinds, and the strategy runs once.
			never := admissionregistrationv1.NeverReinvocationPolicy
			cfg.Webhooks = append(cfg.Webhooks, admissionregistrationv1.MutatingWebhook{
				Name: h.name, ClientConfig: s.clientConfig(h), Rules: rules(h),
				FailurePolicy: ptr(admissionregistrationv1.Fail), SideEffects: ptr(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr(int32(webhookTimeoutSeconds)),
				ReinvocationPolicy: &never,
			})
		}
	}
	return cfg
}

// ValidatingWebhookConfiguration registers the validating webhooks with kube-apiserver.
func (s *Server) ValidatingWebhookConfiguration() *admissionregistrationv1.ValidatingWebhookConfiguration {
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName}}
	for _, h := range s.hooks() {
		if !h.mutating {
			cfg.Webhooks = append(cfg.Webhooks, admissionregistrationv1.ValidatingWebhook{
				Name: h.name, ClientConfig: s.clientConfig(h), Rules: rules(h),
				FailurePolicy: ptr(admissionregistrationv1.Fail), SideEffects: ptr(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr(int32(webhookTimeoutSeconds)),
			})
		}
	}
	return cfg
}

func (s *Server) clientConfig(h hook) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{URL: ptr(s.URL + h.path), CABundle: s.CABundle}
}

func rules(h hook) []admissionregistrationv1.RuleWithOperations {
	var ops []admissionregistrationv1.OperationType
	for _, op := range h.ops {
		ops = append(ops, admissionregistrationv1.OperationType(op))
	}
	// The main resource, and /status only where the hook checks status: a /status write cannot
	// change spec, as openshift-apiserver's status strategy keeps the old spec.
	resources := []string{h.resource.Resource}
	if h.status {
		resources = append(resources, h.resource.Resource+"/status")
	}
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: ops,
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{h.resource.Group}, APIVersions: []string{h.resource.Version},
			Resources: resources,
			Scope:     ptr(admissionregistrationv1.NamespacedScope),
		},
	}}
}
