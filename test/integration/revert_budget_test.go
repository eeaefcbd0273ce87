package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// TestAWebhookStampingEveryWriteCausesNoLoop: a webhook of another product stamps a fresh time on
// python's display name on every write, the operator's reverts included. The operator takes the
// server's answer to its write as in sync (pkg/desired's loop breaker), so it writes python at
// most a few times, within the revert budget.
func TestAWebhookStampingEveryWriteCausesNoLoop(t *testing.T) {
	parallel(t, aboutAMinute)
	e := newEnvOnStandIns(t) // a webhook on imagestreams
	inv := x86Inventory(t)
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	e.waitQuiet(t, 300*time.Millisecond)

	var stamped atomic.Int32
	e.registerImageStreamWebhook(t, "stamp-display-name", true, []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
		func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			if req.Name != "python" {
				return &admissionv1.AdmissionResponse{Allowed: true}
			}
			stamped.Add(1)
			patch, _ := json.Marshal([]map[string]any{{
				"op": "add", "path": "/metadata/annotations/openshift.io~1display-name",
				"value": fmt.Sprintf("Python (stamped %s)", time.Now().Format(time.RFC3339Nano)),
			}})
			patchType := admissionv1.PatchTypeJSONPatch
			return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: &patchType}
		})

	// The other product's first write: from here on every write of python gets a new stamp.
	since := time.Now()
	e.editImageStream("python", func(python *imagev1.ImageStream) {
		python.Annotations["openshift.io/display-name"] = "changed by another product"
	})
	eventually(t, 10*time.Second, func() (bool, string) {
		return stamped.Load() >= 2, "the operator's revert was not stamped yet"
	})
	// A loop writes hundreds of times a second; the minute is the measure, and leaves the
	// webhook many stamps in which to restart one.
	idle(t, 60*time.Second)
	writes := e.pythonUpdatesSince(t, since)
	t.Logf("the webhook stamped python %d times; the operator updated it %d times in %s", stamped.Load(), writes, time.Since(since).Round(time.Second))
	if writes < 1 || writes > samplewriter.RevertBudget {
		t.Errorf("the operator updated python %d times, want between 1 and the budget of %d", writes, samplewriter.RevertBudget)
	}
}

// TestRevertBudgetStopsAFightOverASample: another controller sets python's display name to a
// value of its own whenever it differs, a new one each time, so each revert is undone at once and
// differently. The operator reverts python exactly RevertBudget times, then says so (event,
// metric) and backs off; no other sample is written.
func TestRevertBudgetStopsAFightOverASample(t *testing.T) {
	parallel(t, aboutTwentySecond)
	e := newEnv(t)
	inv := x86Inventory(t)
	e.startOperator(defaultOptions())
	e.waitManaged(t, inv, "v1")
	e.waitQuiet(t, 300*time.Millisecond)

	since := time.Now()
	streams := e.images.ImageV1().ImageStreams("openshift")
	w, err := streams.Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=python"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var fought atomic.Int32
	go func() {
		for ev := range w.ResultChan() {
			is, ok := ev.Object.(*imagev1.ImageStream)
			if !ok || strings.HasPrefix(is.Annotations["openshift.io/display-name"], "theirs ") {
				continue
			}
			is = is.DeepCopy()
			is.Annotations["openshift.io/display-name"] = "theirs " + time.Now().Format(time.RFC3339Nano)
			if _, err := streams.Update(context.Background(), is, metav1.UpdateOptions{}); err == nil {
				fought.Add(1)
			}
		}
	}()
	e.waitEvent(t, "SampleRevertBudgetExceeded", "ImageStream openshift/python")
	eventually(t, 10*time.Second, func() (bool, string) {
		c := configCondition(e.getConfig(), samplesv1.SamplesExist)
		return c != nil && strings.Contains(c.Message, "keep being changed after each revert") && strings.Contains(c.Message, "ImageStream/python"),
			fmt.Sprintf("SamplesExist: %+v", c)
	})
	idle(t, 10*time.Second) // a fight without the budget writes hundreds of times in this

	writes := e.pythonUpdatesSince(t, since)
	t.Logf("the other controller wrote python %d times; the operator updated it %d times in %s", fought.Load(), writes, time.Since(since).Round(time.Second))
	if writes != samplewriter.RevertBudget {
		t.Errorf("the operator updated python %d times, want exactly the budget of %d", writes, samplewriter.RevertBudget)
	}
	for _, w := range e.sampleWritesSince(t, since) {
		if w != "update imagestreams/python" {
			t.Errorf("another sample was written meanwhile: %s", w)
		}
	}
}

// pythonUpdatesSince counts the operator's updates of python that the server took (a revert
// that lost a race with the other writer gets a 409 and is no revert).
func (e *env) pythonUpdatesSince(t *testing.T, since time.Time) int {
	t.Helper()
	return len(e.operatorRequests(t, verb("update"), on("imagestreams"), noSubresource, named("python"), carriedOut, receivedAfter(since)))
}
