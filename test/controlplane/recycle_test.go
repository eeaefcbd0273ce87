package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// A control plane a test has filled, changed and left is handed to the next test holding what it
// held when first handed out, and nothing more: not the objects, not the changes, not the audit
// entries. Twice, with the same names, as tests that create the same objects would.
func TestARecycledControlPlaneHoldsOnlyItsBaseline(t *testing.T) {
	t.Parallel()
	ctx, cp := startWithBaseline(t)
	cachedHere := "resourcequotas"
	if cp.RealOpenShiftAPIServer() {
		cachedHere = "imagetagmirrorsets, resourcequotas"
	}
	kube := kubernetes.NewForConfigOrDie(cp.AdminConfig)
	dyn := dynamic.NewForConfigOrDie(cp.AdminConfig)
	images := imageclient.NewForConfigOrDie(cp.AdminConfig)
	// What a test sees of the baseline, copied: the reset updates its own record of an object
	// it creates again.
	want := map[storedObject]map[string]any{}
	// The cluster configuration's status too: the operator reads it (images.config's import mode).
	wantStatus := map[storedObject]any{}
	for k, obj := range cp.baseline.objects {
		want[k] = visibleContent(obj)
		if k.resource.Group == "config.openshift.io" {
			wantStatus[k] = runtime.DeepCopyJSONValue(obj.Object["status"])
		}
	}
	// With the real openshift-apiserver the baseline has images.config.openshift.io/cluster
	// (the server reads it); a test that sets its status must not leave that to the next.
	imageConfig := schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "images"}
	_, hasImageConfig := wantStatus[storedObject{resource: imageConfig, name: "cluster"}]
	if cp.RealOpenShiftAPIServer() && !hasImageConfig {
		t.Fatalf("the baseline has no images.config.openshift.io/cluster")
	}

	for round := 1; round <= 2; round++ {
		leaveAMess(ctx, t, kube, dyn, images)
		if hasImageConfig {
			img, err := dyn.Resource(imageConfig).Get(ctx, "cluster", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := unstructured.SetNestedField(img.Object, "PreserveOriginal", "status", "imageStreamImportMode"); err != nil {
				t.Fatal(err)
			}
			if _, err := dyn.Resource(imageConfig).UpdateStatus(ctx, img, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if events, err := cp.AuditEvents(AdminUser); err != nil || len(events) == 0 {
			t.Fatalf("round %d: the mess left no audit entry (%v)", round, err)
		}
		if round == 1 {
			checkWritesAreLoggedOnArrival(t, cp)
		}
		began := time.Now()
		if err := cp.recycle(ctx); err != nil {
			t.Fatalf("round %d: recycling: %v", round, err)
		}
		t.Logf("round %d: reset in %s", round, time.Since(began).Round(time.Millisecond))
		if !strings.Contains(cp.History(), "caches of "+cachedHere+" saw it") {
			t.Errorf("round %d: the reset did not wait for the caches of the kinds the test wrote:\n%s", round, cp.History())
		}
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
		var extra, missing, changed []string
		for k, obj := range now {
			if selfKept(k) {
				continue
			}
			was, ok := want[k]
			switch {
			case !ok:
				extra = append(extra, k.String())
			case !apiequality.Semantic.DeepEqual(was, visibleContent(obj)):
				changed = append(changed, k.String())
			case k.resource.Group == "config.openshift.io" && !apiequality.Semantic.DeepEqual(wantStatus[k], obj.Object["status"]):
				changed = append(changed, k.String()+" (status)")
			}
		}
		for k := range want {
			if _, ok := now[k]; !ok && !selfKept(k) {
				missing = append(missing, k.String())
			}
		}
		slices.Sort(changed)
		if len(extra)+len(missing)+len(changed) > 0 {
			t.Errorf("round %d: after the reset, not in the baseline: %v; gone from it: %v; differing from it: %v", round, extra, missing, changed)
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

// checkWritesAreLoggedOnArrival: kube-apiserver logs the RequestReceived stage of every write
// (what WritesInFlight reads) and of no read, and a write answered is no longer in flight.
func checkWritesAreLoggedOnArrival(t *testing.T, cp *ControlPlane) {
	t.Helper()
	raw, err := os.ReadFile(cp.AuditLogPath)
	if err != nil {
		t.Fatal(err)
	}
	received := map[string]bool{}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if e, ok := ParseAuditLine(line); ok && e.Stage == "RequestReceived" {
			received[e.ID] = true
		}
	}
	completed, err := cp.AuditEvents(AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	var writes int
	for _, e := range completed {
		switch {
		case e.IsWrite() && !received[e.ID]:
			t.Errorf("%s %s %s: no RequestReceived line", e.Verb, e.Resource, e.Name)
		case (e.Verb == "get" || e.Verb == "list") && received[e.ID]:
			t.Errorf("%s %s %s: a read logged on arrival", e.Verb, e.Resource, e.Name)
		}
		if e.IsWrite() {
			writes++
		}
	}
	if writes == 0 {
		t.Errorf("no write to check")
	}
	if inFlight, err := cp.WritesInFlight(AdminUser); err != nil || len(inFlight) > 0 {
		t.Errorf("answered writes still in flight: %v (%v)", inFlight, err)
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
	// A baseline object changed where only its content shows it: its name stays.
	view, err := kube.RbacV1().ClusterRoles().Get(ctx, "system:aggregate-to-view", metav1.GetOptions{})
	must(view, err)
	view.Rules = append(view.Rules, rbacv1.PolicyRule{APIGroups: []string{"mess.example.com"}, Resources: []string{"widgets"}, Verbs: []string{"get"}})
	metav1.SetMetaDataAnnotation(&view.ObjectMeta, "mess", "true")
	must(kube.RbacV1().ClusterRoles().Update(ctx, view, metav1.UpdateOptions{}))
	ns, err := kube.CoreV1().Namespaces().Get(ctx, "openshift", metav1.GetOptions{})
	must(ns, err)
	ns.Labels["mess"] = "true"
	must(kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}))
	must(images.ImageV1().ImageStreams("openshift").Create(ctx, &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "mess"}}, metav1.CreateOptions{}))
	// Kinds the servers see through informers: the reset waits for those caches (caches.go).
	must(kube.CoreV1().ResourceQuotas("openshift").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "mess"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"configmaps": resource.MustParse("100")}},
	}, metav1.CreateOptions{}))
	must(dyn.Resource(itmsResource).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "config.openshift.io/v1", "kind": "ImageTagMirrorSet",
		"metadata": map[string]any{"name": "mess"},
		"spec":     map[string]any{"imageTagMirrors": []any{map[string]any{"source": "mess.invalid", "mirrors": []any{closedMirror + "/mess"}}}},
	}}, metav1.CreateOptions{}))

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

// visibleContent is what a test can tell of an object: all of it but its status and the
// metadata the server keeps (uid, resourceVersion, generation, creation time, field managers).
func visibleContent(obj *unstructured.Unstructured) map[string]any {
	c := obj.DeepCopy().Object
	delete(c, "status")
	meta, _ := c["metadata"].(map[string]any)
	kept := map[string]any{}
	for _, f := range []string{"name", "namespace", "labels", "annotations", "finalizers", "ownerReferences"} {
		if v, ok := meta[f]; ok {
			kept[f] = v
		}
	}
	c["metadata"] = kept
	return c
}

// startWithBaseline starts a control plane with the default options and takes its baseline, as
// the prewarmer does; ctx ends with the test, 4 minutes after at the latest.
//
// The tests that start a control plane of their own (Start, startWithBaseline) run in parallel:
// run one after another they made this package the longest of `make test`'s first phase, mostly
// waiting on their servers. Those that put a prewarmer of their own in the package's place
// (StartForTest's) stay sequential, and go test runs them before any parallel one.
func startWithBaseline(t *testing.T) (context.Context, *ControlPlane) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	cp, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	if err := cp.takeBaseline(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx, cp
}

func requireRealOpenShiftAPIServer(t *testing.T) {
	t.Helper()
	if !HasOpenShiftBinary(os.Getenv(OpenShiftBinDirEnv), openShiftAPIServerName) {
		t.Skipf("needs the real openshift-apiserver (%s)", OpenShiftBinDirEnv)
	}
}

// A reset hands on only what it can vouch for: not a control plane that something of the test
// that had it still reaches after it ended (its operator, a CVO, any client of its), nor one
// with a server not running.
func TestAResetRefusesWhatItCannotVouchFor(t *testing.T) {
	t.Parallel()
	ctx, cp := startWithBaseline(t)

	t.Run("requests after the test ended", func(t *testing.T) {
		operator := kubernetes.NewForConfigOrDie(cp.OperatorConfig)
		cvoConfig := rest.CopyConfig(cp.AdminConfig)
		cvoConfig.UserAgent = "cluster-version-operator/v0.0.0"
		cvo := kubernetes.NewForConfigOrDie(cvoConfig)
		// The operator's informers and a CVO still applying, left running by the test.
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			for {
				_, _ = operator.CoreV1().ConfigMaps(OperatorNamespace).List(ctx, metav1.ListOptions{})
				_, _ = cvo.CoreV1().ConfigMaps("openshift").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "late-"}}, metav1.CreateOptions{})
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
		err := cp.recycle(ctx)
		close(stop)
		<-stopped
		if err == nil {
			t.Fatal("a reset that met requests of the operator and of a CVO after its test ended handed the control plane on")
		}
		// The refusal is one the test's own end can tell from the others, to fail that test.
		var late *lateRequestsError
		if !errors.As(err, &late) {
			t.Errorf("the refusal %q (%T) is not a lateRequestsError: the test that left them running would pass", err, err)
		}
		for _, who := range []string{OperatorUser, "cluster-version-operator"} {
			if !strings.Contains(err.Error(), who) {
				t.Errorf("the refusal %q does not name %s", err, who)
			}
		}
		if !strings.Contains(cp.History(), "not reset") {
			t.Errorf("the history does not record the refusal:\n%s", cp.History())
		}
		t.Logf("refused: %v", err)
	})

	refusedAtOnce := func(t *testing.T, server string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		began := time.Now()
		err := cp.recycle(ctx)
		if err == nil || !strings.Contains(err.Error(), server+" is not running") {
			t.Fatalf("recycling with %s stopped: %v, want a refusal saying it is not running", server, err)
		}
		if took := time.Since(began); took > time.Second {
			t.Errorf("the refusal took %s, want it at once", took)
		}
	}
	t.Run("openshift-apiserver stopped", func(t *testing.T) {
		if !cp.RealOpenShiftAPIServer() {
			t.Skipf("the stand-ins cannot be stopped (%s)", OpenShiftBinDirEnv)
		}
		if err := cp.StopOpenShiftAPIServer(); err != nil {
			t.Fatal(err)
		}
		refusedAtOnce(t, openShiftAPIServerName)
		if err := cp.StartOpenShiftAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("kube-apiserver stopped", func(t *testing.T) {
		// Killed: with openshift-apiserver connected it does not finish a graceful stop, and
		// waited 15 s for its SIGKILL all the same.
		cp.apiserver.kill()
		refusedAtOnce(t, "kube-apiserver")
	})
}

// A test that rolled out another allow-list for imports (RolloutImageConfig) leaves
// openshift-apiserver running with it, which no object holds: the reset restarts the server
// with the baseline's.
func TestAResetRestartsOpenShiftAPIServerWithTheBaselineAllowList(t *testing.T) {
	t.Parallel()
	requireRealOpenShiftAPIServer(t)
	ctx, cp := startWithBaseline(t)
	dyn := dynamic.NewForConfigOrDie(cp.AdminConfig)
	createStream := func() error {
		stream := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "image.openshift.io/v1", "kind": "ImageStream",
			"metadata": map[string]any{"name": "allowed", "namespace": "openshift"},
			"spec": map[string]any{"tags": []any{map[string]any{
				"name": "latest", "from": map[string]any{"kind": "DockerImage", "name": "registry.redhat.io/ubi9/ubi:latest"},
			}}},
		}}
		_, err := dyn.Resource(imageStreamResource).Namespace("openshift").Create(ctx, stream, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	if err := createStream(); err != nil {
		t.Fatalf("before any rollout: %v", err)
	}
	if err := cp.RolloutAllowedRegistriesForImport(ctx, []configv1.RegistryLocation{{DomainName: "quay.io"}}); err != nil {
		t.Fatal(err)
	}
	if err := createStream(); err == nil {
		t.Fatal("with only quay.io allowed, openshift-apiserver accepts a stream from registry.redhat.io: this test shows nothing")
	}
	before := cp.osa.pid()
	if err := cp.recycle(ctx); err != nil {
		t.Fatal(err)
	}
	if err := createStream(); err != nil {
		t.Errorf("after the reset, openshift-apiserver still enforces the test's allow-list: %v", err)
	}
	if cp.osa.pid() == before {
		t.Errorf("openshift-apiserver was not restarted")
	}
	if !strings.Contains(cp.History(), "restarted openshift-apiserver") {
		t.Errorf("the history does not record the restart:\n%s", cp.History())
	}
}

// The next test gets the control plane once the servers decide from the baseline, not just
// once storage holds it: openshift-apiserver's caches of the mirror sets and of the quotas on
// ImageStreams have seen the reset delete the test's. On a cluster they lag behind when the
// server's watches broke (kube-apiserver restarted: its informers list again after a backoff,
// 1.8 s and 5.6 s measured), but by chance, and sometimes not at all. Here a gate between the
// server's clients and kube-apiserver holds its watches while the test's objects are deleted, so
// its caches lag for certain, and until the wait has shown that it waits: it probes the caches
// again and again and does not end. (This test calls the wait the reset ends with directly, after
// deleting what the reset's passes would.)
func TestTheResetWaitsUntilTheServersCachesSeeIt(t *testing.T) {
	t.Parallel()
	requireRealOpenShiftAPIServer(t)
	ctx, cp := startWithBaseline(t)
	gate := startWatchGate(t, cp)
	cp.osaKubeconfig = gate.kubeconfig(t, cp)
	if err := cp.restartOpenShiftAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cp.waitAggregatedServed(ctx); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cp.AdminConfig)
	kube := kubernetes.NewForConfigOrDie(cp.AdminConfig)

	const source, mirror = "mess.invalid/probe", closedMirror + "/mess"
	itms := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "config.openshift.io/v1", "kind": "ImageTagMirrorSet",
		"metadata": map[string]any{"name": "mess"},
		"spec":     map[string]any{"imageTagMirrors": []any{map[string]any{"source": source, "mirrors": []any{mirror}}}},
	}}
	if _, err := dyn.Resource(itmsResource).Create(ctx, itms, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	zero := corev1.ResourceList{"openshift.io/imagestreams": resource.MustParse("0")}
	quota, err := kube.CoreV1().ResourceQuotas("openshift").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "mess"}, Spec: corev1.ResourceQuotaSpec{Hard: zero},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Admission judges by the status, which no quota controller fills in here.
	quota.Status = corev1.ResourceQuotaStatus{Hard: zero, Used: zero}
	if _, err := kube.CoreV1().ResourceQuotas("openshift").UpdateStatus(ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	mirrored := func() bool {
		isi := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "image.openshift.io/v1", "kind": "ImageStreamImport",
			"metadata": map[string]any{"name": "probe", "namespace": "openshift"},
			"spec": map[string]any{"import": false, "images": []any{
				map[string]any{"from": map[string]any{"kind": "DockerImage", "name": source + ":latest"}},
			}},
		}}
		answer, err := dyn.Resource(isiResource).Namespace("openshift").Create(ctx, isi, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		statuses, _, _ := unstructured.NestedSlice(answer.Object, "status", "images")
		return strings.Contains(fmt.Sprint(statuses), mirror)
	}
	quotaHolds := func() bool {
		stream := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "image.openshift.io/v1", "kind": "ImageStream",
			"metadata": map[string]any{"name": "probe", "namespace": "openshift"},
		}}
		_, err := dyn.Resource(imageStreamResource).Namespace("openshift").Create(ctx, stream, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return mirrored() && quotaHolds(), nil
	}); err != nil {
		t.Fatal("openshift-apiserver never saw the test's mirror set and quota: this test shows nothing")
	}
	gate.hold()
	// What the reset's passes do: storage back at the baseline.
	if err := dyn.Resource(itmsResource).Delete(ctx, "mess", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ResourceQuotas("openshift").Delete(ctx, "mess", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !mirrored() || !quotaHolds() {
		t.Fatal("openshift-apiserver saw the deletes through the held gate: this test shows nothing")
	}
	c, err := cp.recycleClients()
	if err != nil {
		t.Fatal(err)
	}
	probed := &probeCounter{probes: make(chan struct{})}
	probing := rest.CopyConfig(cp.harnessConfig)
	probing.Wrap(func(rt http.RoundTripper) http.RoundTripper { probed.next = rt; return probed })
	c.dyn = dynamic.NewForConfigOrDie(probing)
	kinds, err := cp.cachesToWaitFor()
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := cp.waitCachesSeeReset(ctx, c, kinds)
		waited <- err
	}()
	// Held, openshift-apiserver's caches never show the reset's markers: a wait that ends now,
	// before it has probed them a few times, has not waited for them.
	for probes := 0; probes < 3; {
		select {
		case err := <-waited:
			t.Fatalf("the wait for the caches ended (%v) after %d probe(s), while openshift-apiserver's watches were held: it did not wait for its caches to see the reset", err, probes)
		case <-probed.probes:
			probes++
		}
	}
	gate.release()
	began := time.Now()
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	t.Logf("the caches saw the reset %s after the gate opened", time.Since(began).Round(time.Millisecond))
	if mirrored() {
		t.Errorf("once the reset is over, openshift-apiserver still imports %s through the test's mirror set", source)
	}
	if quotaHolds() {
		t.Errorf("once the reset is over, openshift-apiserver still enforces the test's quota on ImageStreams")
	}
}
