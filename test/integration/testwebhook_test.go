package integration

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// webhookProbe is the imagestream registerImageStreamWebhook writes until kube-apiserver calls
// the new webhook; handlers see its requests too.
const webhookProbe = "webhook-test-probe"

// registerImageStreamWebhook makes kube-apiserver call handle for the operations ops on
// imagestreams (a mutating webhook when mutating), and returns once it does. It plays something
// else on the cluster acting on the samples: an admin racing the operator, a webhook of another
// product. handle returns the response; its UID is filled in.
func (e *env) registerImageStreamWebhook(t *testing.T, name string, mutating bool, ops []admissionregistrationv1.OperationType,
	handle func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) {
	t.Helper()
	if e.cp.RealOpenShiftAPIServer() {
		// openshift-apiserver serves the image API itself: kube-apiserver's webhooks are never
		// asked about it.
		t.Fatal("an admission webhook on imagestreams is called only by the stand-in image API (CRDs behind kube-apiserver): start the test with newEnvOnStandIns")
	}
	ctx := context.Background()
	var calls atomic.Int32
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		calls.Add(1)
		response := &admissionv1.AdmissionResponse{Allowed: true}
		if review.Request.Name != webhookProbe {
			response = handle(review.Request)
		}
		response.UID = review.Request.UID
		review.Response, review.Request = response, nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(server.Close)
	url := server.URL + "/" + name
	clientConfig := admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: ops,
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"image.openshift.io"}, APIVersions: []string{"v1"}, Resources: []string{"imagestreams"}},
	}}
	none, fail := admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.Fail
	var err error
	if mutating {
		hooks := e.kube.AdmissionregistrationV1().MutatingWebhookConfigurations()
		_, err = hooks.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: name + ".test.openshift.io", ClientConfig: clientConfig, Rules: rules,
				SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"}}},
		}, metav1.CreateOptions{})
		t.Cleanup(func() { _ = hooks.Delete(ctx, name, metav1.DeleteOptions{}) })
	} else {
		hooks := e.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
		_, err = hooks.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: name + ".test.openshift.io", ClientConfig: clientConfig, Rules: rules,
				SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"}}},
		}, metav1.CreateOptions{})
		t.Cleanup(func() { _ = hooks.Delete(ctx, name, metav1.DeleteOptions{}) })
	}
	if err != nil {
		t.Fatal(err)
	}
	// kube-apiserver picks configurations up asynchronously: write a probe until it calls the hook.
	streams := e.images.ImageV1().ImageStreams("openshift")
	eventually(t, 30*time.Second, func() (bool, string) {
		probe := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: webhookProbe}, Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{
			Name: "1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.invalid/probe:1"}}}}}
		created, err := streams.Create(ctx, probe, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return false, err.Error()
		}
		if err == nil {
			created.Annotations = map[string]string{"probe": time.Now().String()}
			_, _ = streams.Update(ctx, created, metav1.UpdateOptions{})
		}
		_ = streams.Delete(ctx, webhookProbe, metav1.DeleteOptions{})
		return calls.Load() > 0, "kube-apiserver does not call webhook " + name + " yet"
	})
}
