package controlplane

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// A control plane a test has filled, changed and left is handed to the next test holding what it
// held when first handed out, and nothing more: not the objects, not the changes, not the audit
// entries. Twice, with the same names, as tests that create the same objects would.
func TestARecycledControlPlaneHoldsOnlyItsBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	if err := cp.takeBaseline(ctx); err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cp.AdminConfig)
	dyn := dynamic.NewForConfigOrDie(cp.AdminConfig)
	images := imageclient.NewForConfigOrDie(cp.AdminConfig)
	baselineLabels := namespaceLabels(ctx, t, kube, "openshift")

	for round := 1; round <= 2; round++ {
		leaveAMess(ctx, t, kube, dyn, images)
		if events, err := cp.AuditEvents(AdminUser); err != nil || len(events) == 0 {
			t.Fatalf("round %d: the mess left no audit entry (%v)", round, err)
		}
		began := time.Now()
		if err := cp.recycle(ctx); err != nil {
			t.Fatalf("round %d: recycling: %v", round, err)
		}
		t.Logf("round %d: reset in %s", round, time.Since(began).Round(time.Millisecond))
		if events, err := cp.AuditEvents(AdminUser); err != nil || len(events) != 0 {
			t.Errorf("round %d: the audit log still shows %d requests of the earlier test or the reset (%v)", round, len(events), err)
		}

		c, err := cp.recycleClients()
		if err != nil {
			t.Fatal(err)
		}
		now, err := c.objects(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var extra, missing []string
		for k := range now {
			if _, ok := cp.baseline.objects[k]; !ok && !selfKept(k) {
				extra = append(extra, k.String())
			}
		}
		for k := range cp.baseline.objects {
			if _, ok := now[k]; !ok && !selfKept(k) {
				missing = append(missing, k.String())
			}
		}
		if len(extra)+len(missing) > 0 {
			t.Errorf("round %d: after the reset, not in the baseline: %v; gone from it: %v", round, extra, missing)
		}
		if got := namespaceLabels(ctx, t, kube, "openshift"); got != baselineLabels {
			t.Errorf("round %d: namespace openshift has labels %s, want the baseline's %s", round, got, baselineLabels)
		}
		if _, err := kube.CoreV1().Namespaces().Get(ctx, "openshift", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			events, err := cp.AuditEvents(AdminUser)
			return err == nil && slices.ContainsFunc(events, func(e AuditEvent) bool {
				return e.Verb == "get" && e.Resource == "namespaces" && e.Name == "openshift"
			}), nil
		}); err != nil {
			t.Errorf("round %d: a request after the reset is not in the audit log", round)
		}
	}

	cp.Webhooks()
	if err := cp.recycle(ctx); err == nil || !strings.Contains(err.Error(), "webhook") {
		t.Errorf("recycling after a test reached the webhook knobs: %v, want a refusal", err)
	}
}

var widgets = schema.GroupVersionResource{Group: "mess.example.com", Version: "v1", Resource: "widgets"}

// leaveAMess does what tests do and do not undo.
func leaveAMess(ctx context.Context, t *testing.T, kube kubernetes.Interface, dyn dynamic.Interface, images imageclient.Interface) {
	t.Helper()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mess"}}, metav1.CreateOptions{}))
	must(kube.CoreV1().ConfigMaps("mess").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}))
	must(kube.CoreV1().ConfigMaps("openshift").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "left"}}, metav1.CreateOptions{}))
	must(kube.CoreV1().Secrets("openshift-config").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret"}}, metav1.CreateOptions{}))
	must(kube.CoreV1().Events("openshift").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: "openshift", Name: "left"},
	}, metav1.CreateOptions{}))
	must(kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "mess"}}, metav1.CreateOptions{}))
	// A baseline object deleted: nothing here creates it again but the reset.
	if err := kube.RbacV1().ClusterRoles().Delete(ctx, "system:aggregate-to-edit", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := kube.CoreV1().Namespaces().Get(ctx, "openshift", metav1.GetOptions{})
	must(ns, err)
	ns.Labels["mess"] = "true"
	must(kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}))
	must(images.ImageV1().ImageStreams("openshift").Create(ctx, &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "mess"}}, metav1.CreateOptions{}))

	config := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "samples.operator.openshift.io/v1", "kind": "Config",
		"metadata": map[string]any{"name": "cluster", "finalizers": []any{"samples.operator.openshift.io/mess"}},
		"spec":     map[string]any{"managementState": "Managed"},
	}}
	must(dyn.Resource(schema.GroupVersionResource{Group: "samples.operator.openshift.io", Version: "v1", Resource: "configs"}).Create(ctx, config, metav1.CreateOptions{}))

	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.mess.example.com"},
		"spec": map[string]any{
			"group": "mess.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	must(dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{}))
	if err := waitEstablished(ctx, dyn, "widgets.mess.example.com"); err != nil {
		t.Fatal(err)
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "mess.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "finalizers": []any{"mess.example.com/keep"}},
	}}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(widgets).Namespace("mess").Create(ctx, widget, metav1.CreateOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("creating a widget: %v", err)
	}
}

func namespaceLabels(ctx context.Context, t *testing.T, kube kubernetes.Interface, name string) string {
	t.Helper()
	ns, err := kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for k, v := range ns.Labels {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}
