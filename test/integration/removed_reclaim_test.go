package integration

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

// TestRemovedKeepsWhatAnAdminReclaimedMeanwhile: an admin relabels python managed=false between
// the operator's decision to delete it (managementState Removed) and the delete. The operator's
// delete names the resourceVersion it decided on, so the relabelled stream survives. The race is
// made certain by a validating webhook on python's DELETE that relabels it before answering:
// the API server then finds the object changed under the delete and checks the preconditions
// again.
func TestRemovedKeepsWhatAnAdminReclaimedMeanwhile(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnvOnStandIns(t) // a webhook on imagestreams
	inv := x86Inventory(t)
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	ctx := context.Background()
	streams := e.images.ImageV1().ImageStreams("openshift")

	var relabelled atomic.Int32
	e.registerImageStreamWebhook(t, "reclaim-during-delete", false, []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
		func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			if req.Name == "python" && relabelled.Add(1) == 1 {
				// The admin reclaims python while the operator's delete is under way.
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					is, err := streams.Get(ctx, "python", metav1.GetOptions{})
					if err != nil {
						return err
					}
					is.Labels[desired.ManagedLabel] = "false"
					_, err = streams.Update(ctx, is, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					t.Errorf("relabelling python during the delete: %v", err)
				}
			}
			return &admissionv1.AdmissionResponse{Allowed: true}
		})

	e.updateConfig(func(c *samplesv1.Config) { c.Spec.ManagementState = operatorv1.Removed })
	eventually(t, 30*time.Second, func() (bool, string) {
		cfg := e.getConfig()
		return cfg.Status.ManagementState == operatorv1.Removed && conditionIs(cfg, samplesv1.RemovePending, "False"),
			fmt.Sprintf("status %s, conditions %+v", cfg.Status.ManagementState, cfg.Status.Conditions)
	})
	if relabelled.Load() == 0 {
		t.Fatal("the operator never tried to delete python: the race was not run")
	}
	python, err := streams.Get(ctx, "python", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("python, relabelled managed=false during the delete, is gone: %v", err)
	}
	if python.Labels[desired.ManagedLabel] != "false" {
		t.Errorf("python survived with labels %v", python.Labels)
	}
	if _, err := streams.Get(ctx, "ruby", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ruby, still managed, was not deleted in Removed: %v", err)
	}
}
