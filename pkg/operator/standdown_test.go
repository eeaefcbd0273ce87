package operator

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/standdown"
)

// The OperatorCondition is read and written as unstructured: spec.conditions must come back as
// they went, and what else the object holds (OLM's spec.deployments, an admin's overrides) must
// stay.
func TestOperatorConditionSpecConditionsRoundTrip(t *testing.T) {
	oc := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "operators.coreos.com/v2", "kind": "OperatorCondition",
		"metadata": map[string]interface{}{"name": "cluster-samples-operator.v1", "namespace": "openshift-cluster-samples-operator"},
		"spec": map[string]interface{}{
			"deployments": []interface{}{"cluster-samples-operator"},
			"overrides":   []interface{}{map[string]interface{}{"type": "Upgradeable", "status": "True", "reason": "Admin", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}},
			"conditions": []interface{}{map[string]interface{}{
				"type": "Other", "status": "True", "reason": "Mine", "message": "kept", "lastTransitionTime": "2026-01-01T00:00:00Z",
			}},
		},
	}}
	current, err := specConditions(oc)
	if err != nil {
		t.Fatal(err)
	}
	if len(current) != 1 || current[0].Type != "Other" || current[0].Message != "kept" {
		t.Fatalf("read %+v", current)
	}
	now := metav1.NewTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	d := standdown.Decision{StandDown: true, Reason: standdown.ReasonManagedByCVO, Message: "the CVO manages the samples"}
	updated, changed := standdown.SetUpgradeable(current, d, now)
	if !changed {
		t.Fatal("no change for a first stand-down")
	}
	if err := setSpecConditions(oc, updated); err != nil {
		t.Fatal(err)
	}
	back, err := specConditions(oc)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0].Type != "Other" || back[1].Type != standdown.UpgradeableType ||
		back[1].Status != metav1.ConditionFalse || back[1].Reason != standdown.ReasonManagedByCVO || !back[1].LastTransitionTime.Equal(&now) {
		t.Errorf("written and read back: %+v", back)
	}
	if _, again := standdown.SetUpgradeable(back, d, now); again {
		t.Error("the condition read back differs from what was written")
	}
	if deployments, _, _ := unstructured.NestedStringSlice(oc.Object, "spec", "deployments"); len(deployments) != 1 {
		t.Errorf("spec.deployments lost: %v", oc.Object["spec"])
	}
	if overrides, _, _ := unstructured.NestedSlice(oc.Object, "spec", "overrides"); len(overrides) != 1 {
		t.Errorf("spec.overrides lost: %v", oc.Object["spec"])
	}
}

func TestNoGateIsOpen(t *testing.T) {
	var g *gate
	if !g.open() {
		t.Error("a copy the CVO installed has no gate, and must be ready to work")
	}
}

// TestStandDownReportIsRetried: OLM must learn that this copy stood down even when the first
// write of the OperatorCondition fails with an error worth retrying (the API server restarting).
func TestStandDownReportIsRetried(t *testing.T) {
	oc := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "operators.coreos.com/v2", "kind": "OperatorCondition",
		"metadata": map[string]interface{}{"name": "cluster-samples-operator.v1", "namespace": "openshift-cluster-samples-operator"},
		"spec":     map[string]interface{}{},
	}}
	scheme := runtime.NewScheme()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
		map[schema.GroupVersionResource]string{operatorConditions: "OperatorConditionList"}, oc)
	var gets atomic.Int32
	client.PrependReactor("get", "operatorconditions", func(clienttesting.Action) (bool, runtime.Object, error) {
		if gets.Add(1) <= 2 {
			return true, nil, apierrors.NewInternalError(fmt.Errorf("etcdserver: leader changed"))
		}
		return false, nil, nil
	})
	g := &gate{csv: "cluster-samples-operator.v1", dynamic: client, clock: clocktesting.NewFakePassiveClock(time.Now()),
		recorder: events.NewInMemoryRecorder("test", clock.RealClock{}), changed: make(chan struct{}), retryDelay: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g.report(ctx, standdown.Decision{StandDown: true, Reason: standdown.ReasonManagedByCVO, Message: "the CVO manages the samples"})

	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := client.Resource(operatorConditions).Namespace("openshift-cluster-samples-operator").Get(ctx, "cluster-samples-operator.v1", metav1.GetOptions{})
		if err == nil {
			if conditions, _ := specConditions(got); len(conditions) == 1 && conditions[0].Type == standdown.UpgradeableType && conditions[0].Status == metav1.ConditionFalse {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Upgradeable=False never written after %d gets (the first two failed)", gets.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
