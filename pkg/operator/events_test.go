package operator

import (
	"context"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Every controller's recorder sends through the one broadcaster: events keep the component
// each controller is named by and the operator's Deployment as their object, a component's
// Shutdown does not stop the others, and no goroutine is started per component.
func TestEventRecorderSharesOneBroadcaster(t *testing.T) {
	client := fake.NewSimpleClientset()
	involved := &corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "op"}

	before := runtime.NumGoroutine()
	root := newEventRecorder(client.CoreV1().Events("ns"), "op", involved)
	started := runtime.NumGoroutine() - before
	samples := root.WithComponentSuffix("samples")
	status := root.ForComponent("status")
	if grown := runtime.NumGoroutine() - before - started; grown > 0 {
		t.Errorf("two component recorders started %d goroutines, want none", grown)
	}
	if samples.ComponentName() != "op-samples" || status.ComponentName() != "status" {
		t.Errorf("component names %q and %q, want op-samples and status", samples.ComponentName(), status.ComponentName())
	}

	samples.Warningf("SampleDrifted", "imagestream %s changed", "ruby")
	samples.Shutdown()
	status.Event("SamplesInstalled", "all installed")

	want := map[string]corev1.Event{
		"SampleDrifted":    {Type: corev1.EventTypeWarning, Message: "imagestream ruby changed", Source: corev1.EventSource{Component: "op-samples"}},
		"SamplesInstalled": {Type: corev1.EventTypeNormal, Message: "all installed", Source: corev1.EventSource{Component: "status"}},
	}
	var got []corev1.Event
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		list, err := client.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got = list.Items; len(got) == len(want) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events sent, want %d: %+v", len(got), len(want), got)
	}
	for _, e := range got {
		w, ok := want[e.Reason]
		if !ok {
			t.Errorf("unexpected event %q", e.Reason)
			continue
		}
		if e.Type != w.Type || e.Message != w.Message || e.Source.Component != w.Source.Component {
			t.Errorf("event %s: type %q message %q component %q, want %q %q %q",
				e.Reason, e.Type, e.Message, e.Source.Component, w.Type, w.Message, w.Source.Component)
		}
		if e.InvolvedObject.Kind != "Deployment" || e.InvolvedObject.Name != "op" || e.InvolvedObject.Namespace != "ns" {
			t.Errorf("event %s is about %+v, want the operator's Deployment", e.Reason, e.InvolvedObject)
		}
	}
	root.Shutdown()
}
